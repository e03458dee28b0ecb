#include "facade/cursor_facade.h"

#include <agui_sync/options.h>

#include <cmath>
#include <utility>

#include "facade/emitter_facade.h"
#include "facade/emitter_json.h"
#include "facade/facade_json.h"
#include "facade/relay_facade.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

// A seq from a binding: a non-negative integer, else 0 (the cursor then never
// thinks the emitter in step by accident: 0 is before any write).
uint64_t seqOf(double value) {
  return std::isfinite(value) && value >= 0 && value <= 9007199254740991.0 ? static_cast<uint64_t>(value) : 0;
}

std::string dumpSafe(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

// A plan as the bindings read it: its tries, "event" for the event's own
// payload. held: a received state's plan, whose tries the core keeps and
// carries out (tryReceived), so no value crosses: {"update":true} | {"patch":true}.
std::string planJson(const CursorPlan& plan, bool held = false) {
  if (plan.kind == CursorPlan::Kind::Pass) return R"({"ok":true,"kind":"pass"})";
  if (plan.kind == CursorPlan::Kind::Drop) return std::string(R"({"ok":true,"kind":"drop","reason":")") + plan.reason + "\"}";
  std::string out = R"({"ok":true,"kind":"write","snapshot":)";
  out += plan.snapshot ? "true" : "false";
  out += ",\"tries\":[";
  for (size_t i = 0; i < plan.tries.size(); ++i) {
    const WriteTry& attempt = plan.tries[i];
    if (i) out += ',';
    out += attempt.update ? "{\"update\":" : "{\"patch\":";
    out += held ? "true" : attempt.fromEvent ? "\"event\"" : dumpSafe(attempt.value);
    out += attempt.inStepOnly ? ",\"inStep\":true}" : "}";
  }
  return out + "]}";
}

std::optional<Failure> readOptions(const std::string& text, CursorOptions& options, size_t& maxDepth) {
  json opts;
  if (auto failure = parseBounded(text.empty() ? "{}" : text, 8, opts)) return failure;
  if (!opts.is_object()) return Failure{Code::InvalidOptions, "cursor options must be an object", std::nullopt};
  auto it = opts.find("alwaysRebase");
  if (it != opts.end() && !it->is_null()) {
    if (!it->is_boolean()) return Failure{Code::InvalidOptions, "option alwaysRebase must be a boolean", std::nullopt};
    options.alwaysRebase = it->get<bool>();
  }
  if (auto failure = readPositive(opts, "maxDepth", maxDepth)) return failure;
  options.maxDepth = maxDepth;
  return std::nullopt;
}

}  // namespace

CursorFacade::CursorFacade(const std::string& optionsJson) {
  CursorOptions options;
  if (auto failure = readOptions(optionsJson, options, maxDepth_)) {
    initResult_ = failureJson(*failure);
    return;
  }
  cursor_ = UpstreamCursor(options);
  initResult_ = okJson();
}

std::string CursorFacade::begin(const std::string& viewJson, bool fromInput, double emitterSeq) {
  json view;
  if (auto failure = parseBounded(viewJson, maxDepth_ + kEnvelopeDepth, view)) return failureJson(*failure);
  cursor_.begin(std::move(view), fromInput, seqOf(emitterSeq));
  line_.reset();  // (a store-bound emitter's: onLine())
  return okJson();
}

std::string CursorFacade::beginApart(const std::string& viewJson) {
  json view;  // (as begin(): a view the cursor cannot hold leaves the run where it was)
  if (auto failure = parseBounded(viewJson, maxDepth_ + kEnvelopeDepth, view)) return failureJson(*failure);
  cursor_.beginApart(std::move(view));
  line_.reset();
  return okJson();
}

std::string CursorFacade::startRun(const std::string& inputJson, const std::string& threadJson, double emitterSeq) {
  json input, thread;
  const size_t depth = maxDepth_ + kEnvelopeDepth;
  if (!inputJson.empty()) {
    if (auto failure = parseBounded(inputJson, depth, input)) return failureJson(*failure);
  }
  if (auto failure = parseBounded(threadJson, depth, thread)) return failureJson(*failure);
  const bool atThread = cursor_.startRun(inputJson.empty() ? nullptr : &input, std::move(thread), seqOf(emitterSeq));
  line_.reset();  // (a store-bound emitter's: onLine())
  return atThread ? R"({"ok":true,"start":"thread"})" : R"({"ok":true,"start":"apart"})";
}

