#pragma once
// String-in/string-out facade over a thread's activities (AG-UI 1.0
// ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; docs/wire.md section 11) for the
// bindings: the ActivityEmitter (emit/activity_emitter.h) that stamps them and
// the ActivityCursor (emit/activity_cursor.h) that decides how an agent's
// activity events go on. Plain C++, exception-free.
//
//   ActivityFacade(optionsJson) the emitter options (epoch, digestEvery, snapshotRatio,
//                               replayMaxEvents, replayMaxBytes, maxDepth) and maxActivities (64);
//                               initResult() says why options were refused.
// A failure is always {"ok":false,"code","message"[,"opIndex"]}.
//   write(eventJson, verified)  an agent's (upstream's) event; verified: an engine applied it to
//                               content it verified (the proxy's):
//                               {"ok":true,"kind":"pass"} (not an activity event)
//                               | {"ok":true,"kind":"write","messageId":s,"events":[...]}
//                               | {"ok":true,"kind":"drop","messageId":s,"reason":code[,"failure":{...}]}
//                               | {"ok":true,"kind":"content","messageId":s} (verified: a delta that
//                                 does not fit; call writeContent with the engine's content)
//                               | failure (invalid-json, limit-exceeded): nothing changed
//   writeContent(eventJson, contentJson)
//                               the verified content of the event's activity, as its snapshot: write()'s answer
//   snapshot(messageId, activityType, contentJson, replace)
//                               the app's own ACTIVITY_SNAPSHOT: {"ok":true,"events":[...]} | failure
//   patch(messageId, activityType, opsJson)
//                               the app's own ACTIVITY_DELTA: {"ok":true,"events":[...]} | failure with
//                               opIndex (patch-failed also for an activity not held)
//   catchUp(positionJson)       {"activities": [{messageId, lastSeq, epoch, reason, held}]
//                               | the X-AGUI-State-Activities header's value | absent}:
//                               {"ok":true,"activities":[{"messageId","mode"}],"events":[...]}.
//                               Absent: the client keeps no activities, nothing is sent. Else every
//                               activity held: the ones it does not list by their snapshot, the
//                               others by section 3's rules on their own line. A bad entry is
//                               ignored, a bad list as a whole (or header) is as if absent.
//   contentJson(messageId)      "null" when not held; seq(messageId) -1 when not held; epoch(); size()
//
// A store-bound thread's activities (option "record": true; emit/activity_record.h):
//   takeRecordOps()             the activity record's ops for every event written since the last
//                               call (the emitter's events, not a stream's), as a JSON array
//   adoptRecord(recordJson)     brings the activities to the stored record:
//                               {"ok":true,"changed":n} | failure (invalid-json): nothing changed
//   settleRecord(refusalCode)   the record's answer to the ops last taken ("": stored, else the
//                               store's refusal code): {"next":"done"} | {"next":"adopt"} (a lost
//                               race: adoptRecord, then write again) | {"next":"raise"} (not a race:
//                               the store's failure stands) | {"next":"fail","code":"store-conflict",
//                               "message"} (lost too many races)
//   recordStale()               ops were taken and not stored since the last adoptRecord: adopt first
//   activityRecordKey(key)      (a free function) the record's store key for a thread's key
//   sideLineKey(name, key)      (a free function) a line of the library's own beside it (the proxy's
//                               upstream's last state)
//   seedText()                  every activity held as an unsequenced ACTIVITY_SNAPSHOT, SSE-framed:
//                               what the proxy feeds a run's upstream receiver first, so a plain
//                               upstream's deltas apply to the thread's activities without a snapshot
//
//   ActivityStreamFacade(optionsJson)  (no options yet: initResult() is {"ok":true})
//                               one client stream (a run's) of a thread (emit/activity_cursor.h
//                               ActivityStream): write / writeContent / catchUp as the thread's, with
//                               the thread's facade passed in, and a stream's first event of an
//                               activity its client holds no position for sent as its snapshot.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>

#include "emit/activity_record.h"

namespace agui_sync {

class ActivityEmitter;
class ActivityCursor;
class ActivityStream;
struct ActivityWrite;
class ActivityStreamFacade;

class ActivityFacade {
 public:
  explicit ActivityFacade(const std::string& optionsJson);
  ~ActivityFacade();
  ActivityFacade(const ActivityFacade&) = delete;
  ActivityFacade& operator=(const ActivityFacade&) = delete;

  const std::string& initResult() const { return initResult_; }
  std::string write(const std::string& eventJson, bool verified);
  std::string writeContent(const std::string& eventJson, const std::string& contentJson);
  std::string snapshot(const std::string& messageId, const std::string& activityType, const std::string& contentJson,
                       bool replace);
  std::string patch(const std::string& messageId, const std::string& activityType, const std::string& opsJson);
  std::string catchUp(const std::string& positionJson) const;
  std::string contentJson(const std::string& messageId) const;
  double seq(const std::string& messageId) const;
  std::string epoch() const { return epoch_; }
  double size() const;
  std::string takeRecordOps();
  std::string settleRecord(const std::string& refusalCode);
  bool recordStale() const { return commits_.stale(); }
  std::string seedText() const;
  std::string adoptRecord(const std::string& recordJson);

 private:
  friend class ActivityStreamFacade;
  // write() / writeContent() / catchUp() before they are written out; `stream` may be null.
  std::string written(const std::string& eventJson, const std::string* contentJson, bool verified, ActivityStream* stream);
  std::string caughtUp(const std::string& positionJson, ActivityStream* stream) const;

  std::unique_ptr<ActivityEmitter> emitter_;
  std::unique_ptr<ActivityCursor> cursor_;
  size_t maxDepth_ = 128;
  std::string epoch_;
  std::string initResult_;
  bool record_ = false;        // store-bound: keep the record ops of what is written
  nlohmann::json recordOps_;   // since the last takeRecordOps()
  RecordCommits commits_;
  void keepRecordOps(const std::vector<nlohmann::json>& events);
};

class ActivityStreamFacade {
 public:
  explicit ActivityStreamFacade(const std::string& optionsJson = "");
  ~ActivityStreamFacade();
  const std::string& initResult() const { return initResult_; }
  ActivityStreamFacade(const ActivityStreamFacade&) = delete;
  ActivityStreamFacade& operator=(const ActivityStreamFacade&) = delete;

  std::string write(ActivityFacade& thread, const std::string& eventJson, bool verified);
  std::string writeContent(ActivityFacade& thread, const std::string& eventJson, const std::string& contentJson);
  std::string catchUp(ActivityFacade& thread, const std::string& positionJson);

 private:
  std::unique_ptr<ActivityStream> stream_;
  std::string initResult_;
};

// The X-AGUI-State-Activities header's value (percent-encoded JSON, as
// encodeURIComponent writes it) decoded; nullopt when it is not.
std::optional<std::string> percentDecode(const std::string& value);

}  // namespace agui_sync
