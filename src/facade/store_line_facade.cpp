#include "facade/store_line_facade.h"

#include <utility>
#include <vector>

#include <agui_sync/state_emitter.h>

#include "facade/facade_json.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

constexpr size_t kEnvelopeDepth = 4;  // an event around the state (as emitter_facade.cpp)

// A log cap: an integer >= 0, as the emitter takes its replay caps (0: a write
// always carries the state, since the log keeps nothing it could be built from).
std::optional<Failure> readCap(const json& opts, const char* name, size_t& target) {
  auto it = opts.find(name);
  if (it == opts.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_unsigned()) {
    return Failure{Code::InvalidOptions, std::string("option '") + name + "' must be an integer >= 0", std::nullopt};
  }
  target = static_cast<size_t>(it->get<uint64_t>());
  return std::nullopt;
}

std::optional<Failure> readOptions(const std::string& text, bool& incremental, EmitterOptions& caps) {
  json opts;
  if (auto failure = parseBounded(text.empty() ? "{}" : text, 8, opts)) return failure;
  if (!opts.is_object()) return Failure{Code::InvalidOptions, "store line options must be an object", std::nullopt};
  auto it = opts.find("incremental");
  if (it != opts.end() && !it->is_null()) {
    if (!it->is_boolean()) return Failure{Code::InvalidOptions, "option incremental must be a boolean", std::nullopt};
    incremental = it->get<bool>();
  }
  if (auto failure = readCap(opts, "replayMaxEvents", caps.replayMaxEvents)) return failure;
  if (auto failure = readCap(opts, "replayMaxBytes", caps.replayMaxBytes)) return failure;
  return readPositive(opts, "maxDepth", caps.maxDepth);
}

std::string dumpSafe(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::optional<Failure> invalidLine(const char* why) {
  return Failure{Code::InvalidJson, std::string("a stored line ") + why, std::nullopt};
}

// The line's log, each event parsed from its text and counted in that text's bytes.
std::optional<Failure> readLog(const json& texts, size_t maxDepth, std::vector<LoggedEvent>& log) {
  if (!texts.is_array()) return invalidLine("needs events: an array of JSON texts");
  log.reserve(texts.size());
  for (const auto& text : texts) {
    if (!text.is_string()) return invalidLine("has an event that is not a JSON text");
    LoggedEvent logged;
    logged.bytes = text.get_ref<const std::string&>().size();
    if (auto failure = parseBounded(text.get_ref<const std::string&>(), maxDepth + kEnvelopeDepth + 2, logged.event)) {
      return failure;
    }
    log.push_back(std::move(logged));
  }
  return std::nullopt;
}

}  // namespace

StoreLineFacade::StoreLineFacade(const std::string& optionsJson) {
  bool incremental = true;
  EmitterOptions caps;  // the emitter's defaults: the log is trimmed as its replay ring
  if (auto failure = readOptions(optionsJson, incremental, caps)) {
    initResult_ = failureJson(*failure);
    return;
  }
  writes_ = StateWrites(incremental, caps.replayMaxEvents, caps.replayMaxBytes);
  maxDepth_ = caps.maxDepth;
  initResult_ = okJson();
}

std::string StoreLineFacade::open(const std::string& lineJson) {
  head_.clear();
  json line;
  if (auto failure = parseBounded(lineJson, 4, line)) return failureJson(*failure);
  auto state = line.is_object() ? line.find("state") : line.end();
  auto stateSeq = line.is_object() ? line.find("stateSeq") : line.end();
  if (!line.is_object() || state == line.end() || !state->is_string()) return failureJson(*invalidLine("needs state: a JSON text"));
  if (stateSeq == line.end() || !stateSeq->is_number_unsigned()) return failureJson(*invalidLine("needs stateSeq >= 0"));
  json value;
  if (auto failure = parseBounded(state->get_ref<const std::string&>(), maxDepth_ + kEnvelopeDepth, value)) {
    return failureJson(*failure);
  }
  std::vector<LoggedEvent> log;
  auto events = line.find("events");
  if (events != line.end()) {
    if (auto failure = readLog(*events, maxDepth_, log)) return failureJson(*failure);
  }
  LineHead head = lineHead(std::move(value), stateSeq->get<uint64_t>(), log, maxDepth_);
  if (head.failure) return failureJson(*head.failure);
  writes_.restart(head.after);
  head_ = dumpSafe(head.state);
  committed_ = std::move(head.state);
  committedKnown_ = true;
  return R"({"ok":true,"events":)" + std::to_string(head.after.events) + R"(,"bytes":)" +
         std::to_string(head.after.bytes) + "}";
}

std::string StoreLineFacade::headStateJson() {
  std::string out = std::move(head_);
  head_.clear();
  return out;
}

std::string StoreLineFacade::seed(const std::string& stateJson) {
  json state;
  if (auto failure = parseBounded(stateJson, maxDepth_ + kEnvelopeDepth, state)) return failureJson(*failure);
  committed_ = std::move(state);
  committedKnown_ = true;
  return okJson();
}

// The batch's events move the committed state as they moved the engine that
// computed them (lineHead's rule, from the state before the batch).
bool StoreLineFacade::advance(const std::string& eventsJson) {
  json events;
  if (!committedKnown_ || parseBounded(eventsJson, maxDepth_ + kEnvelopeDepth + 3, events) || !events.is_array()) {
    committedKnown_ = false;
    return false;
  }
  std::vector<LoggedEvent> batch;
  batch.reserve(events.size());
  for (auto& event : events) batch.push_back(LoggedEvent{std::move(event), 0});
  LineHead head = lineHead(std::move(committed_), 0, batch, maxDepth_);
  committedKnown_ = !head.failure;
  committed_ = committedKnown_ ? std::move(head.state) : json();
  return committedKnown_;
}

std::string StoreLineFacade::committedStateJson() const { return committedKnown_ ? dumpSafe(committed_) : ""; }

}  // namespace agui_sync