std::string CursorFacade::addStart(const std::string& stateJson) {
  json start;
  if (auto failure = parseBounded(stateJson, maxDepth_ + kEnvelopeDepth, start)) return failureJson(*failure);
  cursor_.addStart(std::move(start));
  return okJson();
}

std::string CursorFacade::agentView() const { return cursor_.agentView() ? dumpSafe(cursor_.view()) : std::string(); }

std::string CursorFacade::plan(const std::string& eventJson, double emitterSeq) {
  json event;
  if (auto failure = parseBounded(eventJson, maxDepth_ + kEnvelopeDepth + 2, event)) return failureJson(*failure);
  const bool delta = event.is_object() && event.contains("delta");
  json ops = delta ? event["delta"] : json();
  CursorPlan plan = cursor_.plan(std::move(event), seqOf(emitterSeq));  // the snapshot moves into the view
  tried_.reset();
  planned_.reset();
  if (plan.kind == CursorPlan::Kind::Write) planned_ = Planned{plan, std::move(ops)};
  // The caller carries the tries itself (a store-bound emitter, whose write may be retried on
  // another instance's line): a rebase goes as its ops, worked out now, so that a retry
  // applies only the agent's own change on top of the winner's state.
  for (WriteTry& attempt : plan.tries) {
    if (!attempt.rebaseFromValue) continue;
    attempt.value = UpstreamCursor::rebaseOps(attempt.value, cursor_.view());
    attempt.rebaseFromValue = false;
  }
  return planJson(plan);
}

void CursorFacade::settle(int landed, double emitterSeq) { cursor_.settle(landed, seqOf(emitterSeq)); }

std::string CursorFacade::planReceived(RelayFacade& relay, int ref, int mode, double emitterSeq) {
  received_.reset();
  const ReceivedState* r = relay.received(ref);
  if (r == nullptr) return failureJson(Code::InvalidEvent, "no such received state in the relay's current step");
  Received plan;
  if (mode != kInCursor) {
    if (!r->last) return R"({"ok":true,"kind":"later"})";  // as writeReceived
    if (mode == kApart) {
      plan.plan = cursor_.planPayload(true, relay.state(), seqOf(emitterSeq));
      plan.fromView = true;
    } else {
      plan.payload = relay.state();
      plan.plan.kind = CursorPlan::Kind::Write;
      WriteTry whole;
      whole.update = whole.fromEvent = true;
      plan.plan.tries.push_back(std::move(whole));
      plan.beginAfter = true;
    }
  } else {
    json parsed;
    const json* payload = nullptr;
    if (auto failure = receivedPayload(relay, *r, parsed, payload)) return failureJson(*failure);
    if (r->snapshot && r->last && cursor_.holdsInStep(seqOf(emitterSeq))) {
      // In step: no copy of the state; each try reads the relay's (planHeldSnapshot).
      plan.plan = cursor_.planHeldSnapshot();
      plan.held = true;
      plan.ref = ref;
    } else if (r->snapshot) {
      // Its own copy (the relay moves on before an asynchronous write lands): a
      // snapshot's is the cursor's view, which the plan sets to it.
      plan.plan = cursor_.planPayload(true, *payload, seqOf(emitterSeq), true);
      plan.fromView = true;
    } else {
      plan.payload = std::move(parsed["delta"]);
      plan.plan = cursor_.planPayload(false, plan.payload, seqOf(emitterSeq), true);
    }
  }
  tried_.reset();
  std::string answer = planJson(plan.plan, true);
  if (plan.plan.kind == CursorPlan::Kind::Write) received_ = std::move(plan);
  return answer;
}

