// CursorFacade::planWrite: plan(), the plan's tries and settle() in one call,
// for a binding whose emitter is a plain in-memory EmitterFacade (a store-bound
// one writes asynchronously and keeps to plan/settle). The two-call route
// parses a snapshot twice (the cursor's view, the emitter's update) and the
// cursor and the emitter each keep a tree of it; here the event is parsed
// once, its snapshot moves into the agent's view, and the emitter diffs
// against that view by reference (O(state) comparisons, the delta applied to
// its own state), so a 50 KB node exit costs one parse instead of two. The
// decisions are the same: the cursor's plan, tried in order, a patch that does
// not apply moving on to the next try (as every binding's loop does).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <agui_sync/state_emitter.h>

#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"
#include "facade/facade_json.h"
#include "facade/relay_facade.h"
#include "emit/rebase_fit.h"
#include "json/json_diff.h"
#include "json/json_diff_impl.h"
#include "json/json_measure.h"
#include "json/json_pointer.h"
#include "wire/patch_code.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

constexpr size_t kEventDepth = 6;  // as CursorFacade::plan: the envelope around the state, and the event

std::string refusedJson(const Failure& refused) {
  return R"({"ok":true,"kind":"write","landed":-1,"failure":)" + failureJson(refused) + "}";
}

std::string landedJson(size_t landed, const std::vector<json>& events) {
  std::string out = "{\"ok\":true,\"kind\":\"write\",\"landed\":" + std::to_string(landed) + ",\"events\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    if (i) out.push_back(',');
    out += events[i].dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return out + "]}";
}

}  // namespace

std::optional<Failure> CursorFacade::attempt(StateEmitter& emitter, const WriteTry& next, const json& value,
                                             const json& agent, std::vector<json>& out) {
  if (next.update) {
    out = emitter.update(value);  // by reference: no copy of the state
    if (out.empty() && emitter.lastFailure()) return *emitter.lastFailure();
    return std::nullopt;
  }
  const json* carried = next.carried.is_null() ? nullptr : &next.carried;
  PatchOutcome r = next.rebase ? emitter.patch(fitRebase(emitter.state(), value, carried, agent)) : emitter.patch(value);
  if (!r.ok()) return *r.failure;
  out = std::move(r.events);
  return std::nullopt;
}

std::string CursorFacade::planWrite(const std::string& eventJson, EmitterFacade& facade) {
  StateEmitter& emitter = *facade.emitter_;
  json event;
  if (auto failure = parseBounded(eventJson, maxDepth_ + kEventDepth, event)) {
    cursor_.settle(-1, emitter.seq());  // as a binding settles a plan it could not get
    return failureJson(*failure);
  }
  const CursorPlan plan = cursor_.plan(std::move(event), emitter.seq());  // a snapshot moves into the view
  static const json kNone;
  auto delta = event.find("delta");  // (a moved-from snapshot event keeps its other members)
  return carryOut(plan, delta == event.end() ? kNone : *delta, emitter);
}

// The plan's tries in order, a patch that does not apply moving on to the
// next; the first that lands stands. Settled either way.
std::string CursorFacade::carryOut(const CursorPlan& plan, const json& payload, StateEmitter& emitter) {
  if (plan.kind == CursorPlan::Kind::Pass) return R"({"ok":true,"kind":"pass"})";
  if (plan.kind == CursorPlan::Kind::Drop) return std::string(R"({"ok":true,"kind":"drop","reason":")") + plan.reason + "\"}";
  std::optional<Failure> last;
  for (size_t i = 0; i < plan.tries.size(); ++i) {
    const WriteTry& next = plan.tries[i];
    std::vector<json> events;
    last = attempt(emitter, next, next.fromEvent ? (next.update ? cursor_.view() : payload) : next.value, cursor_.view(), events);
    if (!last) {
      cursor_.settle(static_cast<int>(i), emitter.seq(), leftExact(next, emitter, cursor_.view()));
      return landedJson(i, events);
    }
    if (plan.tries[i].update || !patchNotApplicable(last->code)) break;
  }
  cursor_.settle(-1, emitter.seq());
  const Failure refused = last ? *last : Failure{Code::InvalidEvent, "the plan had no way to write the event", std::nullopt};
  return refusedJson(refused);
}

