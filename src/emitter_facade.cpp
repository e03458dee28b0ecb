#include "emitter_facade.h"

#include "event_decoder.h"
#include "json_reader.h"
#include "options.h"
#include "outcome_json.h"
#include "state_emitter.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// Parses app-supplied JSON with the same depth guard the receiver uses, so a
// hostile value cannot exhaust the stack in the diff.
bool parseBounded(const std::string& text, size_t maxDepth, json& out, std::string& error) {
  bool tooDeep = false;
  if (JsonReader::parse(text, maxDepth + 4, out, nullptr, &tooDeep)) return true;
  error = tooDeep ? "value nests deeper than maxDepth" : "not valid JSON";
  return false;
}

std::string failure(const std::string& error) {
  std::string out = "{\"ok\":false,\"error\":";
  appendJsonString(out, error);
  return out + "}";
}

std::string eventsJson(const std::vector<json>& events, bool withOk) {
  std::string out = withOk ? "{\"ok\":true,\"events\":[" : "{\"events\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    if (i) out.push_back(',');
    out += events[i].dump();
  }
  return out + "]}";
}

template <typename T>
void readNumber(const json& o, const char* key, T& target) {
  auto it = o.find(key);
  if (it != o.end() && it->is_number()) {
    if constexpr (std::is_floating_point<T>::value) target = it->get<double>();
    else if (it->is_number_unsigned()) target = static_cast<T>(it->get<uint64_t>());
  }
}

}  // namespace

EmitterFacade::EmitterFacade(const std::string& optionsJson) {
  EmitterOptions options;
  json initial = json::object();
  json opts = json::object();
  if (!optionsJson.empty()) {
    std::string ignored;
    if (!parseBounded(optionsJson, 1024, opts, ignored)) opts = json(json::value_t::discarded);
  }
  if (opts.is_discarded() || !opts.is_object()) {
    initError_ = "options must be a JSON object";
    opts = json::object();
  }
  readNumber(opts, "startSeq", options.startSeq);
  readNumber(opts, "digestEvery", options.digestEvery);
  readNumber(opts, "snapshotRatio", options.snapshotRatio);
  readNumber(opts, "replayMaxEvents", options.replayMaxEvents);
  readNumber(opts, "replayMaxBytes", options.replayMaxBytes);
  readNumber(opts, "maxDepth", options.maxDepth);
  auto epoch = opts.find("epoch");
  if (epoch != opts.end() && epoch->is_string()) options.epoch = *epoch->get_ptr<const std::string*>();
  auto testAll = opts.find("testAll");
  if (testAll != opts.end() && testAll->is_boolean()) options.testAll = testAll->get<bool>();
  auto guarded = opts.find("guardedPaths");
  if (guarded != opts.end() && guarded->is_array())
    for (const auto& p : *guarded)
      if (p.is_string()) options.guardedPaths.push_back(*p.get_ptr<const std::string*>());
  auto init = opts.find("initialState");
  if (init != opts.end() && !init->is_null()) initial = std::move(*init);
  emitter_ = std::make_unique<StateEmitter>(options, std::move(initial));
  if (initError_.empty()) initError_ = emitter_->configError();
}

EmitterFacade::~EmitterFacade() = default;

std::string EmitterFacade::update(const std::string& stateJson) {
  json state;
  std::string error;
  if (!parseBounded(stateJson, emitter_->options().maxDepth, state, error)) return failure(error);
  std::vector<json> events = emitter_->update(std::move(state));
  if (events.empty() && !emitter_->lastError().empty()) return failure(emitter_->lastError());
  return eventsJson(events, true);
}

std::string EmitterFacade::patch(const std::string& opsJson) {
  json ops;
  std::string error;
  if (!parseBounded(opsJson, emitter_->options().maxDepth + 2, ops, error)) return failure(error);
  PatchOutcome r = emitter_->patch(std::move(ops));
  if (!r.ok()) {
    std::string out = "{\"ok\":false,\"code\":";
    appendJsonString(out, patchStatusCode(r.status));
    out += ",\"error\":";
    appendJsonString(out, r.message);
    return out + ",\"opIndex\":" + std::to_string(r.opIndex) + "}";
  }
  return eventsJson(r.events, true);
}

std::string EmitterFacade::snapshot() const { return emitter_->snapshot().dump(); }

std::string EmitterFacade::replay(const std::string& requestJson) const {
  json request;
  std::string error;
  if (!parseBounded(requestJson, 4, request, error)) return "{\"error\":\"replay request: " + error + "\"}";
  // {"snapshot": true}: a catch-up that must be a snapshot (see catchUp() in js/src/server.js).
  auto forced = request.is_object() ? request.find("snapshot") : request.end();
  if (forced != request.end() && forced->is_boolean() && forced->get<bool>())
  {
    std::vector<json> events;
    events.push_back(emitter_->catchUpSnapshot());
    return eventsJson(events, false);
  }
  auto seq = request.is_object() ? request.find("seq") : request.end();
  if (seq == request.end() || !seq->is_number_unsigned() || seq->get<uint64_t>() > kMaxSeq)
    return "{\"error\":\"replay request: seq must be an integer in [0, 2^53)\"}";
  auto epoch = request.find("epoch");
  const std::string* check = nullptr;
  if (epoch != request.end() && !epoch->is_null()) {
    if (!epoch->is_string()) return "{\"error\":\"replay request: epoch must be a string or null\"}";
    check = epoch->get_ptr<const std::string*>();
  }
  std::vector<uint64_t> skip;
  auto held = request.find("skip");
  if (held != request.end() && !held->is_null()) {
    if (!held->is_array()) return "{\"error\":\"replay request: skip must be an array of seqs\"}";
    for (const json& s : *held) {
      if (!s.is_number_unsigned() || s.get<uint64_t>() > kMaxSeq)
        return "{\"error\":\"replay request: skip must be an array of seqs\"}";
      skip.push_back(s.get<uint64_t>());
    }
  }
  return eventsJson(emitter_->replaySince(seq->get<uint64_t>(), check, skip), false);
}

std::string EmitterFacade::heartbeat() const { return emitter_->heartbeat(); }
std::string EmitterFacade::stateJson() const { return emitter_->state().dump(); }
double EmitterFacade::seq() const { return static_cast<double>(emitter_->seq()); }
std::string EmitterFacade::epoch() const { return emitter_->options().epoch; }

std::string EmitterFacade::statsJson() const {
  const EmitterStats& s = emitter_->stats();
  return json{{"deltas", s.deltas},       {"snapshots", s.snapshots}, {"digests", s.digests},
              {"repaired", s.repaired},   {"rejected", s.rejected},   {"replays", s.replays},
              {"replaySnapshots", s.replaySnapshots}}
      .dump();
}

}  // namespace agui_sync
