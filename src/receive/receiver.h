#pragma once
// The receiver: the engine's state machine over decoded AG-UI events.
//
// It owns the state document, lastSeq, the status and the reorder window, and
// turns each event into exactly the outcomes described in outcome.h. Rules
// (also in docs/concepts.md#how-an-event-is-handled):
//  - A sequenced STATE_SNAPSHOT replaces the state and makes it `synced`, unless
//    its seq is below lastSeq (a late copy: ignored as stale). While resyncing,
//    or when metadata.epoch differs from the current epoch (the sender restarted
//    and counts again), any sequenced snapshot is accepted -- except from an
//    epoch we already moved away from (a late straggler: `stale-snapshot`).
//  - An unsequenced snapshot replaces the state; status `unverified`, lastSeq null.
//  - A sequenced delta applies atomically when baseSeq == lastSeq. seq <= lastSeq
//    is a duplicate (verified against a ring of recently applied deltas: same seq
//    with different content is `seq-conflict`). baseSeq > lastSeq is held in the
//    bounded reorder window until the gap fills. baseSeq < lastSeq < seq is
//    `stale-base`.
//  - Unsequenced deltas apply and leave the state `unverified`.
//  - Half-sequenced streams (docs/wire.md section 6): with no position yet
//    (the state came from an unsequenced snapshot, the app's initial state or
//    unsequenced deltas), the first sequenced delta's baseSeq is adopted as the
//    state's seq and the delta applies. The position is only "anchored": the
//    status stays `unverified` until a sequenced snapshot arrives (any is
//    accepted while anchored) or a delta's metadata.digest matches. A
//    RUN_STARTED drops an anchored position, since a plain backend numbers each
//    run afresh; the new run's first sequenced delta anchors again. A delta at
//    or below the adopted position arriving later shows the guess was wrong
//    (a reordered delta came first): resync `anchor-mismatch`.
//  - A failed patch never half-applies; it becomes a resync. While resyncing,
//    nothing applies until a snapshot arrives (deltas are held for after it) --
//    except when the state is known good and merely behind (reasons `gap` and
//    `stale-base`): then a replay starting at lastSeq heals it without a snapshot.
//  - A run of state events that are all too old to verify (a hostile or
//    restarted counter) becomes `seq-regression` after maxGapEvents of them, so
//    a bogus huge seq cannot make the engine ignore the stream forever.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>
#include <agui_sync/metrics.h>
#include <agui_sync/options.h>
#include <agui_sync/outcome.h>
#include <agui_sync/sync_status.h>

#include "receive/event_decoder.h"

namespace agui_sync {

class Receiver {
 public:
  explicit Receiver(const Options& options = Options{});

  // Start from app-provided state (status `unverified`, no lastSeq).
  void setInitialState(nlohmann::json state);
  // The SSE layer's last event id, echoed in resync requests.
  void setLastEventId(std::optional<std::string> id) { lastEventId_ = std::move(id); }

  // `raw` is the event's JSON text, kept verbatim for applied/event outcomes
  // (moved into the outcome, or into the reorder window, not copied).
  void onEvent(DecodedEvent event, std::string raw, std::vector<Outcome>& out);
  // An event that could not be decoded (bad JSON, bad fields, over a limit).
  void onDecodeError(const DecodeError& error, std::vector<Outcome>& out);
  // An SSE heartbeat comment. When it carries the sender's seq (": hb <seq>",
  // see docs/wire.md) and that is ahead of lastSeq with nothing held, events
  // were lost while the stream looked idle: a resync `gap`.
  void onHeartbeat(std::optional<uint64_t> senderSeq, std::vector<Outcome>& out);
  // The state, position and epoch come from a checkpoint (a reload): status
  // resyncing, reason `restored`, until a replay from lastSeq (or a snapshot)
  // answers -- or a heartbeat says the sender is at lastSeq, nothing missed.
  void restore(nlohmann::json state, std::optional<uint64_t> lastSeq, std::optional<std::string> epoch,
               std::vector<Outcome>& out);
  // The byte stream ended or broke: a gap still open can no longer fill by itself.
  void onStreamEnd(std::vector<Outcome>& out);
  // A new run starts (RUN_STARTED): an adopted position is dropped (docs/wire.md section 6).
  void onRunStarted();
  // An update to this document was lost (an event meant for it could not be
  // decoded; the caller reported the error): a resync, `malformed` or
  // `limit-exceeded`.
  void onLostUpdate(const DecodeError& error, std::vector<Outcome>& out);
  // Nothing applies until a snapshot (a document first heard of through a
  // delta): a resync with `reason`.
  void requireSnapshot(Code reason, std::string detail, std::vector<Outcome>& out);

