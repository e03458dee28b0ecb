#pragma once
// String-in/string-out facade over SyncEngine for language bindings (embind).
// Plain C++: no Emscripten types, so the native suite tests it too.
//
// Contract (all returned strings are JSON; nothing here throws). A failure is
// always data of one shape, {"ok":false,"code":<codes.h name>,"message":s};
// callers branch on `code` and never parse `message`.
//   SyncFacade(optionsJson)  options: {reorderWindow, reorderBytes, maxGapEvents,
//                        maxEventBytes, maxDepth, maxStateBytes, initialState,
//                        staleAfterMs, trustUnsequenced, ownership, onConflict,
//                        clientId (these three: edits.h, facade/edit_json.h),
//                        activities, maxActivities, maxActivityBytes (options.h)}
//                        Unknown keys are ignored; bad values -> initResult().
//   initResult()         {"ok":true} when the options were valid, else a failure
//                        with code invalid-options.
//   inputBuffer(n)       pointer to a scratch buffer of at least n bytes that the
//                        binding fills (memcpy) before calling feedInput(n).
//   feedInput(n)         the Result (below) for the first n bytes of the scratch
//                        buffer, left in an internal buffer as [uint32
//                        little-endian length][UTF-8 JSON]; the pointer stays
//                        valid until the next call. (The binding returns this
//                        address, so JS decodes the bytes with one TextDecoder
//                        call instead of embind's std::string copy.)
//   feed(bytes)          -> Result for `bytes` (native callers and tests).
//   end()                -> Result: the stream ended (pending gap -> resync).
//   reset()              a new connection starts; keeps state, lastSeq, lastEventId.
//   stateJson()          the whole confirmed state (at load, or to repair the
//                        mirror; never per delta).
//   visibleStateJson()   the visible state: confirmed + pending edits (tests).
//   activityJson(id)     one activity's content, or null (to repair its mirror; never per delta).
//   edit(opsJson)        {"ok":true,"editId":s} | failure (codes.h category edit,
//                        opIndex when an op is at fault); see SyncEngine::edit.
//   pendingEditsJson()   [{"editId","baseSeq","ops","applies"}...], oldest first.
//   clientId()           the prefix of this engine's editIds.
//   checkpointMetaJson() {"clientId","editCounter","lastEventId"}: what a checkpoint
//                        needs beyond the state, position and edits the mirror has.
//   restore(checkpointJson)  {"state","lastSeq","epoch","lastEventId","clientId",
//                        "editCounter","edits":[{editId,baseSeq,ops}]} -> Result
//                        (a `restored` resync first) | failure invalid-checkpoint /
//                        limit-exceeded; SyncEngine::restore.
//   metricsJson()        Metrics object (see metrics.h).
//   statusJson()         Result with no outcomes.
//   noteActivity(nowMs)  bytes or a heartbeat arrived (feeds the guard's staleness clock).
//   guardView(path)      {"ok":true,"token":{"path","seq","digest"}} | failure
//                        (code: a guard reason, codes.h)
//   guardApprove(tokenJson, nowMs)
//                        {"ok":true,"approval":{"path","seq","viewedSeq","digest","epoch"}}
//                        | failure (code: a guard reason)
//   guardBlocker(nowMs)  "" when approvals are possible, else the guard reason.
//   guardViewActivity(messageId, path)
//                        as guardView, of the value at path in that activity's content:
//                        the token has "messageId" and the activity's own seq (missing:
//                        no such activity held). guardApprove with such a token judges
//                        it by that activity (its approval has "messageId" and the
//                        activity's seq and epoch).
//   guardActivityBlocker(messageId, nowMs)  as guardBlocker, for that activity ("missing": not held).
// Static helpers (no engine): canonicalize(jsonText) -> {"ok":true,"canonical","digest"}
//   | failure (invalid-json, limit-exceeded); verify(approvalJson, stateJson, activitiesJson)
//   -> bool: judgeApproval (approval_guard.h); stateJson "" is no state; activitiesJson
//   {messageId: content} is the agent's content of the activity an approval names ("" or
//   "null": none).
//
// Result = {"outcomes":[Outcome...], "status":"synced"|"unverified"|"resyncing",
//           "lastSeq":n|null, "lastEventId":s|null, "epoch":s|null, "pending":n,
//           "resync":null|{"reason","lastSeq","lastEventId","held":[seq,...]}}
// Outcome =
//   {"kind":"applied","type":"STATE_SNAPSHOT"|"STATE_DELTA","seq":n|null,
//    "changedPaths":[...],"event":<event JSON verbatim>}
//   {"kind":"resync","reason":s,"lastSeq":n|null,"lastEventId":s|null,"detail":s}
//   {"kind":"event","event":<event JSON verbatim>}
//   {"kind":"ignored","reason":s,"seq":n|null}
//   {"kind":"error","code":s,"message":s}
//   {"kind":"edit-acked","editId":s,"seq":n|null}
//   {"kind":"edit-rejected","editId":s,"reason":s}
//   {"kind":"conflict","editId":s,"seq":n|null,"path":s,"mine"?:v,"theirs"?:v,
//    "resolution":"agent-wins"|"user-wins"}
// While edits are pending the Result also has "edits":[{"editId","applies"}...].
// Activities (options.activities, docs/wire.md section 11): an outcome about one
// has "messageId" (an applied one's type is ACTIVITY_SNAPSHOT | ACTIVITY_DELTA,
// its event's `patch` applies cleanly to the previous applied content), and a
// Result with such an outcome has "activities":[{"messageId","activityType",
// "status","lastSeq","held","resync":null|{"reason","lastSeq","lastEventId"}}...].
// An applied delta's `event.delta` is guaranteed to apply cleanly to the state
// produced by the previous applied outcome, so a mirror (the JS wrapper) can
// rebuild only the touched paths instead of re-reading the whole state.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <agui_sync/codes.h>
#include <agui_sync/outcome.h>

