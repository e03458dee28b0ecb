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
#include "json/json_diff.h"
#include "json/json_measure.h"
#include "json/json_pointer.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

constexpr size_t kEventDepth = 6;  // as CursorFacade::plan: the envelope around the state, and the event

// A patch the emitter refuses as not applicable: the plan's next try.
bool notApplicable(Code code) {
  return code == Code::PatchFailed || code == Code::PreconditionFailed || code == Code::InvalidPatch;
}

// One try against the emitter: its events in `out`, or why it was refused.
std::optional<Failure> attempt(StateEmitter& emitter, const WriteTry& next, const json& event, const json& view,
                               std::vector<json>& out) {
  if (next.update) {
    out = emitter.update(next.fromEvent ? view : next.value);  // by reference: no copy of the state
    if (out.empty() && emitter.lastFailure()) return *emitter.lastFailure();
    return std::nullopt;
  }
  json ops = next.value;
  if (next.fromEvent) {
    auto delta = event.find("delta");
    ops = delta == event.end() ? json() : *delta;
  }
  PatchOutcome r = emitter.patch(std::move(ops));
  if (!r.ok()) return *r.failure;
  out = std::move(r.events);
  return std::nullopt;
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

std::string CursorFacade::planWrite(const std::string& eventJson, EmitterFacade& facade) {
  StateEmitter& emitter = *facade.emitter_;
  json event;
  if (auto failure = parseBounded(eventJson, maxDepth_ + kEventDepth, event)) {
    cursor_.settle(-1, emitter.seq());  // as a binding settles a plan it could not get
    return failureJson(*failure);
  }
  const CursorPlan plan = cursor_.plan(std::move(event), emitter.seq());  // a snapshot moves into the view
  if (plan.kind == CursorPlan::Kind::Pass) return R"({"ok":true,"kind":"pass"})";
  if (plan.kind == CursorPlan::Kind::Drop) return std::string(R"({"ok":true,"kind":"drop","reason":")") + plan.reason + "\"}";
  std::optional<Failure> last;
  for (size_t i = 0; i < plan.tries.size(); ++i) {
    std::vector<json> events;
    last = attempt(emitter, plan.tries[i], event, cursor_.view(), events);
    if (!last) {
      cursor_.settle(static_cast<int>(i), emitter.seq());
      return landedJson(i, events);
    }
    if (plan.tries[i].update || !notApplicable(last->code)) break;
  }
  cursor_.settle(-1, emitter.seq());
  const Failure refused = last ? *last : Failure{Code::InvalidEvent, "the plan had no way to write the event", std::nullopt};
  return R"({"ok":true,"kind":"write","landed":-1,"failure":)" + failureJson(refused) + "}";
}

std::optional<std::string> CursorFacade::writeSnapshotInStep(EmitterFacade& facade, const StateEmitter::DiffFn& diff) {
  StateEmitter& emitter = *facade.emitter_;
  if (!cursor_.snapshotInStep(emitter.seq())) return std::nullopt;
  // The JSON route parses the event within maxDepth_ + kEventDepth: a snapshot
  // it would refuse as too deep is declined here too (its ops are what is new).
  auto bounded = [&](const json& state, const DiffOptions& options, json::array_t& ops) {
    if (!diff(state, options, ops)) return false;
    for (const json& op : ops) {
      auto path = op.find("path"), value = op.find("value");
      const size_t tokens = path != op.end() && path->is_string() ? pointerTokens(path->get_ref<const std::string&>()) : 0;
      const size_t depth = 1 + tokens + (value == op.end() ? 0 : valueDepth(*value));
      if (depth >= maxDepth_ + kEventDepth) return false;
    }
    return true;
  };
  json ops;
  std::optional<std::vector<json>> events = emitter.updateByDiff(bounded, &ops);
  if (!events) return std::nullopt;
  cursor_.tookInStep(ops, emitter.seq());
  return landedJson(0, *events);
}

}  // namespace agui_sync
