#pragma once
// RFC 6901 JSON Pointer: parsing, escaping and strict array-index rules.
// Exception-free; errors are returned, never thrown.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace agui_sync {

using Tokens = std::vector<std::string>;

// Splits `pointer` into unescaped reference tokens. "" is the whole document.
// Fails (returns false, sets `error`) when a non-empty pointer does not start
// with '/' or contains '~' not followed by '0' or '1'.
bool parsePointer(std::string_view pointer, Tokens& tokens, std::string& error);

// Number of reference tokens in a JSON Pointer ("" = 0), without parsing it.
inline size_t pointerTokens(std::string_view p) {
  size_t n = 0;
  for (char c : p) n += c == '/';
  return n;
}

// RFC 6901 section 4 array index: "0" or digits without a leading zero. "-",
// negative, signed, fractional or over-long tokens are rejected.
bool parseArrayIndex(std::string_view token, size_t& index);

// Inverse of parsePointer (escapes '~' and '/').
std::string formatPointer(const Tokens& tokens, size_t count);
// Appends "/" and `token` escaped: one step of formatPointer, for walks that
// build a pointer as they go.
void appendPointerToken(std::string& out, std::string_view token);
inline std::string formatPointer(const Tokens& tokens) { return formatPointer(tokens, tokens.size()); }

// Walks the first `count` tokens from `root`. Returns nullptr (and why) when a
// step is missing, indexes an array badly, or goes through a scalar.
nlohmann::json* resolvePointer(nlohmann::json& root, const Tokens& tokens, size_t count,
                               std::string* error = nullptr);
const nlohmann::json* resolvePointer(const nlohmann::json& root, const Tokens& tokens, size_t count,
                                     std::string* error = nullptr);

}  // namespace agui_sync
