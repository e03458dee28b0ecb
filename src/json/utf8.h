#pragma once
// UTF-8 well-formedness (Unicode table 3-7): the check and the repair that keep
// values the wire cannot carry out of the events the emitter sends.
#include <cstddef>
#include <string>
#include <string_view>

namespace agui_sync {

// Length of the well-formed UTF-8 sequence at s[i], 0 if none starts there.
size_t utf8Length(std::string_view s, size_t i);
bool validUtf8(const std::string& s);
// Each byte that does not start a well-formed sequence becomes U+FFFD.
std::string repairUtf8(const std::string& s);

}  // namespace agui_sync
