#pragma once
// An agent's (or an upstream's) activity events through a thread's
// ActivityEmitter: how each goes on, decided once for every sequencer (the
// proxy's threads, sequenceState(), Python's sequence_state and its ASGI
// middleware); docs/wire.md section 11.
//  - ACTIVITY_SNAPSHOT: the activity's snapshot the first time, then the
//    change (ActivityEmitter::snapshot), and it ends a suspension (below).
//  - ACTIVITY_DELTA: the agent's own ops, atomically. Ops that do not apply
//    (or an activity the emitter does not hold) mean nobody can vouch for the
//    agent's content of that activity: the delta and every later one of the
//    same messageId are dropped until its next ACTIVITY_SNAPSHOT. A `verified`
//    event (the proxy's: its engine applied the delta cleanly to content it
//    verified) asks instead for that content (NeedContent), written as the
//    activity's snapshot, so the change goes on as a diff.
//  - Anything else passes; an activity event without a string messageId or
//    without its content / patch is dropped (invalid-event).
// The agent's other members (timestamp, rawEvent, its own metadata members)
// ride along on every event it becomes, except those AG-UI 1.0 ends a run on
// (a null, a timestamp that is not an integer); its payload and wire fields
// give way to the emitter's.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>

#include "emit/activity_emitter.h"

namespace agui_sync {

struct ActivityWrite {
  enum class Kind { Pass, Write, Drop, NeedContent };
  Kind kind = Kind::Pass;
  std::string messageId;
  std::vector<nlohmann::json> events;  // Write: what to send (may be empty: nothing changed)
  const char* reason = "";             // Drop: why (a codes.h name)
  std::optional<Failure> failure;      // Drop: the emitter's refusal behind it, if any
};

class ActivityCursor {
 public:
  // One event of the agent; `event` is consumed. `verified`: see the top.
  ActivityWrite write(ActivityEmitter& emitter, nlohmann::json event, bool verified = false);
  // NeedContent's answer: the verified `content` of `messageId` goes on as its
  // snapshot (the agent's other members of `event` still ride along).
  ActivityWrite writeContent(ActivityEmitter& emitter, nlohmann::json event, nlohmann::json content);

  bool suspended(const std::string& messageId) const { return suspended_.count(messageId) > 0; }

 private:
  ActivityWrite snapshot(ActivityEmitter& emitter, nlohmann::json& event, nlohmann::json content);
  ActivityWrite delta(ActivityEmitter& emitter, nlohmann::json& event, bool verified);
  ActivityWrite drop(std::string messageId, const char* reason, std::optional<Failure> failure);

  std::set<std::string> suspended_;  // at most the emitter's activities (pruned when it forgets one)
};

// One client stream (a run's) of a thread's activities: which activities its
// client holds a position for. A client that said where its activities are
// (its catch-up answered them) holds every one the thread has; otherwise a
// stream's first event of an activity is that activity's snapshot, never a
// delta: a plain AG-UI client that joined late drops a delta for a messageId
// it does not know, and the thread's change may be from another run's content.
class ActivityStream {
 public:
  // The client's activity positions were answered: it holds every activity held.
  void caughtUp(const ActivityEmitter& emitter);
  // A write's events for this stream: its activity's snapshot (the events'
  // other members kept) when the client holds no position for it yet.
  void shape(const ActivityEmitter& emitter, ActivityWrite& write);

 private:
  std::map<std::string, uint64_t> known_;  // messageId -> the line's generation its client holds
};

// `stamped` (an activity event of the emitter) with `agent`'s other members:
// everything but its type, payload, wire fields and the members the emitter
// wrote, and its own `metadata` members beside the emitter's key.
nlohmann::json carryActivityFields(const nlohmann::json& agent, nlohmann::json stamped);

}  // namespace agui_sync