namespace agui_sync {

class SyncEngine;
class ApprovalGuard;

class SyncFacade {
 public:
  explicit SyncFacade(const std::string& optionsJson);
  ~SyncFacade();
  SyncFacade(const SyncFacade&) = delete;
  SyncFacade& operator=(const SyncFacade&) = delete;

  const std::string& initResult() const { return initResult_; }
  // The same for native callers: why the options were refused, if they were.
  const std::optional<Failure>& initFailure() const { return initFailure_; }
  uint8_t* inputBuffer(size_t n);
  // The first n bytes of the scratch buffer, fewer if it holds fewer.
  std::pair<const uint8_t*, size_t> input(size_t n) const { return {input_.data(), n < input_.size() ? n : input_.size()}; }
  const uint8_t* feedInput(size_t n);
  std::string feed(const std::string& bytes);
  std::string end();
  void reset();
  std::string stateJson() const;
  // One activity's content (options.activities), or "null" when none is held by that messageId.
  std::string activityJson(const std::string& messageId) const;
  std::string visibleStateJson() const;
  std::string edit(const std::string& opsJson);
  std::string pendingEditsJson() const;
  std::string clientId() const;
  std::string checkpointMetaJson() const;
  std::string restore(const std::string& checkpointJson);
  std::string metricsJson() const;
  std::string statusJson() const;

  void noteActivity(double nowMs);
  std::string guardView(const std::string& path) const;
  std::string guardApprove(const std::string& tokenJson, double nowMs) const;
  std::string guardBlocker(double nowMs) const;
  std::string guardViewActivity(const std::string& messageId, const std::string& path) const;
  std::string guardActivityBlocker(const std::string& messageId, double nowMs) const;

  static std::string canonicalize(const std::string& jsonText);
  static bool verify(const std::string& approvalJson, const std::string& stateJson, const std::string& activitiesJson);

  SyncEngine& engine() { return *engine_; }

 private:
  // Feeds the bytes; appends the Result JSON to `out`.
  void feedBytes(const uint8_t* p, size_t n, std::string& out);
  std::unique_ptr<SyncEngine> engine_;
  std::unique_ptr<ApprovalGuard> guard_;
  std::vector<uint8_t> input_;
  std::vector<Outcome> outcomes_;  // reused per call (keeps its capacity)
  std::string result_;             // feedInput's buffer
  std::optional<Failure> initFailure_;
  std::string initResult_;  // {"ok":true} or initFailure_ as JSON
  bool runEnded_ = false;  // the last event was RUN_FINISHED / RUN_ERROR
};

}  // namespace agui_sync
