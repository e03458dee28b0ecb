#include "facade/emitter_json.h"

#include <type_traits>

#include "facade/facade_json.h"
#include "json/json_write.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// An option of the wrong type is refused (invalid-options) rather than
// ignored, so that every binding gets the same verdict from here instead of
// checking types itself. Absent or null keeps the default.
template <typename T>
std::optional<std::string> readNumber(const json& o, const char* key, T& target, bool positive = false) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::nullopt;
  if constexpr (std::is_floating_point<T>::value) {
    if (!it->is_number()) return std::string("option '") + key + "' must be a number";
    target = it->get<double>();
  } else {
    if (!it->is_number_unsigned() || (positive && it->get<uint64_t>() == 0))
      return std::string("option '") + key + (positive ? "' must be a positive integer" : "' must be an integer >= 0");
    target = static_cast<T>(it->get<uint64_t>());
  }
  return std::nullopt;
}

std::optional<std::string> readEmitterNumbers(const json& opts, EmitterOptions& options) {
  std::optional<std::string> problem;
  auto check = [&](std::optional<std::string> p) {
    if (!problem) problem = std::move(p);
  };
  check(readNumber(opts, "startSeq", options.startSeq));
  check(readNumber(opts, "digestEvery", options.digestEvery));
  check(readNumber(opts, "snapshotRatio", options.snapshotRatio));
  check(readNumber(opts, "replayMaxEvents", options.replayMaxEvents));
  check(readNumber(opts, "replayMaxBytes", options.replayMaxBytes));
  check(readNumber(opts, "maxDepth", options.maxDepth, true));
  check(readNumber(opts, "editHistory", options.editHistory));
  check(readNumber(opts, "ackHistory", options.ackHistory));
  return problem;
}

}  // namespace

// {"ok":true[,"mode":mode],"events":[...]}
std::string eventsJson(const std::vector<json>& events, const char* mode) {
  std::string out = "{\"ok\":true,";
  if (mode) out += std::string("\"mode\":\"") + mode + "\",";
  out += "\"events\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    if (i) out.push_back(',');
    appendJson(events[i], out);
  }
  return out + "]}";
}

// App-supplied state or ops: the emitter's maxDepth (plus the envelope margin)
// is checked while parsing.
std::optional<Failure> parseValue(const std::string& text, size_t maxDepth, size_t margin, json& out) {
  std::optional<Failure> failure = parseBounded(text, maxDepth + margin, out);
  if (failure && failure->code == Code::LimitExceeded)
    failure->message = "value nests deeper than maxDepth (" + std::to_string(maxDepth) + ")";
  return failure;
}

EmitterOptions readEmitterOptions(const json& opts, std::string& problem) {
  EmitterOptions options;
  if (auto p = readEmitterNumbers(opts, options)) problem = *p;
  auto epoch = opts.find("epoch");
  if (epoch != opts.end() && epoch->is_string()) options.epoch = *epoch->get_ptr<const std::string*>();
  else if (epoch != opts.end() && !epoch->is_null() && problem.empty()) problem = "option 'epoch' must be a string";
  auto testAll = opts.find("testAll");
  if (testAll != opts.end() && testAll->is_boolean()) options.testAll = testAll->get<bool>();
  else if (testAll != opts.end() && !testAll->is_null() && problem.empty()) problem = "option 'testAll' must be a boolean";
  auto guarded = opts.find("guardedPaths");
  if (guarded != opts.end() && !guarded->is_null()) {
    bool strings = guarded->is_array();
    if (strings) {
      for (const auto& p : *guarded) {
        if (p.is_string()) options.guardedPaths.push_back(*p.get_ptr<const std::string*>());
        else strings = false;
      }
    }
    if (!strings && problem.empty()) problem = "option 'guardedPaths' must be an array of JSON Pointer strings";
  }
  return options;
}

bool readSeqList(const json& request, const char* key, std::vector<uint64_t>& skip) {
  auto held = request.find(key);
  if (held == request.end() || held->is_null()) return true;
  if (!held->is_array()) return false;
  for (const json& s : *held) {
    if (!s.is_number_unsigned() || s.get<uint64_t>() > kMaxSeq) return false;
    skip.push_back(s.get<uint64_t>());
  }
  return true;
}

bool needsSnapshot(const json& position, const std::string& ours) {
  auto seq = position.find("lastSeq");
  if (seq == position.end() || seq->is_null()) return true;
  auto epoch = position.find("epoch");
  const bool noEpoch = epoch == position.end() || epoch->is_null();
  if (noEpoch ? !ours.empty() : *epoch != ours) return true;
  auto reason = position.find("reason");
  if (reason == position.end() || !reason->is_string()) return false;
  auto code = codeFromName(reason->get<std::string>());
  return code && inCategory(*code, kResync) && codeInfo(*code).cure == Cure::Snapshot;
}

const char* catchUpMode(const std::vector<json>& events) {
  if (events.empty()) return "current";
  const std::string type = events.front().value("type", "");
  const std::string suffix = "_SNAPSHOT";
  const bool snapshot = type.size() > suffix.size() && type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0;
  return snapshot ? "snapshot" : "replay";
}

}  // namespace agui_sync
