#pragma once
// The sender's half of activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA;
// docs/wire.md section 11): each messageId its own sequenced document, so each
// gets a StateEmitter of its own -- the same diffs, stamps, digests, snapshot
// fallback and replay ring as the state, decided once -- and its events are
// re-shaped into activity events:
//   STATE_SNAPSHOT {snapshot, metadata} -> ACTIVITY_SNAPSHOT {messageId, activityType, content, metadata}
//   STATE_DELTA {delta, metadata}       -> ACTIVITY_DELTA {messageId, activityType, patch, metadata}
// An activity's first event is its snapshot at seq 0. Encode its events
// without an SSE id (StateEmitter::encode(event, false)): `id:` names the
// state's seq (docs/wire.md section 5). At most `maxActivities`
// are held; a new one past that forgets the least recently written (a client
// that asks for it again gets nothing, and its own copy stays as it was).
// Once one was forgotten, every activity created afterwards counts in an epoch
// of its own, `<epoch>.<n>`: a forgotten messageId the agent sends again
// starts over at seq 0, and (epoch, seq) must never name two contents.
#include <cstddef>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <agui_sync/state_emitter.h>

namespace agui_sync {

class ActivityEmitter {
 public:
  explicit ActivityEmitter(EmitterOptions options = EmitterOptions{}, size_t maxActivities = 64);

  // The agent's ACTIVITY_SNAPSHOT: the first one of a messageId is sent as the
  // activity's snapshot at seq 0; later ones as the change (a delta, or the
  // snapshot when that is smaller), nothing when nothing changed. `replace:
  // false` on an activity held changes nothing (AG-UI keeps it).
  std::vector<nlohmann::json> snapshot(const std::string& messageId, const std::string& activityType,
                                       nlohmann::json content, bool replace = true);
  // The agent's ACTIVITY_DELTA: its ops, atomically, stamped. An activity not
  // held, or ops that do not apply, are refused (ok() false, nothing sent).
  PatchOutcome patch(const std::string& messageId, const std::string& activityType, nlohmann::json ops);
  // What a client at `lastSeq` (nullopt: none) of `epoch` needs of one activity:
  // nothing, the missed events, or its snapshot (replaySince's rules; `held`:
  // the seqs it holds in that activity's reorder window).
  std::vector<nlohmann::json> catchUp(const std::string& messageId, std::optional<uint64_t> lastSeq,
                                      const std::string* epoch, const std::vector<uint64_t>& held = {}) const;
  // Every activity held, as its snapshot (a client that knows none of them).
  std::vector<nlohmann::json> snapshots() const;
  // One activity's snapshot at its seq; nullopt when not held.
  std::optional<nlohmann::json> snapshotOf(const std::string& messageId) const;

  const nlohmann::json* content(const std::string& messageId) const;
  std::optional<uint64_t> seq(const std::string& messageId) const;
  // The epoch an activity counts in (see the top); nullptr when not held.
  const std::string* epoch(const std::string& messageId) const;
  // The messageIds held, in order.
  std::vector<std::string> ids() const;
  size_t size() const { return lines_.size(); }

  // A stored line (emit/activity_record.h): `messageId` continues at (epoch,
  // seq) with `content` and no history, so a client behind it gets its
  // snapshot. Its generation changes: a stream's next event of it is the snapshot.
  void adopt(const std::string& messageId, const std::string& activityType, const std::string& epoch, uint64_t seq,
             nlohmann::json content);
  // Drops `messageId` (the stored record no longer holds it).
  void forget(const std::string& messageId);
  // The messageIds forgotten to make room (past maxActivities) since the last call,
  // and those a stored record holds past it (excess()).
  std::vector<std::string> takeForgotten() { return std::exchange(forgotten_, {}); }
  void excess(std::string messageId) { forgotten_.push_back(std::move(messageId)); }
  size_t capacity() const { return maxActivities_; }
  // Changes whenever adopt() replaces the line (0: never adopted).
  uint64_t generation(const std::string& messageId) const;

 private:
  struct Line {
    std::string activityType;
    StateEmitter emitter;
    uint64_t generation = 0;
  };
  Line& lineFor(const std::string& messageId, const std::string& activityType, nlohmann::json content, bool& created);
  std::vector<nlohmann::json> shaped(const std::string& messageId, const Line& line, std::vector<nlohmann::json> events) const;
  void touch(const std::string& messageId);
  void makeRoom();

  EmitterOptions options_;
  size_t maxActivities_;
  std::map<std::string, Line> lines_;
  std::list<std::string> recency_;  // least recently written first
  uint64_t created_ = 0;             // activities created since the first one was forgotten (0: none was)
  uint64_t adoptions_ = 0;
  std::vector<std::string> forgotten_;  // to make room, since takeForgotten()
};

// A state event shaped as the activity event of `messageId` (see the top).
nlohmann::json activityEvent(nlohmann::json stateEvent, const std::string& messageId, const std::string& activityType);

}  // namespace agui_sync
