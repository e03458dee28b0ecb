#pragma once
// ECMAScript Number::toString for doubles (radix 10), as RFC 8785 section
// 3.2.2.3 requires for canonical JSON: the shortest decimal that reads back as
// the same double, laid out the way JavaScript prints it (1e21, 0.000001,
// 1.5e-7). Exception-free; identical natively and in WebAssembly.
#include <string>

namespace agui_sync {

// Appends the ECMAScript text of `v`. -0 prints as "0"; NaN and Infinity, which
// JSON cannot hold, print as "null" (as nlohmann's dump() does) so that the
// output is always valid, deterministic JSON.
void appendEcmaNumber(double v, std::string& out);

}  // namespace agui_sync
