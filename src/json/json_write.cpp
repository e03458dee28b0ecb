#include "json/json_write.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "json/json_escape.h"

namespace agui_sync {

using json = nlohmann::json;

size_t writeJsonFloat(double value, char (&buf)[kJsonFloatChars]) {
  if (!std::isfinite(value)) {
    std::memcpy(buf, "null", 4);
    return 4;
  }
  return static_cast<size_t>(nlohmann::detail::to_chars(buf, buf + kJsonFloatChars, value) - buf);
}

namespace {

template <typename Int>
void appendInteger(Int value, std::string& out) {
  char buf[24];
  out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, value).ptr - buf));
}

}  // namespace

void appendJson(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& kv : *value.get_ptr<const json::object_t*>()) {
        if (!first) out.push_back(',');
        first = false;
        appendJsonString(out, kv.first);
        out.push_back(':');
        appendJson(kv.second, out);
      }
      out.push_back('}');
      return;
    }
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : *value.get_ptr<const json::array_t*>()) {
        if (!first) out.push_back(',');
        first = false;
        appendJson(item, out);
      }
      out.push_back(']');
      return;
    }
    case json::value_t::string: appendJsonString(out, *value.get_ptr<const json::string_t*>()); return;
    case json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case json::value_t::number_integer: appendInteger(value.get<int64_t>(), out); return;
    case json::value_t::number_unsigned: appendInteger(value.get<uint64_t>(), out); return;
    case json::value_t::number_float: {
      char buf[kJsonFloatChars];
      out.append(buf, writeJsonFloat(value.get<double>(), buf));
      return;
    }
    default:
      // null; binary and discarded values never come from JSON text.
      out += "null";
      return;
  }
}

std::string jsonText(const json& value) {
  std::string out;
  appendJson(value, out);
  return out;
}

}  // namespace agui_sync
