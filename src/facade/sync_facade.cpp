#include "json/cold.h"
#include "facade/sync_facade.h"

#include <agui_sync/approval_guard.h>
#include <agui_sync/canonical_json.h>
#include <agui_sync/sync_engine.h>

#include "facade/edit_json.h"
#include "facade/facade_json.h"
#include "facade/result_json.h"
#include "json/json_escape.h"
#include "json/json_measure.h"
#include "json/json_reader.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// Options carry initialState, checked against maxDepth once maxDepth is known;
// this only bounds the parse itself.
constexpr size_t kOptionsDepth = 1024;
// Tokens and approvals are flat objects.
constexpr size_t kTokenDepth = 4;

// What the options JSON configures.
struct SyncConfig {
  Options options;
  GuardOptions guard;
  std::optional<json> initialState;
};

std::optional<Failure> invalidOptions(std::string message) { return Failure{Code::InvalidOptions, std::move(message), {}}; }

std::optional<Failure> readLimits(const json& opts, SyncConfig& config) {
  Options& o = config.options;
  for (auto [name, target] : {std::pair<const char*, size_t*>{"reorderWindow", &o.reorderWindow},
                              {"reorderBytes", &o.reorderBytes},
                              {"maxGapEvents", &o.maxGapEvents},
                              {"maxEventBytes", &o.maxEventBytes},
                              {"maxDepth", &o.maxDepth},
                              {"maxStateBytes", &o.maxStateBytes},
                              {"maxActivities", &o.maxActivities},
                              {"maxActivityBytes", &o.maxActivityBytes}})
    if (auto failure = readPositive(opts, name, *target)) return failure;
  auto activities = opts.find("activities");
  if (activities != opts.end() && activities->is_boolean()) o.activities = activities->get<bool>();
  size_t staleAfter = config.guard.staleAfterMs;
  if (auto failure = readPositive(opts, "staleAfterMs", staleAfter)) return failure;
  config.guard.staleAfterMs = staleAfter;
  auto trust = opts.find("trustUnsequenced");
  if (trust != opts.end() && trust->is_boolean()) config.guard.trustUnsequenced = trust->get<bool>();
  if (auto failure = readEditPolicy(opts, o.edits)) return failure;
  auto clientId = opts.find("clientId");
  if (clientId != opts.end() && !clientId->is_null()) {
    if (!clientId->is_string() || clientId->get_ptr<const std::string*>()->empty() ||
        clientId->get_ptr<const std::string*>()->size() > 128)
      return invalidOptions("option 'clientId' must be a non-empty string of at most 128 bytes");
    o.clientId = *clientId->get_ptr<const std::string*>();
  }
  return std::nullopt;
}

// The options object -> config; the initial state is checked against the limits it set.
std::optional<Failure> readSyncConfig(const std::string& optionsJson, SyncConfig& config) {
  json opts = json::object();
  bool tooDeep = false;
  if (!optionsJson.empty() && !JsonReader::parse(optionsJson, kOptionsDepth, opts, nullptr, &tooDeep))
    return invalidOptions(tooDeep ? "initialState nests deeper than maxDepth" : "options must be a JSON object");
  if (!opts.is_object()) return invalidOptions("options must be a JSON object");
  if (auto failure = readLimits(opts, config)) return failure;
  auto it = opts.find("initialState");
  if (it == opts.end() || it->is_null()) return std::nullopt;
  if (valueDepth(*it) > config.options.maxDepth) return invalidOptions("initialState nests deeper than maxDepth");
  if (rawSize(*it, config.options.maxStateBytes) > config.options.maxStateBytes)
    return invalidOptions("initialState exceeds maxStateBytes");
  config.initialState = std::move(*it);
  return std::nullopt;
}

}  // namespace

AGUI_COLD SyncFacade::SyncFacade(const std::string& optionsJson) {
  SyncConfig config;
  initFailure_ = readSyncConfig(optionsJson, config);
  // A refused configuration still builds a default engine, so every method
  // stays callable; the binding refuses to hand it out (initResult()).
  if (initFailure_) config = SyncConfig{};
  initResult_ = initFailure_ ? failureJson(*initFailure_) : okJson();
  engine_ = std::make_unique<SyncEngine>(config.options);
  if (!initFailure_ && engine_->optionsFailure()) {  // a bad ownership pointer
    initFailure_ = engine_->optionsFailure();
    initResult_ = failureJson(*initFailure_);
  }
  if (config.initialState) engine_->setInitialState(std::move(*config.initialState));
  guard_ = std::make_unique<ApprovalGuard>(*engine_, config.guard);
}

SyncFacade::~SyncFacade() = default;

