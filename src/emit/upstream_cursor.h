#pragma once
// One run of an upstream agent against its thread's StateEmitter: how each of
// the agent's state events goes on top of the thread's state. The decision is
// made here once for every language and every sequencer (the proxy's threads,
// sequenceState(), Python's sequence_state and its ASGI middleware); they only
// carry it out against their emitter, which may be bound to a store and answer
// asynchronously, then settle() what happened
// (docs/architecture.md#sequencing-inside-the-backend-the-upstream-cursor).
//
// The cursor keeps the agent's own state (its view: where the run started, its
// last snapshot, with its later deltas applied in place, O(delta) each) and
// the emitter seq this run wrote last. The emitter is in step when it is still
// at that seq: nobody else wrote, so it holds exactly the agent's state.
//  - In step, a delta is the agent's own ops (O(delta), its `test`s kept); a
//    snapshot is the emitter's update(), which diffs it (a snapshot-only agent
//    becomes deltas).
//  - Out of step (another client's edit, another run, another instance): only
//    what the agent changed goes on top, so the others' writes stand where the
//    agent did not write: its delta, else the difference between its previous
//    state and its new one, else (the agent wrote inside something another
//    writer removed) its whole state: the agent wins.
//  - A delta that does not apply to the agent's own view, or that the emitter
//    refuses in step, means nobody can vouch for the agent's state any more:
//    it and every later delta are dropped until the agent's next snapshot.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace agui_sync {

struct CursorOptions {
  // A store-bound emitter may have been moved by another instance without
  // knowing yet: never trust "in step", always rebase. Its carrier checks the
  // emitter's line at each attempt (CursorFacade's tryReceived / tryPlanned),
  // so a snapshot where this run left the emitter is tried in step first.
  bool alwaysRebase = false;
  size_t maxDepth = 0;  // the emitter's depth limit for the agent's view (0 = none)
};

// One way to write an agent event: patch the emitter with `ops` (skipped to the
// next when they do not apply), or update() it to `state` (always lands).
struct WriteTry {
  bool update = false;
  bool fromEvent = false;  // the event's own delta or snapshot: `value` is left empty (no copy)
  nlohmann::json value;    // otherwise the ops (a JSON array) or the state
  // Carried out only where this run left the emitter (atOurs(), the same line
  // too), else not applicable: a store-bound emitter's in-step snapshot, whose
  // carrier checks the position at each attempt (CursorFacade::tryReceived).
  bool inStepOnly = false;
  // `value` is the agent's previous state, and the ops are rebaseOps(value,
  // view()), worked out by the carrier only if it gets to this try (after a
  // refused in-step one): the diff costs O(state), the race it serves is rare.
  bool rebaseFromValue = false;
  // The ops are a rebase (only what the agent changed, measured from a state it
  // started from), applied member by member to whatever the thread holds when
  // the try is carried out (emit/rebase_fit.h): a member the agent changed that another
  // writer removed meanwhile is set again, a removal already done is skipped,
  // rather than the whole try failing over to the agent's whole state, which
  // would take back every other writer's change.
  bool rebase = false;
  // With `rebase`: ops for members the agent holds as it found them in one of
  // its starts (addStart). Not its change, so another writer's value there
  // stands; only a member the thread lacks altogether is added (a thread that
  // is empty, or newer than the agent's view, still gets the agent's whole state).
  nlohmann::json carried;
};

struct CursorPlan {
  enum class Kind { Pass, Drop, Write };
  Kind kind = Kind::Pass;
  std::vector<WriteTry> tries;  // Write: in order, the first that applies stands
  bool snapshot = false;        // Write: the agent event was a STATE_SNAPSHOT
  const char* reason = "";      // Drop: why (a codes.h name)
};

class UpstreamCursor {
 public:
  explicit UpstreamCursor(CursorOptions options = {}) : options_(options) {}