// The received state's payload: the engine's own state, by reference, when
// the event led to it (`last`); else the event's member, read from its text.
std::optional<Failure> CursorFacade::receivedPayload(RelayFacade& relay, const ReceivedState& r, json& parsed,
                                                     const json*& payload) {
  if (r.snapshot && r.last) {
    payload = &relay.state();
    return std::nullopt;
  }
  if (auto failure = parseBounded(r.raw, relay.maxDepth() + kEventDepth, parsed)) return failure;
  auto member = parsed.find(r.snapshot ? "snapshot" : "delta");
  if (member == parsed.end()) return Failure{Code::InvalidEvent, "the received event has no payload", std::nullopt};
  payload = &*member;
  return std::nullopt;
}

std::string CursorFacade::writeReceived(RelayFacade& relay, int ref, EmitterFacade& facade, int mode) {
  StateEmitter& emitter = *facade.emitter_;
  const ReceivedState* r = relay.received(ref);
  if (r == nullptr) return failureJson(Code::InvalidEvent, "no such received state in the relay's current step");
  if (mode != kInCursor) {
    // Whole-state writes: an earlier state of the same step is covered by the step's last one.
    if (!r->last) return R"({"ok":true,"kind":"later"})";
    const json& state = relay.state();
    if (mode == kApart) return carryOut(cursor_.planPayload(true, state, emitter.seq()), state, emitter);
    std::vector<json> events = emitter.update(state);
    if (events.empty() && emitter.lastFailure()) return refusedJson(*emitter.lastFailure());
    cursor_.begin(state, false, emitter.seq());
    return landedJson(0, events);
  }
  json parsed;
  const json* payload = nullptr;
  if (auto failure = receivedPayload(relay, *r, parsed, payload)) {
    cursor_.settle(-1, emitter.seq());
    return failureJson(*failure);
  }
  if (r->snapshot) {
    // In step, the cursor's view follows the emitter's diff (O(delta)) instead
    // of taking a copy of the state: the same write, the same answer.
    auto diff = [payload](const json& state, const DiffOptions& options, json::array_t& ops) {
      return appendDiffOf(state, JsonNode{payload}, options, ops);
    };
    if (std::optional<std::string> answer = writeSnapshotInStep(facade, diff)) return *answer;
  }
  return carryOut(cursor_.planPayload(r->snapshot, *payload, emitter.seq()), *payload, emitter);
}

std::optional<std::string> CursorFacade::writeSnapshotInStep(EmitterFacade& facade, const StateEmitter::DiffFn& diff) {
  StateEmitter& emitter = *facade.emitter_;
  if (!cursor_.snapshotInStep(emitter.seq())) return std::nullopt;
  json ops;
  std::optional<std::vector<json>> events = updateByBoundedDiff(emitter, diff, ops);
  if (!events) return std::nullopt;
  cursor_.tookInStep(ops, emitter.seq());
  return landedJson(0, *events);
}

std::optional<std::vector<json>> CursorFacade::updateByBoundedDiff(StateEmitter& emitter, const StateEmitter::DiffFn& diff,
                                                                   json& ops) const {
  // The JSON route parses the event within maxDepth_ + kEventDepth: a snapshot
  // it would refuse as too deep is declined here too (its ops are what is new).
  auto bounded = [&](const json& state, const DiffOptions& options, json::array_t& out) {
    if (!diff(state, options, out)) return false;
    for (const json& op : out) {
      auto path = op.find("path"), value = op.find("value");
      const size_t tokens = path != op.end() && path->is_string() ? pointerTokens(path->get_ref<const std::string&>()) : 0;
      const size_t depth = 1 + tokens + (value == op.end() ? 0 : valueDepth(*value));
      if (depth >= maxDepth_ + kEventDepth) return false;
    }
    return true;
  };
  return emitter.updateByDiff(bounded, &ops);
}

std::optional<std::vector<json>> CursorFacade::updateByDiffTo(StateEmitter& emitter, const json& target, json& ops) const {
  auto diff = [&target](const json& state, const DiffOptions& options, json::array_t& out) {
    return appendDiffOf(state, JsonNode{&target}, options, out);
  };
  return updateByBoundedDiff(emitter, diff, ops);
}

}  // namespace agui_sync