uint8_t* SyncFacade::inputBuffer(size_t n) {
  if (input_.size() < n) input_.resize(n);
  return input_.data();
}

void SyncFacade::feedBytes(const uint8_t* p, size_t n, std::string& result) {
  outcomes_.clear();
  engine_->feed(p, n, outcomes_);
  for (const Outcome& o : outcomes_) {
    if (o.kind == OutcomeKind::Event) runEnded_ = o.type == "RUN_FINISHED" || o.type == "RUN_ERROR";
    else if (o.kind == OutcomeKind::Applied) runEnded_ = false;
  }
  appendResultJson(result, *engine_, outcomes_);
  outcomes_.clear();
}

const uint8_t* SyncFacade::feedInput(size_t n) {
  const auto [bytes, size] = input(n);
  // A large Result (a snapshot) does not pin its capacity for the instance's life.
  if (result_.capacity() > (1u << 20)) std::string().swap(result_);
  result_.assign(4, '\0');
  feedBytes(bytes, size, result_);
  const uint32_t len = static_cast<uint32_t>(result_.size() - 4);
  for (int i = 0; i < 4; ++i) result_[i] = static_cast<char>((len >> (8 * i)) & 0xFF);
  return reinterpret_cast<const uint8_t*>(result_.data());
}

std::string SyncFacade::feed(const std::string& bytes) {
  std::string result;
  feedBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), result);
  return result;
}

std::string SyncFacade::end() {
  std::vector<Outcome> out;
  engine_->end(out);
  // A stream that ends right after its run finished (e.g. paused on an
  // interrupt, waiting for this very approval) closed cleanly; any other end
  // is a broken connection, and approvals wait until bytes flow again.
  if (!runEnded_) guard_->noteDisconnected();
  return resultJson(*engine_, out);
}

void SyncFacade::reset() { engine_->reset(); }

AGUI_COLD std::string SyncFacade::stateJson() const { return jsonText(engine_->confirmedState()); }

AGUI_COLD std::string SyncFacade::activityJson(const std::string& messageId) const {
  for (const ActivityView& a : engine_->activities())
    if (*a.messageId == messageId) return jsonText(*a.content);
  return "null";
}
AGUI_COLD std::string SyncFacade::visibleStateJson() const { return jsonText(engine_->state()); }

AGUI_COLD std::string SyncFacade::edit(const std::string& opsJson) {
  json ops;
  // An op object and its value sit two levels above the state's nesting.
  if (std::optional<Failure> failure = parseBounded(opsJson, engine_->options().maxDepth + 2, ops))
    return failureJson(*failure);
  std::string editId;
  if (std::optional<Failure> failure = engine_->edit(std::move(ops), &editId)) return failureJson(*failure);
  std::string out = "{\"ok\":true,\"editId\":";
  appendJsonString(out, editId);
  return out + "}";
}

AGUI_COLD std::string SyncFacade::pendingEditsJson() const { return jsonText(agui_sync::pendingEditsJson(engine_->pendingEdits())); }
AGUI_COLD std::string SyncFacade::clientId() const { return engine_->clientId(); }

AGUI_COLD std::string SyncFacade::checkpointMetaJson() const {
  const std::optional<std::string> lastEventId = engine_->lastEventId();
  json meta = json::object();
  meta["clientId"] = engine_->clientId();
  meta["editCounter"] = engine_->editCounter();
  meta["lastEventId"] = lastEventId ? json(*lastEventId) : json(nullptr);
  return jsonText(meta);
}

AGUI_COLD std::string SyncFacade::restore(const std::string& checkpointJson) {
  const Options& o = engine_->options();
  json stored;
  // checkpoint > edits > edit > ops > op: the state's nesting plus five levels.
  if (std::optional<Failure> failure = parseBounded(checkpointJson, o.maxDepth + 5, stored)) {
    if (failure->code == Code::InvalidJson) failure->code = Code::InvalidCheckpoint;
    return failureJson(*failure);
  }
  Checkpoint c;
  if (std::optional<Failure> failure = readCheckpoint(std::move(stored), o, c)) return failureJson(*failure);
  std::vector<Outcome> out;
  engine_->restore(std::move(c), out);
  guard_->noteDisconnected();  // nothing has arrived on a connection yet
  return resultJson(*engine_, out);
}

AGUI_COLD std::string SyncFacade::metricsJson() const { return metricsToJson(engine_->metrics()); }

std::string SyncFacade::statusJson() const { return resultJson(*engine_, {}); }