  // The run starts: `view` is the state the agent starts from (RunAgentInput.state,
  // fromInput true, else the thread's), `emitterSeq` the emitter's seq once it
  // holds that state (the run's writes count from there).
  void begin(nlohmann::json view, bool fromInput, uint64_t emitterSeq);
  // The run starts out of step: the agent did not start from a state the
  // emitter holds (the proxy forwards a client's RunAgentInput.state without
  // writing it to its thread). `view` is what the agent's first change is
  // measured from, taken as its input (fromInput), at no emitter seq.
  void beginApart(nlohmann::json view);
  // The emitter could not take the run's input state: the agent's deltas are
  // relative to a state nobody holds; they wait for its snapshot.
  void suspend() { suspended_ = true; }
  // Another state the agent may have started this run from, besides the view
  // begin() / beginApart() gave (issue 40): the input state it was sent when
  // that is not the thread's, or its own last state as its carrier saw it at
  // the end of its previous run on the thread (a stateful agent keeps its own
  // state between runs, whatever RunAgentInput.state says). With any, the
  // run's first snapshot is never written in step nor whole first: only what
  // differs from the view and from every such start goes on top (a field the
  // agent merely carried over, stale, from where it started is not its
  // change, so another writer's commit there stands). Cleared by begin().
  void addStart(nlohmann::json start);

  // A sequencer's run (sequenceState(), sequence_state) and its client's
  // RunAgentInput.state (issue 40). On a thread of its own the emitter first
  // moves to that state (writesInput()), and the agent starts there. A
  // store-bound thread is written by others too: a client's state there is
  // where its agent starts, never a write, because the client's copy may be
  // behind another instance's commits and writing it would take them back.
  // The thread moves only by the agent's own changes (and by edits).
  bool writesInput() const { return !options_.alwaysRebase; }
  // The run starts (after writesInput()'s write, if any): at the thread's
  // state when there is no input or it is the thread's, else apart from the
  // input (the agent's first change is measured from it). True: at the thread.
  bool startRun(const nlohmann::json* input, nlohmann::json thread, uint64_t emitterSeq);

  // The plan for one agent event (Pass for anything but STATE_SNAPSHOT/STATE_DELTA).
  CursorPlan plan(const nlohmann::json& event, uint64_t emitterSeq);
  // The same plan; a snapshot moves out of `event` into the agent's view instead
  // of being copied (a facade's parsed event: a copy of a large state costs more
  // than parsing it). `event` is left valid but unspecified.
  CursorPlan plan(nlohmann::json&& event, uint64_t emitterSeq);
  // The same plan for an event the caller holds in parts: a STATE_SNAPSHOT's
  // `snapshot` (copied into the agent's view) or a STATE_DELTA's `delta`. The
  // proxy's relay plans on the receiver's own state this way, by reference.
  // checked: the carrier checks the emitter's position at each attempt, so an
  // always-rebasing cursor may try a snapshot in step first (WriteTry::inStepOnly).
  CursorPlan planPayload(bool snapshot, const nlohmann::json& payload, uint64_t emitterSeq, bool checked = false) {
    return snapshot ? planSnapshot(payload, nullptr, emitterSeq, checked) : planDelta(payload, emitterSeq);
  }
  // A snapshot the carrier holds by reference, planned where this run's last
  // write left the emitter (alwaysRebase, atOurs): planPayload(true, ..., true)'s
  // tries (the rebase's from the view, rebaseFromValue with no value), but the
  // view takes the snapshot only once the write settled (settleHeld): by the
  // in-step try's ops, O(delta), or else from a copy the carrier took.
  CursorPlan planHeldSnapshot();
  bool holdsInStep(uint64_t emitterSeq) const { return options_.alwaysRebase && starts_.empty() && atOurs(emitterSeq); }
  // ops: the in-step try's own (when it landed by them); state: the snapshot's
  // copy (null when none was taken: then only a refusal, and the view is unknown).
  void settleHeld(int landed, uint64_t emitterSeq, bool onOurs, const nlohmann::json* ops, const nlohmann::json* state);
  // After a Write plan: the index of the try that landed (-1: none did), and the
  // emitter's seq then. The run is in step afterwards only if that write left
  // the emitter holding exactly the agent's state (an update, or the agent's
  // own ops on a state nobody else had moved).
  // onOurs: the carrier checked that the try landed where this run's last write
  // left the emitter (atOurs()), so whatever it wrote left exactly the agent's state.
  void settle(int landed, uint64_t emitterSeq, bool onOurs = false);

