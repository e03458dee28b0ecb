#include "json_pointer.h"

namespace agui_sync {

bool parsePointer(std::string_view pointer, Tokens& tokens, std::string& error) {
  tokens.clear();
  if (pointer.empty()) return true;
  if (pointer.front() != '/') {
    error = "JSON Pointer must be empty or start with '/'";
    return false;
  }
  std::string current;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(current));
      current.clear();
      continue;
    }
    char c = pointer[i];
    if (c == '~') {
      char next = i + 1 < pointer.size() ? pointer[i + 1] : '\0';
      if (next == '0') current.push_back('~');
      else if (next == '1') current.push_back('/');
      else {
        error = "JSON Pointer has '~' not followed by '0' or '1'";
        return false;
      }
      ++i;
    } else {
      current.push_back(c);
    }
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

std::string formatPointer(const Tokens& tokens, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < tokens.size(); ++i) {
    out.push_back('/');
    for (char c : tokens[i]) {
      if (c == '~') out += "~0";
      else if (c == '/') out += "~1";
      else out.push_back(c);
    }
  }
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
