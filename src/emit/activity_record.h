#pragma once
// A thread's activities as a fleet keeps them (docs/wire.md section 11): one
// stored document per thread, the activity record, under a key of its own
// beside the thread's (activityRecordKey), so an instance that never saw an
// activity (an attach on another instance, a restart) continues its line, and
// two instances writing one activity never fork it.
//
//   {"<messageId>": {"activityType": s, "epoch": s, "seq": n, "content": v}, ...}
//
// The record is a store-bound state line of its own (its epoch and seq are
// never sent to clients), written by JSON Patch ops. Each activity event
// becomes ops on its entry, in O(event), guarded by `test`s of the line it
// continues: a write that lost a race to another instance's write of the same
// activity is refused as a whole (its writer adopts the record and writes
// again), while writes of other activities rebase on each other.
//   ACTIVITY_SNAPSHOT at seq 0      add the entry (a new line)
//   ACTIVITY_SNAPSHOT at seq s > 0  test epoch, test seq s-1, then replace the entry
//   ACTIVITY_DELTA seq s, base b    test epoch, test seq b, replace seq, its ops under content
//   forgotten (past maxActivities)  remove the entry
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace agui_sync {

class ActivityEmitter;

// A store line of the library's own beside the thread at `threadKey`, named
// `name`: NUL + name + ":" + threadKey. It starts with a NUL, which the stores
// refuse in a caller's key, so no thread id can name it.
std::string sideLineKey(const std::string& name, const std::string& threadKey);
// The activity record's: sideLineKey("activities", threadKey).
std::string activityRecordKey(const std::string& threadKey);

// Appends to `ops` the record ops of `events` (stamped activity events of one
// emitter, in order) and of the activities it forgot, `forgotten`.
void appendRecordOps(nlohmann::json& ops, const std::vector<nlohmann::json>& events,
                     const std::vector<std::string>& forgotten);

// A store-bound writer's commits of record ops, decided once for every driver:
// after a write's ops were taken, the record's answer says what comes next. A
// lost race (the record's tests refused the ops) adopts the record and writes
// again, at most kMaxRecordTries times; any other failure stands. Until ops
// that were taken are stored, the emitter is ahead of the record (stale): the
// next write adopts first.
class RecordCommits {
 public:
  static constexpr unsigned kMaxRecordTries = 8;
  enum class Next { Done, Adopt, Fail, Raise };
  void taken(bool any) { pending_ = pending_ || any; }
  // `refusal`: nullptr when the store took the ops, else its refusal's code.
  Next settle(const char* refusal);
  void adopted() { pending_ = false; }
  bool stale() const { return pending_; }
  unsigned tries() const { return tries_; }

 private:
  bool pending_ = false;
  unsigned tries_ = 0;  // races the current write lost
};

// Brings `emitter` to `record`: each entry whose epoch, seq or content differs
// from the emitter's line (a write whose commit lost a race moved it) is adopted (a line at that epoch and seq, with that content
// and no history: a client behind it gets its snapshot); an activity the
// record does not hold is forgotten. A malformed entry counts as not held.
// Returns how many lines changed.
size_t adoptRecord(ActivityEmitter& emitter, const nlohmann::json& record);

}  // namespace agui_sync
