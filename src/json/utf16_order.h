#pragma once
// RFC 8785 section 3.2.3 property order: strings compared by their UTF-16 code
// units, without transcoding. Shared by the canonical writer and the prompt
// renderer, which must order keys identically.
#include <string_view>

namespace agui_sync {

// True when `a` sorts before `b` in UTF-16 code-unit order. A byte that does not
// start a well-formed UTF-8 sequence sorts after every character (by its value),
// so the order stays a strict weak order for any bytes.
bool utf16Less(std::string_view a, std::string_view b);

}  // namespace agui_sync
