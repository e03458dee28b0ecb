#pragma once
// JSON string escaping: the one writer of a quoted string for the facades'
// hand-written JSON, RFC 8785 canonical form and the Python binding's JSON
// writer. Its output is JSON.stringify's and RFC 8785's (section 3.2.2.2).
#include <string>
#include <string_view>

namespace agui_sync {

// Appends `s` as a quoted JSON string: '"', '\\' and C0 controls escaped (the
// short forms \b \t \n \f \r where JSON has them, else lowercase \u00xx), every
// other byte copied verbatim (callers pass valid UTF-8).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace agui_sync
