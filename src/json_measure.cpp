#include "json_measure.h"

#include <cstdio>

namespace agui_sync {

size_t valueDepth(const nlohmann::json& value) {
  if (!value.is_structured()) return 0;
  size_t deepest = 0;
  if (value.is_object()) {
    for (const auto& kv : *value.get_ptr<const nlohmann::json::object_t*>()) {
      size_t d = valueDepth(kv.second);
      if (d > deepest) deepest = d;
    }
  } else {
    for (const auto& item : *value.get_ptr<const nlohmann::json::array_t*>()) {
      size_t d = valueDepth(item);
      if (d > deepest) deepest = d;
    }
  }
  return deepest + 1;
}

size_t decimalDigits(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

size_t approxSize(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return 4;
    case nlohmann::json::value_t::boolean: return value.get<bool>() ? 4 : 5;
    case nlohmann::json::value_t::number_unsigned: return decimalDigits(value.get<uint64_t>());
    case nlohmann::json::value_t::number_integer: {
      int64_t v = value.get<int64_t>();
      return v < 0 ? 1 + decimalDigits(static_cast<uint64_t>(-(v + 1)) + 1) : decimalDigits(static_cast<uint64_t>(v));
    }
    case nlohmann::json::value_t::number_float: return 12;
    case nlohmann::json::value_t::string: return value.get_ptr<const std::string*>()->size() + 2;
    case nlohmann::json::value_t::array: {
      size_t n = 2;
      for (const auto& item : *value.get_ptr<const nlohmann::json::array_t*>()) n += approxSize(item) + 1;
      return n;
    }
    case nlohmann::json::value_t::object: {
      size_t n = 2;
      for (const auto& kv : *value.get_ptr<const nlohmann::json::object_t*>())
        n += kv.first.size() + 4 + approxSize(kv.second);
      return n;
    }
    default: return 0;
  }
}

}  // namespace agui_sync