  // Would a STATE_SNAPSHOT now be written as one update() of an emitter that
  // holds exactly the agent's view (in step)? Then a binding may write it by
  // diffing a value of its own language against the emitter's state
  // (StateEmitter::updateByDiff) and report the ops with tookInStep().
  bool snapshotInStep(uint64_t emitterSeq) const { return viewKnown_ && !suspended_ && starts_.empty() && inStep(emitterSeq); }
  // That snapshot was written in step by `ops` (null when nothing changed): the
  // view follows by the same ops, O(delta), and the write is settled.
  void tookInStep(const nlohmann::json& ops, uint64_t emitterSeq);

  // Is the emitter, at emitterSeq, where this run's last write left it holding
  // exactly the agent's state? (In step, but for an emitter that cannot know
  // whether another instance moved its line: its carrier must check.)
  bool atOurs(uint64_t emitterSeq) const { return viewKnown_ && !suspended_ && exact_ && emitterSeq == ours_; }
  bool suspended() const { return suspended_; }
  bool viewKnown() const { return viewKnown_; }
  // The agent's own state as the cursor holds it (after plan(): the event's
  // snapshot, or the state its delta led to). A caller that moved the event in
  // writes the snapshot from here instead of keeping a second tree of it.
  const nlohmann::json& view() const { return view_; }
  // The view is the agent's own: it sent a state event this run (its carrier
  // may keep it as the agent's start of its next run: addStart()).
  bool agentView() const { return viewKnown_ && agentWrote_; }
  // The rebase diff from `from` to `to`: member by member, arrays whole unless
  // only elements changed, never collapsed (a collapsed container would
  // overwrite others' writes in it).
  static nlohmann::json rebaseOps(const nlohmann::json& from, const nlohmann::json& to);
  // rebaseOps(from, to) without the ops whose target holds in some `starts`
  // what it holds in `to` (nothing the agent changed from there); those go to
  // `carried` when given (WriteTry::carried).
  static nlohmann::json rebaseFromStarts(const nlohmann::json& from, const std::vector<nlohmann::json>& starts,
                                         const nlohmann::json& to, nlohmann::json* carried = nullptr);

 private:
  CursorPlan dispatch(const nlohmann::json& event, nlohmann::json* owned, uint64_t emitterSeq);
  // `owned`: the same snapshot, to move into the view (null: copied).
  CursorPlan planSnapshot(const nlohmann::json& snapshot, nlohmann::json* owned, uint64_t emitterSeq,
                          bool checked = false);
  CursorPlan planDelta(const nlohmann::json& delta, uint64_t emitterSeq);
  bool inStep(uint64_t emitterSeq) const { return !options_.alwaysRebase && exact_ && emitterSeq == ours_; }
  CursorPlan& remember(CursorPlan& plan, bool wasInStep);
  static std::vector<WriteTry> inStepSnapshotTries(nlohmann::json previous);

  CursorOptions options_;
  nlohmann::json view_;
  bool viewKnown_ = false;
  bool fromInput_ = false;  // the view is the client's input state (no agent snapshot yet)
  bool suspended_ = false;
  bool agentWrote_ = false;            // a state event of the agent's planned since begin()
  std::vector<nlohmann::json> starts_;  // addStart(): until the run's first snapshot
  bool exact_ = false;  // at ours_, the emitter held exactly the agent's state
  uint64_t ours_ = 0;   // the emitter's seq after this run's last write
  // The last Write plan: was it a snapshot, and which of its tries leave the emitter exact.
  bool planSnapshot_ = false;
  std::vector<bool> planExact_;
};

}  // namespace agui_sync
