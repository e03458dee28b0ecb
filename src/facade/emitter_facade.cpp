#include "facade/emitter_facade.h"

#include <agui_sync/state_emitter.h>

#include "facade/edit_json.h"
#include "facade/emitter_json.h"
#include "facade/facade_json.h"
#include "emit/rebase_fit.h"
#include "emit/upstream_cursor.h"
#include "facade/prompt_facade.h"
#include "json/json_write.h"
#include "wire/patch_code.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

constexpr size_t kOptionsDepth = 1024;
constexpr size_t kRequestDepth = 4;

std::string invalidRequest(const std::string& message) {
  return failureJson(Code::InvalidRequest, "replay request: " + message);
}

}  // namespace

EmitterFacade::EmitterFacade(const std::string& optionsJson) {
  json opts = json::object();
  std::string problem;
  if (!optionsJson.empty() && parseBounded(optionsJson, kOptionsDepth + kEnvelopeDepth, opts)) opts = json();
  if (!opts.is_object()) {
    problem = "options must be a JSON object";
    opts = json::object();
  }
  EmitterOptions options = readEmitterOptions(opts, problem);
  json initial = json::object();
  auto init = opts.find("initialState");
  if (init != opts.end() && !init->is_null()) initial = std::move(*init);
  emitter_ = std::make_unique<StateEmitter>(options, std::move(initial));
  if (problem.empty()) problem = emitter_->configError();
  if (!problem.empty()) initFailure_ = Failure{Code::InvalidOptions, problem, {}};
  initResult_ = initFailure_ ? failureJson(*initFailure_) : okJson();
}

EmitterFacade::~EmitterFacade() = default;

std::string EmitterFacade::update(const std::string& stateJson) {
  json state;
  if (auto failure = parseValue(stateJson, emitter_->options().maxDepth, kEnvelopeDepth, state))
    return failureJson(*failure);
  std::vector<json> events = emitter_->update(std::move(state));
  if (events.empty() && emitter_->lastFailure()) return failureJson(*emitter_->lastFailure());
  return eventsJson(events);
}

std::string EmitterFacade::patch(const std::string& opsJson) {
  json ops;
  if (auto failure = parseValue(opsJson, emitter_->options().maxDepth, kEnvelopeDepth + 2, ops))
    return failureJson(*failure);
  PatchOutcome r = emitter_->patch(std::move(ops));
  if (!r.ok()) return failureJson(*r.failure);
  return eventsJson(r.events);
}

std::string EmitterFacade::updateRebased(const std::string& fromJson, const std::string& toJson) {
  json from, to;
  if (auto failure = parseValue(fromJson, emitter_->options().maxDepth, kEnvelopeDepth, from)) return failureJson(*failure);
  if (auto failure = parseValue(toJson, emitter_->options().maxDepth, kEnvelopeDepth, to)) return failureJson(*failure);
  PatchOutcome r = emitter_->patch(fitRebase(emitter_->state(), UpstreamCursor::rebaseOps(from, to), nullptr, to));
  if (r.ok()) return eventsJson(r.events);
  if (!patchNotApplicable(r.failure->code)) return failureJson(*r.failure);
  std::vector<json> events = emitter_->update(std::move(to));  // (its change no longer fits: the writer's whole state)
  if (events.empty() && emitter_->lastFailure()) return failureJson(*emitter_->lastFailure());
  return eventsJson(events);
}

std::string EmitterFacade::applyEdits(const std::string& editsJson, const std::string& policyJson,
                                      const std::string& clientEpochJson) {
  json edits, options = json::object(), clientEpoch;
  if (!clientEpochJson.empty() && (parseBounded(clientEpochJson, 1, clientEpoch) ||
                                   !(clientEpoch.is_null() || clientEpoch.is_string())))
    return failureJson(Code::InvalidRequest, "applyEdits: the client's epoch must be a string or null");
  // edits > edit > ops > op > value: four levels above the state's nesting.
  if (auto failure = parseValue(editsJson, emitter_->options().maxDepth, kEnvelopeDepth + 4, edits))
    return failureJson(*failure);
  if (!policyJson.empty() && parseBounded(policyJson, kEnvelopeDepth + 2, options))
    return failureJson(Code::InvalidOptions, "edit policy: not a JSON object");
  if (!options.is_object()) return failureJson(Code::InvalidOptions, "edit policy: not a JSON object");
  EditPolicy policy;
  std::vector<EditRequest> requests;
  if (auto failure = readEditPolicy(options, policy)) return failureJson(*failure);
  if (auto failure = readEditRequests(std::move(edits), requests)) return failureJson(*failure);
  EditsOutcome r = emitter_->applyEdits(requests, policy, clientEpoch.get_ptr<const std::string*>());
  if (r.failure) return failureJson(*r.failure);
  std::string out = eventsJson(r.events);
  out.pop_back();  // the closing brace: the results go in the same object
  return out + ",\"results\":" + jsonText(editResultsJson(r.results)) + "}";
}