namespace {

uint64_t toMs(double ms) { return ms > 0 ? static_cast<uint64_t>(ms) : 0; }

// A guard refusal: the guard code, explained by its row in the code table.
std::string refusal(Code reason) { return failureJson(reason, codeInfo(reason).meaning); }

json optionalSeq(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

// The JSON answers below are built member by member, not from braced
// initializers: the same objects in a fraction of the browser engine's code.
AGUI_COLD std::string tokenJson(const ViewToken& token) {
  json answer = json::object();
  answer["ok"] = true;
  json& t = answer["token"];
  t["path"] = token.path;
  t["seq"] = optionalSeq(token.seq);
  t["digest"] = token.digest;
  if (token.messageId) t["messageId"] = *token.messageId;
  return jsonText(answer);
}

}  // namespace

void SyncFacade::noteActivity(double nowMs) { guard_->noteActivity(toMs(nowMs)); }

AGUI_COLD std::string SyncFacade::guardView(const std::string& path) const {
  ViewToken token;
  GuardResult r = guard_->view(path, nullptr, &token);
  return r.ok ? tokenJson(token) : refusal(r.reason);
}

AGUI_COLD std::string SyncFacade::guardViewActivity(const std::string& messageId, const std::string& path) const {
  ViewToken token;
  GuardResult r = guard_->viewActivity(messageId, path, nullptr, &token);
  return r.ok ? tokenJson(token) : refusal(r.reason);
}

AGUI_COLD std::string SyncFacade::guardApprove(const std::string& tokenJson, double nowMs) const {
  json t;
  if (parseBounded(tokenJson, kTokenDepth, t) || !t.is_object()) return refusal(Code::InvalidToken);
  auto path = t.find("path");
  auto digest = t.find("digest");
  auto messageId = t.find("messageId");
  if (path == t.end() || !path->is_string() || digest == t.end() || !digest->is_string()) return refusal(Code::InvalidToken);
  if (messageId != t.end() && !messageId->is_null() && !messageId->is_string()) return refusal(Code::InvalidToken);
  ViewToken token{*path->get_ptr<const std::string*>(), std::nullopt, *digest->get_ptr<const std::string*>(), std::nullopt};
  if (messageId != t.end() && messageId->is_string()) token.messageId = messageId->get<std::string>();
  auto seq = t.find("seq");
  if (seq != t.end() && seq->is_number_unsigned()) token.seq = seq->get<uint64_t>();
  Approval a;
  GuardResult r = guard_->approve(token, toMs(nowMs), &a);
  if (!r.ok) return refusal(r.reason);
  json answer = json::object();
  answer["ok"] = true;
  json& approval = answer["approval"];
  approval["path"] = a.path;
  approval["seq"] = optionalSeq(a.seq);
  approval["viewedSeq"] = optionalSeq(a.viewedSeq);
  approval["digest"] = a.digest;
  approval["epoch"] = a.epoch ? json(*a.epoch) : json(nullptr);
  if (a.messageId) approval["messageId"] = *a.messageId;
  return jsonText(answer);
}

AGUI_COLD std::string SyncFacade::guardBlocker(double nowMs) const {
  std::optional<Code> reason = guard_->blocker(toMs(nowMs));
  return reason ? codeName(*reason) : "";
}

AGUI_COLD std::string SyncFacade::guardActivityBlocker(const std::string& messageId, double nowMs) const {
  std::optional<Code> reason = guard_->activityBlocker(messageId, toMs(nowMs));
  return reason ? codeName(*reason) : "";
}

AGUI_COLD std::string SyncFacade::canonicalize(const std::string& jsonText) {
  json v;
  if (std::optional<Failure> failure = parseBounded(jsonText, Options{}.maxDepth, v)) return failureJson(*failure);
  std::string canonical = canonicalJson(v);
  std::string out = "{\"ok\":true,\"canonical\":";
  appendJsonString(out, canonical);
  out += ",\"digest\":";
  appendJsonString(out, stateDigest(v));
  return out + "}";
}

AGUI_COLD bool SyncFacade::verify(const std::string& approvalJson, const std::string& stateJson, const std::string& activitiesJson) {
  Approval a;
  json approval, state, activities;
  if (parseBounded(approvalJson, kTokenDepth, approval) || !approvalFromJson(approval, a)) return false;
  // "": no state the binding could put in JSON (a state approval then never verifies).
  if (!stateJson.empty() && parseBounded(stateJson, Options{}.maxDepth * 4, state)) return false;
  // {messageId: content}: the agent's content of the activity an approval names ("" or "null": none).
  if (!activitiesJson.empty() && parseBounded(activitiesJson, Options{}.maxDepth * 4 + 1, activities)) return false;
  return !judgeApproval(a, stateJson.empty() ? nullptr : &state, &activities);
}

}  // namespace agui_sync
