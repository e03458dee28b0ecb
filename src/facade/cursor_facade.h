#pragma once
// String facade over UpstreamCursor (emit/upstream_cursor.h) for the bindings:
// the run's decisions in the core, the writes in the language, which may be
// asynchronous (a store-bound emitter). Plain C++, exception-free.
//
//   CursorFacade(optionsJson)   {alwaysRebase: bool, maxDepth: n}; initResult() says
//                               why options were refused (invalid-options)
//   begin(viewJson, fromInput, emitterSeq)
//                               {"ok":true} | failure (invalid-json, limit-exceeded)
//   beginApart(viewJson)        the run starts out of step (the agent did not start from a state
//                               the emitter holds: the proxy's runs on a client's state); its
//                               first change is measured from view; as begin()
//   writesInput()               a sequencer moves the emitter to RunAgentInput.state before the
//                               run (not a store-bound one: UpstreamCursor::writesInput)
//   startRun(inputJson, threadJson, emitterSeq)
//                               a sequencer's run starts (after that write, if any); inputJson ""
//                               when the client sent no state: {"ok":true,"start":"thread"}
//                               (begun at the thread's state, emitterSeq) | {"ok":true,"start":
//                               "apart"} (from the client's state) | failure (invalid-json,
//                               limit-exceeded): nothing begun
//   plan(eventJson, emitterSeq) {"ok":true,"kind":"pass"}
//                               | {"ok":true,"kind":"drop","reason":code}
//                               | {"ok":true,"kind":"write","snapshot":b,
//                                  "tries":[{"patch":[ops]} | {"update":state}, ...]}
//                               "event" in place of ops or a state: the event's own delta
//                               or snapshot (not echoed: the caller holds it)
//                               | failure (invalid-json, limit-exceeded): nothing changed
//                               The caller tries each in order: a patch the emitter refuses
//                               as not applicable (patch-failed, precondition-failed,
//                               invalid-patch) moves to the next; an update always lands.
//                               A try marked "inStep":true (alwaysRebase: the emitter's own
//                               diff, valid only where this run's last write left it) is for
//                               a carrier that checks that line at each attempt (tryReceived);
//                               plan()'s carriers, whose store may retry a write on another
//                               writer's line, skip it: the rebase after it holds the agent's
//                               change alone.
//   settle(landed, emitterSeq)  after a write plan: the index of the try that landed, or -1
//   suspend()                   the emitter refused the run's input state
//   addStart(stateJson)         after begin()/beginApart(): another state the agent may have started
//                               from (the input state it was sent, when not the thread's; its own
//                               last state at the end of its previous run on the thread, agentView()):
//                               its first snapshot goes on top only by what it changed from every
//                               start (UpstreamCursor::addStart). {"ok":true} | failure (invalid-json)
//   agentView()                 the agent's own state at the end of the run (its last snapshot, its
//                               deltas applied) as JSON text, "" when it sent no state event
//   planWrite(eventJson, emitter)
//                               plan, the tries and settle() in one call for a plain in-memory
//                               emitter, on one parse of the event (the snapshot moves into the
//                               agent's view and the emitter diffs against it by reference):
//                               {"ok":true,"kind":"pass"} | {"ok":true,"kind":"drop","reason":code}
//                               | {"ok":true,"kind":"write","landed":i,"events":[...]}
//                               | {"ok":true,"kind":"write","landed":-1,"failure":{code,message[,opIndex]}}
//                               | failure (invalid-json, limit-exceeded): settled as nothing landed
//   writeReceived(relay, ref, emitter, mode)
//                               the same for the state a RelayFacade in this module verified
//                               (its current step's applied state `ref`), with no JSON text
//                               between them: a snapshot the engine holds is planned and
//                               diffed by reference. mode 0: through the cursor (begun);
//                               1: the run's first write on a thread with no state yet
//                               (update() to the state it led to, and the cursor begins
//                               there); 2: begun apart (the state it led to, as a snapshot).
//                               planWrite's answers, plus {"ok":true,"kind":"later"} in
//                               modes 1 and 2 for a state the same step's last one covers.
//   planReceived(relay, ref, mode, emitterSeq)
//                               the same state for a store-bound emitter, whose writes are
//                               asynchronous: plan()'s answer (or "later"), the plan kept here
//                               with no JSON text of the state: its own copy (the cursor's view,
//                               or the delta), or, for a snapshot planned where this run's last
//                               write left the emitter, none: its tries read the relay's state.
//                               The tries carry no values ({"update":true} | {"patch":true}):
//                               each is carried out, whatever it writes, by
//   tryReceived(relay, index, emitter)  on the store-bound emitter's local one (the relay
//                               of the plan, still in its step): EmitterFacade.update's
//                               or patch's answer. Called again for the same try when the store
//                               emitter retries on a reloaded local emitter. A try marked
//                               "inStep":true (a snapshot, first) runs only where this run's last
//                               write left the emitter, the same epoch too, else it is refused as
//                               precondition-failed: its update() is the emitter's own fine diff,
//                               which the store's compare-and-set then lands on that line only.
//                               Then
//   settleReceived(landed, emitterSeq)  as settle() (in mode 1, the cursor begins at the state)
//   onLine(epoch, emitterSeq)   the store-bound emitter's epoch where begin() put the run
#include <cstdint>
#include <optional>
#include <string>

#include <agui_sync/codes.h>
#include <agui_sync/state_emitter.h>

#include "emit/upstream_cursor.h"

