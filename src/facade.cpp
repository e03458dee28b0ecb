#include "facade.h"

#include "approval_guard.h"
#include "canonical_json.h"
#include "json_measure.h"
#include "json_reader.h"
#include "outcome_json.h"
#include "sync_engine.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// Options carry initialState, checked against maxDepth once maxDepth is known;
// this only bounds the parse itself.
constexpr size_t kOptionsDepth = 1024;
// Tokens and approvals are flat objects.
constexpr size_t kTokenDepth = 4;

// Parses `text`, or returns a discarded value.
json parseOrDiscard(const std::string& text, size_t maxDepth) {
  json v;
  if (!JsonReader::parse(text, maxDepth, v)) return json(json::value_t::discarded);
  return v;
}

// Reads a positive integer option; leaves `target` alone when absent.
bool readLimit(const json& opts, const char* name, size_t& target, std::string& error) {
  auto it = opts.find(name);
  if (it == opts.end() || it->is_null()) return true;
  if (!it->is_number_unsigned() || it->get<uint64_t>() == 0) {
    error = std::string("option '") + name + "' must be a positive integer";
    return false;
  }
  target = static_cast<size_t>(it->get<uint64_t>());
  return true;
}

}  // namespace

Facade::Facade(const std::string& optionsJson) {
  Options options;
  GuardOptions guardOptions;
  json opts = json::object();
  json initial;
  bool hasInitial = false;
  bool tooDeep = false;
  if (!optionsJson.empty() && !JsonReader::parse(optionsJson, kOptionsDepth, opts, nullptr, &tooDeep)) {
    initError_ = tooDeep ? "initialState nests deeper than maxDepth" : "options must be a JSON object";
  } else if (!opts.is_object()) {
    initError_ = "options must be a JSON object";
  } else {
    readLimit(opts, "reorderWindow", options.reorderWindow, initError_) &&
        readLimit(opts, "reorderBytes", options.reorderBytes, initError_) &&
        readLimit(opts, "maxGapEvents", options.maxGapEvents, initError_) &&
        readLimit(opts, "maxEventBytes", options.maxEventBytes, initError_) &&
        readLimit(opts, "maxDepth", options.maxDepth, initError_) &&
        readLimit(opts, "maxStateBytes", options.maxStateBytes, initError_);
    size_t staleAfter = guardOptions.staleAfterMs;
    if (initError_.empty() && readLimit(opts, "staleAfterMs", staleAfter, initError_))
      guardOptions.staleAfterMs = staleAfter;
    auto trust = opts.find("trustUnsequenced");
    if (trust != opts.end() && trust->is_boolean()) guardOptions.trustUnsequenced = trust->get<bool>();
    auto it = opts.find("initialState");
    if (initError_.empty() && it != opts.end() && !it->is_null()) {
      if (valueDepth(*it) > options.maxDepth) initError_ = "initialState nests deeper than maxDepth";
      else if (approxSize(*it) > options.maxStateBytes) initError_ = "initialState exceeds maxStateBytes";
      else {
        initial = std::move(*it);
        hasInitial = true;
      }
    }
  }
  engine_ = std::make_unique<SyncEngine>(options);
  if (hasInitial) engine_->setInitialState(std::move(initial));
  guard_ = std::make_unique<ApprovalGuard>(*engine_, guardOptions);
}

Facade::~Facade() = default;

uint8_t* Facade::inputBuffer(size_t n) {
  if (input_.size() < n) input_.resize(n);
  return input_.data();
}

void Facade::feedBytes(const uint8_t* p, size_t n, std::string& result) {
  outcomes_.clear();
  engine_->feed(p, n, outcomes_);
  for (const Outcome& o : outcomes_) {
    if (o.kind == OutcomeKind::Event) runEnded_ = o.type == "RUN_FINISHED" || o.type == "RUN_ERROR";
    else if (o.kind == OutcomeKind::Applied) runEnded_ = false;
  }
  appendResultJson(result, *engine_, outcomes_);
  outcomes_.clear();
}

const uint8_t* Facade::feedInput(size_t n) {
  if (n > input_.size()) n = input_.size();
  // A large Result (a snapshot) does not pin its capacity for the instance's life.
  if (result_.capacity() > (1u << 20)) std::string().swap(result_);
  result_.assign(4, '\0');
  feedBytes(input_.data(), n, result_);
  const uint32_t len = static_cast<uint32_t>(result_.size() - 4);
  for (int i = 0; i < 4; ++i) result_[i] = static_cast<char>((len >> (8 * i)) & 0xFF);
  return reinterpret_cast<const uint8_t*>(result_.data());
}

