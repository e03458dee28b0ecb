#include "facade/facade_json.h"

#include "json/json_escape.h"
#include "json/json_reader.h"

namespace agui_sync {

std::string failureJson(Code code, const std::string& message, std::optional<size_t> opIndex) {
  std::string out = "{\"ok\":false,\"code\":";
  appendJsonString(out, codeName(code));
  out += ",\"message\":";
  appendJsonString(out, message);
  if (opIndex) out += ",\"opIndex\":" + std::to_string(*opIndex);
  return out + "}";
}

std::string failureJson(const Failure& failure) { return failureJson(failure.code, failure.message, failure.opIndex); }

std::optional<Failure> parseBounded(std::string_view text, size_t maxDepth, nlohmann::json& out) {
  bool tooDeep = false;
  std::string error;
  if (JsonReader::parse(text, maxDepth, out, &error, &tooDeep)) return std::nullopt;
  if (tooDeep) return Failure{Code::LimitExceeded, "value nests deeper than " + std::to_string(maxDepth) + " levels", {}};
  return Failure{Code::InvalidJson, "not valid JSON (" + error + ")", {}};
}

std::optional<Failure> readPositive(const nlohmann::json& options, const char* name, size_t& target) {
  auto it = options.find(name);
  if (it == options.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_unsigned() || it->get<uint64_t>() == 0)
    return Failure{Code::InvalidOptions, std::string("option '") + name + "' must be a positive integer", {}};
  target = static_cast<size_t>(it->get<uint64_t>());
  return std::nullopt;
}

}  // namespace agui_sync