std::string CursorFacade::tryReceived(RelayFacade& relay, int index, EmitterFacade& facade) {
  if (!received_ || index < 0 || static_cast<size_t>(index) >= received_->plan.tries.size())
    return failureJson(Code::InvalidEvent, "no such try of a received state's plan");
  const WriteTry& next = received_->plan.tries[static_cast<size_t>(index)];
  StateEmitter& emitter = *facade.emitter_;
  received_->heldOps.reset();  // (a retry on a reloaded emitter starts over)
  const bool onOurs = atOurLine(emitter);
  if (next.inStepOnly && !onOurs) return failureJson(Code::PreconditionFailed, "the thread moved since this run's last write");
  const json* event = received_->fromView ? &cursor_.view() : &received_->payload;
  if (received_->held) {
    if ((event = heldState(relay)) == nullptr) return failureJson(Code::InvalidEvent, "the relay moved on before the write landed");
    if (next.inStepOnly) {
      json ops;
      if (std::optional<std::vector<json>> events = updateByDiffTo(emitter, *event, ops)) {
        received_->heldOps = std::move(ops);
        tried_ = Tried{index, Position{emitter.options().epoch, emitter.seq()}, onOurs};
        return eventsJson(*events);
      }
    }
    if (!received_->stateCopy) received_->stateCopy = *event;  // the view's once this lands
  }
  json rebase;
  if (next.rebaseFromValue) rebase = UpstreamCursor::rebaseOps(received_->held ? cursor_.view() : next.value, *event);
  const json& value = next.fromEvent ? *event : next.rebaseFromValue ? rebase : next.value;
  std::vector<json> events;
  const json& agent = received_->held ? *event : cursor_.view();  // the agent's state after this write
  if (std::optional<Failure> refused = attempt(emitter, next, value, agent, events)) return failureJson(*refused);
  const bool exact = onOurs || leftExact(next, emitter, agent);
  tried_ = Tried{index, Position{emitter.options().epoch, emitter.seq()}, exact};
  return eventsJson(events);
}

bool CursorFacade::leftExact(const WriteTry& next, const StateEmitter& emitter, const json& agent) {
  return next.rebase && emitter.state() == agent;
}

std::string CursorFacade::tryPlanned(int index, EmitterFacade& facade) {
  if (!planned_ || index < 0 || static_cast<size_t>(index) >= planned_->plan.tries.size())
    return failureJson(Code::InvalidEvent, "no such try of the run's plan");
  WriteTry next = planned_->plan.tries[static_cast<size_t>(index)];
  StateEmitter& emitter = *facade.emitter_;
  const bool onOurs = atOurLine(emitter);
  if (next.inStepOnly && !onOurs) return failureJson(Code::PreconditionFailed, "the thread moved since this run's last write");
  if (next.rebaseFromValue) next.value = UpstreamCursor::rebaseOps(next.value, cursor_.view());
  const json& value = next.fromEvent ? (planned_->plan.snapshot ? cursor_.view() : planned_->delta) : next.value;
  std::vector<json> events;
  if (std::optional<Failure> refused = attempt(emitter, next, value, cursor_.view(), events)) return failureJson(*refused);
  tried_ = Tried{index, Position{emitter.options().epoch, emitter.seq()}, onOurs || leftExact(next, emitter, cursor_.view())};
  return eventsJson(events);
}

void CursorFacade::settlePlanned(int landed, double emitterSeq) {
  // Only a landing this facade carried out names the emitter's line (as settleReceived).
  const bool ours = landed >= 0 && tried_ && tried_->index == landed && tried_->after.seq == seqOf(emitterSeq);
  cursor_.settle(landed, seqOf(emitterSeq), ours && tried_->onOurs);
  if (ours) line_ = tried_->after;
  else line_.reset();
  tried_.reset();
  planned_.reset();
}

const json* CursorFacade::heldState(RelayFacade& relay) const {
  const ReceivedState* r = relay.received(received_->ref);
  return r != nullptr && r->last ? &relay.state() : nullptr;
}

void CursorFacade::settleReceived(int landed, double emitterSeq) {
  // Only a landing this facade carried out names the emitter's line.
  const bool ours = landed >= 0 && tried_ && tried_->index == landed && tried_->after.seq == seqOf(emitterSeq);
  const bool onOurs = ours && tried_->onOurs;
  if (received_ && received_->beginAfter) {
    if (landed == 0) cursor_.begin(std::move(received_->payload), false, seqOf(emitterSeq));
  } else if (received_ && received_->held) {
    const json* ops = received_->heldOps ? &*received_->heldOps : nullptr;  // (the in-step try's: settleHeld reads them if it landed)
    cursor_.settleHeld(landed, seqOf(emitterSeq), onOurs, ops, received_->stateCopy ? &*received_->stateCopy : nullptr);
  } else {
    cursor_.settle(landed, seqOf(emitterSeq), onOurs);
  }
  if (ours) line_ = tried_->after;
  else line_.reset();
  tried_.reset();
  received_.reset();
}

void CursorFacade::onLine(const std::string& epoch, double emitterSeq) { line_ = Position{epoch, seqOf(emitterSeq)}; }

bool CursorFacade::atOurLine(const StateEmitter& emitter) const {
  return line_ && line_->epoch == emitter.options().epoch && line_->seq == emitter.seq() && cursor_.atOurs(emitter.seq());
}

}  // namespace agui_sync
