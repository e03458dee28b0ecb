#include "emit/upstream_cursor.h"

#include <utility>

#include "json/json_diff.h"
#include "json/json_patch.h"
#include "json/json_pointer.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

WriteTry makeTry(bool update, bool fromEvent, json value) {
  WriteTry attempt;
  attempt.update = update;
  attempt.fromEvent = fromEvent;
  attempt.value = std::move(value);
  return attempt;
}
WriteTry patchTry(json ops) { return makeTry(false, false, std::move(ops)); }
WriteTry rebaseTry(json ops, json carried = json()) {
  WriteTry attempt = patchTry(std::move(ops));
  attempt.rebase = true;
  attempt.carried = std::move(carried);
  return attempt;
}
WriteTry updateTry(json state) { return makeTry(true, false, std::move(state)); }
WriteTry eventTry(bool update) { return makeTry(update, true, json()); }

const json* member(const json& event, const char* name) {
  if (!event.is_object()) return nullptr;
  auto it = event.find(name);
  return it == event.end() ? nullptr : &*it;
}

}  // namespace

json UpstreamCursor::rebaseOps(const json& from, const json& to) {
  DiffOptions options;
  options.collapse = false;
  options.wholeArrays = true;
  return diffPatch(from, to, options);
}

namespace {

// Does `a` hold at `path` what `b` does (both nothing there, or equal values)?
bool sameAt(const json& a, const json& b, const std::string& path) {
  Tokens tokens;
  std::string error;
  if (!parsePointer(path, tokens, error)) return false;
  const json* x = resolvePointer(a, tokens, tokens.size());
  const json* y = resolvePointer(b, tokens, tokens.size());
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

}  // namespace

json UpstreamCursor::rebaseFromStarts(const json& from, const std::vector<json>& starts, const json& to, json* carried) {
  json ops = rebaseOps(from, to);
  if (starts.empty() || !ops.is_array()) return ops;
  json kept = json::array();
  for (json& op : ops) {
    auto path = op.find("path");
    bool same = false;  // the agent holds there what it started from: not its change
    if (path != op.end() && path->is_string()) {
      for (const json& start : starts) {
        if (sameAt(start, to, path->get_ref<const std::string&>())) {
          same = true;
          break;
        }
      }
    }
    if (!same) {
      kept.push_back(std::move(op));
    } else if (carried != nullptr) {
      if (!carried->is_array()) *carried = json::array();
      carried->push_back(std::move(op));
    }
  }
  return kept;
}

void UpstreamCursor::addStart(json start) { starts_.push_back(std::move(start)); }

bool UpstreamCursor::startRun(const json* input, json thread, uint64_t emitterSeq) {
  if (input == nullptr || *input == thread) {
    begin(std::move(thread), false, emitterSeq);
    return true;
  }
  beginApart(*input);
  return false;
}

void UpstreamCursor::begin(json view, bool fromInput, uint64_t emitterSeq) {
  starts_.clear();
  agentWrote_ = false;
  view_ = std::move(view);
  viewKnown_ = true;
  fromInput_ = fromInput;
  suspended_ = false;
  exact_ = true;  // the emitter holds the view at emitterSeq: in step from here
  ours_ = emitterSeq;
}

void UpstreamCursor::beginApart(json view) {
  begin(std::move(view), true, 0);  // (its carrier adds the input state the agent was sent: addStart())
  exact_ = false;  // at no seq does the emitter hold the view
}

CursorPlan UpstreamCursor::plan(const json& event, uint64_t emitterSeq) { return dispatch(event, nullptr, emitterSeq); }

CursorPlan UpstreamCursor::plan(json&& event, uint64_t emitterSeq) { return dispatch(event, &event, emitterSeq); }

CursorPlan UpstreamCursor::dispatch(const json& event, json* owned, uint64_t emitterSeq) {
  const json* type = member(event, "type");
  if (type == nullptr || !type->is_string()) return {};
  if (*type == "STATE_SNAPSHOT") {
    const json* snapshot = member(event, "snapshot");
    if (snapshot == nullptr) {  // not a snapshot of anything: nobody can vouch for what follows
      suspended_ = true;
      CursorPlan drop;
      drop.kind = CursorPlan::Kind::Drop;
      drop.reason = "invalid-event";
      return drop;
    }
    // `snapshot` points into `owned` when there is one: the same value, movable.
    // An always-rebasing cursor's carrier checks the emitter's line at each attempt (a store-bound
    // emitter: tryReceived / tryPlanned): a snapshot where this run left it goes in step first.
    return planSnapshot(*snapshot, owned ? &(*owned)["snapshot"] : nullptr, emitterSeq, options_.alwaysRebase);
  }
  if (*type == "STATE_DELTA") {
    const json* delta = member(event, "delta");
    return planDelta(delta ? *delta : json(nullptr), emitterSeq);
  }
  return {};
}

CursorPlan UpstreamCursor::planSnapshot(const json& snapshot, json* owned, uint64_t emitterSeq, bool checked) {
  CursorPlan plan;
  plan.kind = CursorPlan::Kind::Write;
  plan.snapshot = true;
  agentWrote_ = true;
  bool wasInStep = inStep(emitterSeq);
  if (!starts_.empty() && viewKnown_ && !suspended_) {
    // The run's first snapshot, from a start nobody can name: only what the agent changed from every start.
    json carried;
    json kept = rebaseFromStarts(view_, starts_, snapshot, &carried);
    plan.tries.push_back(rebaseTry(std::move(kept), std::move(carried)));
    plan.tries.push_back(eventTry(true));
    starts_.clear();
    wasInStep = false;
  } else if (checked && holdsInStep(emitterSeq)) {
    // (The previous view moves into the rebase try, not copied: the snapshot replaces it below.)
    plan.tries = inStepSnapshotTries(std::move(view_));
  } else {
    if (viewKnown_ && !suspended_ && !wasInStep) plan.tries.push_back(rebaseTry(rebaseOps(view_, snapshot)));
    plan.tries.push_back(eventTry(true));
  }
  if (owned != nullptr) {
    view_ = std::move(*owned);  // after the rebase diff above read it
  } else {
    view_ = snapshot;
  }
  viewKnown_ = true;
  fromInput_ = false;
  return remember(plan, wasInStep);
}

CursorPlan UpstreamCursor::planDelta(const json& delta, uint64_t emitterSeq) {
  agentWrote_ = true;
  const bool outOfStep = !inStep(emitterSeq);
  json before;
  if (viewKnown_ && outOfStep) before = view_;  // only a rebase needs the old view: O(state), out of step only
  if (viewKnown_ && applyPatch(view_, delta, options_.maxDepth).status != PatchStatus::Ok) viewKnown_ = false;
  if (suspended_ || !delta.is_array()) {
    suspended_ = true;
    CursorPlan drop;
    drop.kind = CursorPlan::Kind::Drop;
    drop.reason = delta.is_array() ? "patch-failed" : "invalid-patch";
    return drop;
  }
  CursorPlan plan;
  plan.kind = CursorPlan::Kind::Write;
  const bool wasInStep = !outOfStep;
  // A delta is relative to the agent's previous state; out of step, that state
  // may be the client's input, which is not the thread's: then only the diff.
  if (!outOfStep || !fromInput_ || !viewKnown_) plan.tries.push_back(eventTry(false));
  if (outOfStep && viewKnown_) {
    plan.tries.push_back(rebaseTry(rebaseOps(before, view_)));
    plan.tries.push_back(updateTry(view_));
  }
  return remember(plan, wasInStep);
}

// A patch try leaves the emitter exactly at the agent's state only in step; an update always.
CursorPlan& UpstreamCursor::remember(CursorPlan& plan, bool wasInStep) {
  planSnapshot_ = plan.snapshot;
  planExact_.clear();
  for (const WriteTry& attempt : plan.tries) planExact_.push_back(attempt.update || wasInStep);
  return plan;
}

void UpstreamCursor::tookInStep(const json& ops, uint64_t emitterSeq) {
  // The emitter held the view, so its diff applies here too.
  if (ops.is_array() && applyPatch(view_, ops, options_.maxDepth).status != PatchStatus::Ok) viewKnown_ = false;
  fromInput_ = false;
  CursorPlan plan;
  plan.kind = CursorPlan::Kind::Write;
  plan.snapshot = true;
  plan.tries.push_back(eventTry(true));
  remember(plan, true);
  settle(0, emitterSeq);
}

// Nobody wrote since this run did: the emitter's own diff is the agent's
// change (fine-grained, arrays too), if the carrier finds the line still
// there; else the rebase from `previous` (null: from the view), worked out
// only then; else the whole state.
std::vector<WriteTry> UpstreamCursor::inStepSnapshotTries(json previous) {
  std::vector<WriteTry> tries(1, eventTry(true));
  tries[0].inStepOnly = true;
  tries.push_back(rebaseTry(std::move(previous)));
  tries[1].rebaseFromValue = true;
  tries.push_back(eventTry(true));
  return tries;
}

CursorPlan UpstreamCursor::planHeldSnapshot() {
  agentWrote_ = true;  // (its view is the agent's once settleHeld() took it)
  CursorPlan plan;
  plan.kind = CursorPlan::Kind::Write;
  plan.snapshot = true;
  plan.tries = inStepSnapshotTries(json());  // (the view is still the previous state)
  return remember(plan, false);
}

void UpstreamCursor::settleHeld(int landed, uint64_t emitterSeq, bool onOurs, const json* ops, const json* state) {
  if (landed == 0 && ops != nullptr) {
    // The emitter held the view (it ran on our position), so its diff applies here too.
    if (ops->is_array() && applyPatch(view_, *ops, options_.maxDepth).status != PatchStatus::Ok) viewKnown_ = false;
  } else if (state != nullptr) {
    view_ = *state;
    viewKnown_ = true;
  } else {
    viewKnown_ = false;
  }
  fromInput_ = false;
  settle(landed, emitterSeq, onOurs);
}

void UpstreamCursor::settle(int landed, uint64_t emitterSeq, bool onOurs) {
  if (landed < 0 || static_cast<size_t>(landed) >= planExact_.size()) {
    suspended_ = true;  // the emitter refused every way: the agent's later deltas cannot be vouched for
    return;
  }
  if (planSnapshot_) suspended_ = false;
  exact_ = planExact_[static_cast<size_t>(landed)] || onOurs;
  ours_ = emitterSeq;
}

}  // namespace agui_sync
