#include "facade/prompt_facade.h"

#include <optional>

#include <agui_sync/prompt_render.h>

#include "facade/facade_json.h"
#include "json/json_escape.h"

namespace agui_sync {

namespace {

using nlohmann::json;

constexpr size_t kOptionsDepth = 4;

std::optional<Failure> invalid(const std::string& message) {
  return Failure{Code::InvalidOptions, "renderPromptJson: " + message, {}};
}

std::optional<Failure> readPointers(const json& opts, const char* name, std::vector<std::string>& target) {
  auto it = opts.find(name);
  if (it == opts.end() || it->is_null()) return std::nullopt;
  const auto* list = it->get_ptr<const json::array_t*>();
  if (list == nullptr) return invalid(std::string("option '") + name + "' must be an array of strings");
  for (const json& p : *list) {
    const auto* s = p.get_ptr<const std::string*>();
    if (s == nullptr) return invalid(std::string("option '") + name + "' must be an array of strings");
    target.push_back(*s);
  }
  return std::nullopt;
}

std::optional<Failure> readString(const json& opts, const char* name, std::string& target) {
  auto it = opts.find(name);
  if (it == opts.end() || it->is_null()) return std::nullopt;
  const auto* s = it->get_ptr<const std::string*>();
  if (s == nullptr) return invalid(std::string("option '") + name + "' must be a string");
  target = *s;
  return std::nullopt;
}

// untrusted: an array of pointers, or "auto" (RenderOptions::untrustedAuto).
std::optional<Failure> readUntrusted(const json& opts, RenderOptions& o) {
  auto it = opts.find("untrusted");
  if (it != opts.end() && it->is_string()) {
    if (*it != "auto") return invalid("option 'untrusted' must be an array of strings or \"auto\"");
    o.untrustedAuto = true;
    return std::nullopt;
  }
  return readPointers(opts, "untrusted", o.untrusted);
}

// ownership: {pointer: "user" | "agent" | "shared"}.
std::optional<Failure> readOwnership(const json& opts, RenderOptions& o) {
  auto it = opts.find("ownership");
  if (it == opts.end() || it->is_null()) return std::nullopt;
  const auto* rules = it->get_ptr<const json::object_t*>();
  if (rules == nullptr) return invalid("option 'ownership' must be an object of pointers to owners");
  for (const auto& [pointer, owner] : *rules) {
    const auto* name = owner.get_ptr<const std::string*>();
    if (name != nullptr && *name == "user") o.ownership.push_back({pointer, Owner::User});
    else if (name != nullptr && *name == "agent") o.ownership.push_back({pointer, Owner::Agent});
    else if (name != nullptr && *name == "shared") o.ownership.push_back({pointer, Owner::Shared});
    else return invalid("option 'ownership' must map pointers to \"user\", \"agent\" or \"shared\"");
  }
  return std::nullopt;
}

std::optional<Failure> readRenderOptions(const std::string& optionsJson, RenderOptions& o) {
  json opts = json::object();
  if (!optionsJson.empty()) {
    if (auto failure = parseBounded(optionsJson, kOptionsDepth, opts)) return failure;
  }
  if (!opts.is_object()) return invalid("options must be a JSON object");
  std::pair<const char*, std::vector<std::string>*> lists[] = {{"include", &o.include}, {"exclude", &o.exclude}};
  for (auto& [name, target] : lists)
    if (auto failure = readPointers(opts, name, *target)) return failure;
  if (auto failure = readUntrusted(opts, o)) return failure;
  if (auto failure = readOwnership(opts, o)) return failure;
  std::pair<const char*, size_t*> numbers[] = {{"maxBytes", &o.maxBytes},
                                               {"maxStringBytes", &o.maxStringBytes},
                                               {"maxArrayItems", &o.maxArrayItems},
                                               {"maxDepth", &o.maxDepth}};
  for (auto& [name, target] : numbers)
    if (auto failure = readPositive(opts, name, *target)) return failure;
  if (auto failure = readString(opts, "datamark", o.datamark)) return failure;
  return readString(opts, "tag", o.tag);
}

void appendStrings(std::string& out, const std::vector<std::string>& list) {
  out += '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ',';
    appendJsonString(out, list[i]);
  }
  out += ']';
}

std::string resultJson(const RenderResult& r) {
  std::string out = "{\"ok\":true,\"text\":";
  appendJsonString(out, r.text);
  out += ",\"bytes\":" + std::to_string(r.bytes) + ",\"truncated\":[";
  for (size_t i = 0; i < r.truncated.size(); ++i) {
    const Truncation& t = r.truncated[i];
    out += i ? ",{\"path\":" : "{\"path\":";
    appendJsonString(out, t.path);
    out += ",\"reason\":";
    appendJsonString(out, t.reason);
    out += ",\"droppedBytes\":" + std::to_string(t.droppedBytes) + "}";
  }
  out += "],\"untrustedPaths\":";
  appendStrings(out, r.untrustedPaths);
  const RenderLimits& l = r.applied;
  out += ",\"limits\":{\"maxStringBytes\":" + std::to_string(l.maxStringBytes) +
         ",\"maxArrayItems\":" + std::to_string(l.maxArrayItems) +
         ",\"maxObjectMembers\":" + std::to_string(l.maxObjectMembers) +
         ",\"maxDepth\":" + std::to_string(l.maxDepth) + "}}";
  return out;
}

}  // namespace

std::string renderPromptJson(const std::string& stateJson, const std::string& optionsJson) {
  RenderOptions options;
  if (auto failure = readRenderOptions(optionsJson, options)) return failureJson(*failure);
  json state;
  if (auto failure = parseBounded(stateJson, kPromptStateDepth, state)) return failureJson(*failure);
  RenderResult result;
  Failure failure;
  if (!renderStateForPrompt(state, options, result, &failure)) return failureJson(failure);
  return resultJson(result);
}

}  // namespace agui_sync
