#include "json/json_pointer.h"

#include <algorithm>

namespace agui_sync {

bool parsePointer(std::string_view pointer, Tokens& tokens, std::string& error) {
  tokens.clear();
  if (pointer.empty()) return true;
  if (pointer.front() != '/') {
    error = "JSON Pointer must be empty or start with '/'";
    return false;
  }
  // One allocation for the token list, and unescaped runs appended whole:
  // this runs for every op of every delta.
  tokens.reserve(static_cast<size_t>(std::count(pointer.begin(), pointer.end(), '/')));
  size_t start = 1;
  while (true) {
    const size_t end = std::min(pointer.find('/', start), pointer.size());
    const std::string_view raw = pointer.substr(start, end - start);
    std::string& token = tokens.emplace_back();
    for (size_t tilde = raw.find('~'), runStart = 0;; tilde = raw.find('~', runStart)) {
      if (tilde == std::string_view::npos) {
        token.append(raw.data() + runStart, raw.size() - runStart);
        break;
      }
      token.append(raw.data() + runStart, tilde - runStart);
      const char next = tilde + 1 < raw.size() ? raw[tilde + 1] : '\0';
      if (next != '0' && next != '1') {
        tokens.clear();
        error = "JSON Pointer has '~' not followed by '0' or '1'";
        return false;
      }
      token.push_back(next == '0' ? '~' : '/');
      runStart = tilde + 2;
    }
    if (end == pointer.size()) break;
    start = end + 1;
  }
  return true;
}

bool parseArrayIndex(std::string_view token, size_t& index) {
  // 2^53 - 1 has 16 digits; anything longer cannot be a real index and could overflow.
  if (token.empty() || token.size() > 16) return false;
  if (token.size() > 1 && token[0] == '0') return false;
  size_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  index = value;
  return true;
}

void appendPointerToken(std::string& out, std::string_view token) {
  out.push_back('/');
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
}

std::string formatPointer(const Tokens& tokens, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < tokens.size(); ++i) appendPointerToken(out, tokens[i]);
  return out;
}

namespace {

template <typename Json>
Json* walk(Json& root, const Tokens& tokens, size_t count, std::string* error) {
  Json* node = &root;
  for (size_t i = 0; i < count; ++i) {
    const std::string& tok = tokens[i];
    if (node->is_object()) {
      auto* obj = node->template get_ptr<typename std::conditional<std::is_const<Json>::value,
          const nlohmann::json::object_t*, nlohmann::json::object_t*>::type>();
      auto it = obj->find(tok);
      if (it == obj->end()) {
        if (error) *error = "no member '" + tok + "' at " + formatPointer(tokens, i);
        return nullptr;
      }
      node = &it->second;
    } else if (node->is_array()) {
      auto* arr = node->template get_ptr<typename std::conditional<std::is_const<Json>::value,
          const nlohmann::json::array_t*, nlohmann::json::array_t*>::type>();
      size_t idx = 0;
      if (!parseArrayIndex(tok, idx)) {
        if (error) *error = "invalid array index '" + tok + "' at " + formatPointer(tokens, i);
        return nullptr;
      }
      if (idx >= arr->size()) {
        if (error) *error = "array index " + tok + " out of range at " + formatPointer(tokens, i);
        return nullptr;
      }
      node = &(*arr)[idx];
    } else {
      if (error) *error = "cannot index into a scalar at " + formatPointer(tokens, i);
      return nullptr;
    }
  }
  return node;
}

}  // namespace

nlohmann::json* resolvePointer(nlohmann::json& root, const Tokens& tokens, size_t count, std::string* error) {
  return walk(root, tokens, count, error);
}

const nlohmann::json* resolvePointer(const nlohmann::json& root, const Tokens& tokens, size_t count,
                                     std::string* error) {
  return walk(root, tokens, count, error);
}

}  // namespace agui_sync
