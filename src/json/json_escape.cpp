#include "json/json_escape.h"

#include "json/swar.h"

namespace agui_sync {

void appendJsonString(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  // Runs that need no escaping are appended at once, found eight bytes at a
  // time (per-character work was a visible cost per event in WebAssembly).
  size_t runStart = 0;
  for (size_t i = 0; i < s.size();) {
    if (s.size() - i >= 8) {
      const uint64_t special = swar::hasJsonSpecial(swar::load64(s.data() + i));
      if (special == 0) {
        i += 8;
        continue;
      }
      if (swar::kFirstFlaggedExact) i += swar::firstFlagged(special);
    }
    const unsigned char c = static_cast<unsigned char>(s[i++]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + runStart, i - 1 - runStart);
    runStart = i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
  }
  out.append(s.data() + runStart, s.size() - runStart);
  out.push_back('"');
}

}  // namespace agui_sync
