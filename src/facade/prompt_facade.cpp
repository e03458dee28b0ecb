#include "facade/prompt_facade.h"

#include <algorithm>
#include <cstdint>
#include <memory>
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
  // userWritten: the pointers client edits wrote (StateEmitter::provenance()),
  // read with untrusted "auto" like `ownership`'s user rules.
  std::pair<const char*, std::vector<std::string>*> lists[] = {
      {"include", &o.include}, {"exclude", &o.exclude}, {"userWritten", &o.userWritten}};
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

void appendNumber(std::string& out, const char* name, size_t n) {
  out += name;
  out += std::to_string(n);
}

// Everything of a result but the text: {"ok":true,"bytes":n,...,"limits":{...}}
// with `textMember` (",\"text\":...") after "ok" when given.
std::string resultJson(const RenderResult& r, const std::string& textMember) {
  std::string out = "{\"ok\":true";
  out += textMember;
  appendNumber(out, ",\"bytes\":", r.bytes);
  out += ",\"truncated\":[";
  for (size_t i = 0; i < r.truncated.size(); ++i) {
    const Truncation& t = r.truncated[i];
    out += i ? ",{\"path\":" : "{\"path\":";
    appendJsonString(out, t.path);
    out += ",\"reason\":";
    appendJsonString(out, t.reason);
    appendNumber(out, ",\"droppedBytes\":", t.droppedBytes);
    out += '}';
  }
  out += "],\"untrustedPaths\":";
  appendStrings(out, r.untrustedPaths);
  const RenderLimits& l = r.applied;
  appendNumber(out, ",\"limits\":{\"maxStringBytes\":", l.maxStringBytes);
  appendNumber(out, ",\"maxArrayItems\":", l.maxArrayItems);
  appendNumber(out, ",\"maxObjectMembers\":", l.maxObjectMembers);
  appendNumber(out, ",\"maxDepth\":", l.maxDepth);
  out += "},\"preamble\":";
  appendJsonString(out, r.preamble);
  out += '}';
  return out;
}

// The render every entry point shares: false with the failure's JSON in `failed`.
bool renderFromJson(std::string_view stateJson, const json* parsed, const std::string& optionsJson,
                    const std::vector<std::string>* userWritten, RenderResult& result, std::string& failed) {
  RenderOptions options;
  json state;
  std::optional<Failure> failure = readRenderOptions(optionsJson, options);
  if (!failure && userWritten != nullptr && options.userWritten.empty()) options.userWritten = *userWritten;
  if (!failure && parsed == nullptr) failure = parseBounded(stateJson, kPromptStateDepth, state);
  if (!failure) {
    Failure refused;
    if (renderStateForPrompt(parsed ? *parsed : state, options, result, &refused)) return true;
    failure = refused;
  }
  failed = failureJson(*failure);
  return false;
}

// The success object without "text", a '\n', then the text as it is.
std::string partsOf(const RenderResult& result) {
  std::string out = resultJson(result, std::string());
  out.reserve(out.size() + 1 + result.text.size());
  out += '\n';
  out += result.text;
  return out;
}

// The binding's buffers (one set per WebAssembly instance, which is
// single-threaded): the state's bytes, uninitialized so that a large state is
// not zero-filled first, and the last result as [uint32 LE length][bytes].
struct Scratch {
  std::unique_ptr<char[]> input;
  size_t inputCapacity = 0;
  std::string result;
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

// Buffers above this are freed once used, so one large state does not pin its
// size for the instance's life.
constexpr size_t kKeptScratchBytes = 1 << 20;

}  // namespace

std::string renderPromptJson(const std::string& stateJson, const std::string& optionsJson) {
  RenderResult result;
  std::string failed;
  if (!renderFromJson(stateJson, nullptr, optionsJson, nullptr, result, failed)) return failed;
  std::string text = ",\"text\":";
  appendJsonString(text, result.text);
  return resultJson(result, text);
}

std::string renderPromptParts(std::string_view stateJson, const std::string& optionsJson) {
  RenderResult result;
  std::string failed;
  if (!renderFromJson(stateJson, nullptr, optionsJson, nullptr, result, failed)) return failed;
  return partsOf(result);
}

std::string renderPromptPartsOf(const json& state, const std::string& optionsJson,
                                const std::vector<std::string>& userWritten) {
  RenderResult result;
  std::string failed;
  if (!renderFromJson({}, &state, optionsJson, &userWritten, result, failed)) return failed;
  return partsOf(result);
}

char* promptInputBuffer(size_t n) {
  Scratch& s = scratch();
  if (n > s.inputCapacity) {
    s.input.reset(new char[n]);
    s.inputCapacity = n;
  }
  return s.input.get();
}

const char* renderPromptInput(size_t n, const std::string& optionsJson) {
  Scratch& s = scratch();
  std::string parts = renderPromptParts(std::string_view(s.input.get(), std::min(n, s.inputCapacity)), optionsJson);
  if (s.inputCapacity > kKeptScratchBytes) {
    s.input.reset();
    s.inputCapacity = 0;
  }
  if (s.result.capacity() > kKeptScratchBytes) std::string().swap(s.result);
  const uint32_t length = static_cast<uint32_t>(parts.size());
  s.result.assign(4, '\0');
  for (int i = 0; i < 4; ++i) s.result[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  s.result += parts;
  return s.result.data();
}

}  // namespace agui_sync