std::string Facade::feed(const std::string& bytes) {
  std::string result;
  feedBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), result);
  return result;
}

std::string Facade::end() {
  std::vector<Outcome> out;
  engine_->end(out);
  // A stream that ends right after its run finished (e.g. paused on an
  // interrupt, waiting for this very approval) closed cleanly; any other end
  // is a broken connection, and approvals wait until bytes flow again.
  if (!runEnded_) guard_->noteDisconnected();
  return resultJson(*engine_, out);
}

void Facade::reset() { engine_->reset(); }

std::string Facade::stateJson() const { return engine_->state().dump(); }

std::string Facade::metricsJson() const { return metricsToJson(engine_->metrics()); }

std::string Facade::statusJson() const { return resultJson(*engine_, {}); }

namespace {

uint64_t toMs(double ms) { return ms > 0 ? static_cast<uint64_t>(ms) : 0; }

std::string refusal(const std::string& reason) {
  std::string out = "{\"ok\":false,\"reason\":";
  appendJsonString(out, reason);
  return out + "}";
}

json optionalSeq(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

bool approvalFromJson(const json& j, Approval& a) {
  if (!j.is_object()) return false;
  auto path = j.find("path");
  auto digest = j.find("digest");
  if (path == j.end() || !path->is_string() || digest == j.end() || !digest->is_string()) return false;
  a.path = *path->get_ptr<const std::string*>();
  a.digest = *digest->get_ptr<const std::string*>();
  return true;
}

}  // namespace

void Facade::noteActivity(double nowMs) { guard_->noteActivity(toMs(nowMs)); }

std::string Facade::guardView(const std::string& path) const {
  ViewToken token;
  GuardResult r = guard_->view(path, nullptr, &token);
  if (!r.ok) return refusal(r.reason);
  return json{{"ok", true}, {"token", {{"path", token.path}, {"seq", optionalSeq(token.seq)}, {"digest", token.digest}}}}
      .dump();
}

std::string Facade::guardApprove(const std::string& tokenJson, double nowMs) const {
  json t = parseOrDiscard(tokenJson, kTokenDepth);
  if (t.is_discarded() || !t.is_object()) return refusal("invalid-token");
  auto path = t.find("path");
  auto digest = t.find("digest");
  if (path == t.end() || !path->is_string() || digest == t.end() || !digest->is_string())
    return refusal("invalid-token");
  ViewToken token{*path->get_ptr<const std::string*>(), std::nullopt, *digest->get_ptr<const std::string*>()};
  auto seq = t.find("seq");
  if (seq != t.end() && seq->is_number_unsigned()) token.seq = seq->get<uint64_t>();
  Approval a;
  GuardResult r = guard_->approve(token, toMs(nowMs), &a);
  if (!r.ok) return refusal(r.reason);
  return json{{"ok", true},
              {"approval",
               {{"path", a.path},
                {"seq", optionalSeq(a.seq)},
                {"viewedSeq", optionalSeq(a.viewedSeq)},
                {"digest", a.digest},
                {"epoch", a.epoch ? json(*a.epoch) : json(nullptr)}}}}
      .dump();
}

std::string Facade::guardBlocker(double nowMs) const { return guard_->blocker(toMs(nowMs)); }

std::string Facade::canonicalize(const std::string& jsonText) {
  const Options limits;
  json v;
  bool tooDeep = false;
  if (!JsonReader::parse(jsonText, limits.maxDepth, v, nullptr, &tooDeep))
    return tooDeep ? R"({"ok":false,"error":"value nests deeper than 128 levels"})"
                   : R"({"ok":false,"error":"not valid JSON"})";
  std::string canonical = canonicalJson(v);
  std::string out = "{\"ok\":true,\"canonical\":";
  appendJsonString(out, canonical);
  out += ",\"digest\":";
  appendJsonString(out, stateDigest(v));
  return out + "}";
}

bool Facade::verify(const std::string& approvalJson, const std::string& stateJson) {
  Approval a;
  if (!approvalFromJson(parseOrDiscard(approvalJson, kTokenDepth), a)) return false;
  json state;
  if (!JsonReader::parse(stateJson, Options{}.maxDepth * 4, state)) return false;
  return verifyApproval(a, state);
}

}  // namespace agui_sync
