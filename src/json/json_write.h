#pragma once
// The engine's one writer of compact JSON text from a parsed value, in place of
// nlohmann's dump(): the same bytes dump() writes for every value the engine
// holds (object keys in map order, floats by nlohmann's shortest round-trip
// printer with its ".0" and "e+NN", strings escaped as appendJsonString does,
// which is dump()'s escaping with ensure_ascii off). Why not dump(): its
// serializer escapes controls with snprintf, and printf brings libc's whole
// formatter and long-double arithmetic into the browser's WebAssembly (issue
// 27: ~4 KB gzipped). Strings are copied as they are: callers hold valid UTF-8
// (every string the engine parsed was checked on the way in).
#include <string>

#include <nlohmann/json.hpp>

namespace agui_sync {

void appendJson(const nlohmann::json& value, std::string& out);
std::string jsonText(const nlohmann::json& value);

// A float as dump() prints it ("null" when not finite) written into `buf`:
// its length. Also what json_measure counts, without building a string.
constexpr size_t kJsonFloatChars = 64;
size_t writeJsonFloat(double value, char (&buf)[kJsonFloatChars]);

}  // namespace agui_sync
