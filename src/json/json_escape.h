#pragma once
// JSON string escaping for the hand-written JSON the facades return.
#include <string>
#include <string_view>

namespace agui_sync {

// Appends `s` as a quoted JSON string: '"', '\\' and C0 controls escaped, every
// other byte copied verbatim (callers pass valid UTF-8).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace agui_sync