  const nlohmann::json& state() const { return state_; }
  // For the engine's edit layer only, which lays pending edits over the state
  // between events and always removes them exactly before the next one.
  nlohmann::json& mutableState() { return state_; }
  SyncStatus status() const { return status_; }
  std::optional<uint64_t> lastSeq() const { return lastSeq_; }
  const std::optional<std::string>& epoch() const { return epoch_; }
  const std::optional<std::string>& lastEventId() const { return lastEventId_; }
  const std::optional<ResyncRequest>& resyncRequest() const { return resync_; }
  size_t pendingCount() const { return pending_.size(); }
  // The seqs of the deltas held in the reorder window that can still apply
  // (baseSeq >= lastSeq), ascending; at most reorderWindow of them. A client
  // lists them in its catch-up request so the replay can leave them out
  // (docs/wire.md, section 3).
  std::vector<uint64_t> heldSeqs() const;
  const Metrics& metrics() const { return metrics_; }
  Metrics& metrics() { return metrics_; }

 private:
  struct Held {
    DecodedEvent event;
    std::string raw;
    uint64_t hash = 0;
  };

  void handleSnapshot(DecodedEvent& ev, std::string& raw, std::vector<Outcome>& out);
  // Size, depth and digest checks; a refusal has already asked for a resync.
  bool snapshotAcceptable(const DecodedEvent& ev, uint64_t bytes, std::vector<Outcome>& out);
  // The snapshot becomes the state (and the epoch and position, if it has them).
  void adoptSnapshot(DecodedEvent& ev, uint64_t bytes, size_t eventBytes, bool epochChanged);
  void handleDelta(DecodedEvent& ev, std::string& raw, std::vector<Outcome>& out);
  void handleOld(uint64_t seq, uint64_t hash, std::vector<Outcome>& out);
  // No position yet: this delta's baseSeq becomes the (anchored) lastSeq.
  void adoptPosition(const DecodedEvent& ev);
  // A new run starts on an anchored stream: forget its numbering.
  void dropAnchor();
  void hold(DecodedEvent& ev, std::string& raw, uint64_t hash, std::vector<Outcome>& out);
  bool applyDelta(DecodedEvent& ev, std::string& raw, uint64_t hash, std::vector<Outcome>& out);
  void drain(std::vector<Outcome>& out);
  void prunePending();
  // `repeat`: emit even while already resyncing (a snapshot answering the
  // resync was itself rejected, so the app must ask again).
  void requestResync(Code reason, std::string detail, std::vector<Outcome>& out, bool repeat = false);
  void emitIgnored(Code reason, std::optional<uint64_t> seq, std::vector<Outcome>& out);
  void emitError(Code code, std::string message, std::vector<Outcome>& out);
  void remember(uint64_t seq, uint64_t hash);
  bool isRetiredEpoch(const std::string& epoch) const;

  Options options_;
  nlohmann::json state_ = nlohmann::json::object();
  SyncStatus status_ = SyncStatus::Unverified;
  SyncStatus statusBeforeResync_ = SyncStatus::Unverified;
  std::optional<uint64_t> lastSeq_;
  bool anchored_ = false;  // lastSeq_ was adopted from a delta, not proven by the sender
  uint64_t anchorSeq_ = 0;  // the adopted position, while anchored_
  std::optional<std::string> epoch_;
  std::deque<std::string> retiredEpochs_;  // epochs we moved away from: their late events are stale
  std::optional<std::string> lastEventId_;
  std::optional<ResyncRequest> resync_;
  std::map<uint64_t, Held> pending_;  // by baseSeq
  size_t pendingBytes_ = 0;
  size_t gapAge_ = 0;
  size_t staleStreak_ = 0;
  std::deque<std::pair<uint64_t, uint64_t>> recent_;  // (seq, content hash) of applied deltas
  Metrics metrics_;
};

}  // namespace agui_sync