std::string EmitterFacade::adoptHistory(const std::string& eventsJson) {
  json events;
  // events > event > delta > op > value: four levels above the state's nesting.
  if (auto failure = parseValue(eventsJson, emitter_->options().maxDepth, kEnvelopeDepth + 4, events))
    return failureJson(*failure);
  if (!events.is_array()) return failureJson(Code::InvalidRequest, "adoptHistory: events must be an array");
  std::vector<json> list = std::move(*events.get_ptr<json::array_t*>());
  return "{\"ok\":true,\"adopted\":" + std::to_string(emitter_->adoptHistory(list)) + "}";
}

std::string EmitterFacade::provenanceJson() const {
  json out(json::value_t::array);
  for (const ClientWrite& w : emitter_->provenance())
    out.push_back({{"path", w.path}, {"writer", "client"}, {"origin", w.origin}, {"seq", w.seq}});
  return jsonText(out);
}

std::string EmitterFacade::snapshot() const { return jsonText(emitter_->snapshot()); }

std::string EmitterFacade::renderPrompt(const std::string& optionsJson) const {
  std::vector<std::string> userWritten;
  for (const ClientWrite& w : emitter_->provenance()) userWritten.push_back(w.path);
  return renderPromptPartsOf(emitter_->state(), optionsJson, userWritten);
}

std::string EmitterFacade::replay(const std::string& requestJson) const {
  json request;
  if (auto failure = parseBounded(requestJson, kRequestDepth + kEnvelopeDepth, request))
    return invalidRequest(failure->message);
  if (!request.is_object()) return invalidRequest("seq must be an integer in [0, 2^53)");
  // {"snapshot": true}: a catch-up that must be a snapshot (see catchUp() in js/src/server.js).
  auto forced = request.find("snapshot");
  if (forced != request.end() && forced->is_boolean() && forced->get<bool>())
    return eventsJson({emitter_->catchUpSnapshot()});
  auto seq = request.find("seq");
  if (seq == request.end() || !seq->is_number_unsigned() || seq->get<uint64_t>() > kMaxSeq)
    return invalidRequest("seq must be an integer in [0, 2^53)");
  auto epoch = request.find("epoch");
  const std::string* check = nullptr;
  if (epoch != request.end() && !epoch->is_null()) {
    if (!epoch->is_string()) return invalidRequest("epoch must be a string or null");
    check = epoch->get_ptr<const std::string*>();
  }
  std::vector<uint64_t> skip;
  if (!readSeqList(request, "skip", skip)) return invalidRequest("skip must be an array of seqs");
  return eventsJson(emitter_->replaySince(seq->get<uint64_t>(), check, skip));
}

std::string EmitterFacade::catchUp(const std::string& positionJson) const {
  json position;
  if (auto failure = parseBounded(positionJson, kRequestDepth + kEnvelopeDepth, position))
    return invalidRequest(failure->message);
  if (!position.is_object()) return invalidRequest("a catch-up position must be an object");
  auto seq = position.find("lastSeq");
  if (seq != position.end() && !seq->is_null() && (!seq->is_number_unsigned() || seq->get<uint64_t>() > kMaxSeq))
    return invalidRequest("lastSeq must be an integer in [0, 2^53) or null");
  auto epoch = position.find("epoch");
  if (epoch != position.end() && !epoch->is_null() && !epoch->is_string()) return invalidRequest("epoch must be a string or null");
  std::vector<uint64_t> held;
  if (!readSeqList(position, "held", held)) return invalidRequest("held must be an array of seqs");
  const std::string& ours = emitter_->options().epoch;
  std::vector<json> events;
  if (needsSnapshot(position, ours)) events.push_back(emitter_->catchUpSnapshot());
  else events = emitter_->replaySince(seq->get<uint64_t>(), &ours, held);
  return eventsJson(events, catchUpMode(events));
}

std::string EmitterFacade::heartbeat() const { return emitter_->heartbeat(); }
std::string EmitterFacade::stateJson() const { return jsonText(emitter_->state()); }
double EmitterFacade::seq() const { return static_cast<double>(emitter_->seq()); }
std::string EmitterFacade::epoch() const { return emitter_->options().epoch; }

std::string EmitterFacade::statsJson() const {
  const EmitterStats& s = emitter_->stats();
  return jsonText(json{{"deltas", s.deltas},         {"snapshots", s.snapshots}, {"digests", s.digests},
                       {"repaired", s.repaired},     {"rejected", s.rejected},   {"replays", s.replays},
                       {"replaySnapshots", s.replaySnapshots}});
}

}  // namespace agui_sync