namespace agui_sync {

class EmitterFacade;
class RelayFacade;
struct ReceivedState;

class CursorFacade {
 public:
  explicit CursorFacade(const std::string& optionsJson);
  const std::string& initResult() const { return initResult_; }
  std::string begin(const std::string& viewJson, bool fromInput, double emitterSeq);
  std::string beginApart(const std::string& viewJson);
  bool writesInput() const { return cursor_.writesInput(); }
  std::string startRun(const std::string& inputJson, const std::string& threadJson, double emitterSeq);
  std::string plan(const std::string& eventJson, double emitterSeq);
  void settle(int landed, double emitterSeq);
  std::string planWrite(const std::string& eventJson, EmitterFacade& emitter);  // cursor_write.cpp
  // A STATE_SNAPSHOT held by the binding as a native value, written by `diff`
  // (StateEmitter::updateByDiff) when the cursor is in step: planWrite's
  // answer, or nothing (nothing changed) when the binding must take planWrite.
  std::optional<std::string> writeSnapshotInStep(EmitterFacade& emitter, const StateEmitter::DiffFn& diff);
  static constexpr int kInCursor = 0, kFirstState = 1, kApart = 2;  // writeReceived's modes
  std::string writeReceived(RelayFacade& relay, int ref, EmitterFacade& emitter, int mode);  // cursor_write.cpp
  std::string planReceived(RelayFacade& relay, int ref, int mode, double emitterSeq);
  std::string tryReceived(RelayFacade& relay, int index, EmitterFacade& emitter);
  // A store-bound emitter's try of plan()'s last plan, carried out by the core on the
  // emitter's local facade at each attempt (its line checked for an in-step try, as
  // tryReceived): {"ok":true,"landed":0,"events":[...]} | failure. Then settlePlanned().
  std::string tryPlanned(int index, EmitterFacade& emitter);
  void settlePlanned(int landed, double emitterSeq);
  void settleReceived(int landed, double emitterSeq);
  void onLine(const std::string& epoch, double emitterSeq);
  void suspend() { cursor_.suspend(); }
  std::string addStart(const std::string& stateJson);
  std::string agentView() const;
  bool suspended() const { return cursor_.suspended(); }

 private:
  std::string carryOut(const CursorPlan& plan, const nlohmann::json& payload, StateEmitter& emitter);
  // One try against the emitter (update() to `value`, else patch() by it, as
  // the thread holds it now when `next` is a rebase: emit/rebase_fit.h, `agent`
  // the agent's state after it): its events in `out`, or why it was refused. cursor_write.cpp
  static std::optional<Failure> attempt(StateEmitter& emitter, const WriteTry& next, const nlohmann::json& value,
                                        const nlohmann::json& agent, std::vector<nlohmann::json>& out);
  static std::optional<Failure> receivedPayload(RelayFacade& relay, const ReceivedState& r, nlohmann::json& parsed,
                                                const nlohmann::json*& payload);
  // A store-bound emitter's plan for a received state, between planReceived and settleReceived.
  struct Received {
    CursorPlan plan;
    nlohmann::json payload;   // the state or the delta its "event" tries write, unless
    bool fromView = false;    // a snapshot the cursor planned: its view is that state
    bool beginAfter = false;  // mode 1: the cursor begins at the state once it landed
    // A snapshot planned in step (planHeldSnapshot): the relay's state `ref`, read
    // where each try runs (the relay does not step before the write settled).
    bool held = false;
    int ref = -1;
    std::optional<nlohmann::json> heldOps;    // the in-step try's own ops, when it landed by them
    std::optional<nlohmann::json> stateCopy;  // the state, taken for any other try (the view's at settle)
  };
  // tryReceived's held snapshot: the state to write, or a failure.
  const nlohmann::json* heldState(RelayFacade& relay) const;
  std::optional<std::vector<nlohmann::json>> updateByBoundedDiff(StateEmitter& emitter, const StateEmitter::DiffFn& diff,
                                                                 nlohmann::json& ops) const;
  std::optional<std::vector<nlohmann::json>> updateByDiffTo(StateEmitter& emitter, const nlohmann::json& target,
                                                            nlohmann::json& ops) const;
  std::optional<Received> received_;
  // plan()'s last write plan, kept for tryPlanned: the tries, and the delta its "event" tries write.
  struct Planned {
    CursorPlan plan;
    nlohmann::json delta;
  };
  std::optional<Planned> planned_;
  // Where a store-bound emitter was after this run's last write (its epoch, and
  // the seq it names): an in-step try needs the emitter on the same line there.
  struct Position {
    std::string epoch;
    uint64_t seq = 0;
  };
  std::optional<Position> line_;
  // The last try tryReceived carried out: which, where it left the emitter, and
  // whether it ran where this run's last write had left it (atOurLine).
  struct Tried {
    int index = -1;
    Position after;
    bool onOurs = false;  // it left the emitter holding exactly the agent's state (settle()'s onOurs)
  };
  // A rebase that landed left the emitter holding exactly the agent's state (nobody else's change
  // was there to keep, as on a thread the run began): the run is in step from here. O(state),
  // as the rebase itself.
  static bool leftExact(const WriteTry& next, const StateEmitter& emitter, const nlohmann::json& agent);
  std::optional<Tried> tried_;
  bool atOurLine(const StateEmitter& emitter) const;

  UpstreamCursor cursor_;
  size_t maxDepth_ = 128;
  std::string initResult_;
};

}  // namespace agui_sync
