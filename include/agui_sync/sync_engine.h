#pragma once
// SyncEngine: the receiving side of agui-state-sync. Raw SSE bytes in; for each
// event, an Outcome out (outcome.h): applied state, a pass-through AG-UI event,
// an ignored duplicate or reordered delta, an error, or a resync request that
// says why. The state it holds is only ever changed by a whole, verified event.
//
// Contract:
//  - feed() accepts any chunking (a chunk may end mid-line, mid-CRLF or inside
//    a UTF-8 sequence) and never throws; malformed input becomes an `error`
//    outcome (and a `resync` when a state update was lost), never a partial
//    state change.
//  - Sequencing (docs/wire.md): seq/baseSeq/epoch/digest under
//    metadata["agui-state-sync"], else at the top of metadata, or top-level
//    seq/base_seq. A sequenced snapshot makes the state `synced`; an
//    unsequenced one leaves it `unverified`; a gap, a failed patch or a digest
//    mismatch makes it `resyncing` until a snapshot (or, for `gap` and
//    `stale-base`, a replay from lastSeq) heals it.
//  - Cost per delta is O(delta), never O(state), apart from a digest check
//    every K events when the sender stamps one.
//  - User edits (edits.h): state() is the *visible* state, the confirmed state
//    with the pending edits replayed; confirmedState() is the agent's. With no
//    edit pending the two are the same document and edits cost nothing.
//  - Not thread-safe: one engine per stream, driven from one thread.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint.h"
#include "codes.h"
#include "edits.h"
#include "metrics.h"
#include "options.h"
#include "outcome.h"
#include "sync_status.h"

namespace agui_sync {

// An activity document (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; docs/wire.md
// section 11), as activities() lists it: pointers into the engine, valid until
// its next call that takes events.
struct ActivityView {
  const std::string* messageId = nullptr;
  const std::string* activityType = nullptr;
  const nlohmann::json* content = nullptr;
  SyncStatus status = SyncStatus::Unverified;  // synced: the sender's content at lastSeq
  std::optional<uint64_t> lastSeq;
  const std::optional<std::string>* epoch = nullptr;  // the epoch lastSeq counts in (a catch-up position names it)
  const ResyncRequest* resync = nullptr;  // set while it resyncs
  size_t held = 0;                        // deltas waiting in its reorder window
};

class SyncEngine {
 public:
  explicit SyncEngine(const Options& options = Options{});
  ~SyncEngine();
  SyncEngine(SyncEngine&&) noexcept;
  SyncEngine& operator=(SyncEngine&&) noexcept;
  SyncEngine(const SyncEngine&) = delete;
  SyncEngine& operator=(const SyncEngine&) = delete;

  // Start from app-provided state (status `unverified`, no lastSeq).
  void setInitialState(nlohmann::json state);

  // Any chunking; appends one or more outcomes per completed SSE event to `out`.
  void feed(const uint8_t* bytes, size_t n, std::vector<Outcome>& out);
  void feed(const std::string& bytes, std::vector<Outcome>& out) {
    feed(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out);
  }
  // The same in two halves, for a caller that acts on each event's outcomes
  // before the next event is handled (the proxy's relay writes an applied
  // state to its emitter while the engine still holds exactly that state):
  // push() frames the bytes; each step() handles the next framed event (or
  // heartbeat), appends its outcomes and returns true, or returns false when
  // none is left. feed() and end() first handle what push() left.
  void push(const uint8_t* bytes, size_t n);
  bool step(std::vector<Outcome>& out);
  // The stream ended or broke: the partial event is dropped, a pending gap
  // becomes a resync. The framer is ready for a new connection afterwards.
  void end(std::vector<Outcome>& out);
  // A new connection starts; state, lastSeq and lastEventId are kept.
  void reset();

  const Options& options() const;
  // Why options.edits was refused (a bad ownership pointer), if it was; the
  // engine then runs with no ownership rules.
  const std::optional<Failure>& optionsFailure() const;
  // The visible state (see top).
  const nlohmann::json& state() const;
  // The agent's state at lastSeq. A copy when edits are pending (O(state)).
  nlohmann::json confirmedState() const;

  // A user edit: RFC 6902 ops (`test` allowed) applied atomically to the visible
  // state and kept pending until the agent acknowledges it (an `edit-acked`,
  // `edit-rejected` or `conflict` outcome; never silently dropped). Returns
  // nothing and sets *editId on success; else the failure (codes.h, category
  // edit: agent-owned, invalid-patch, patch-failed, precondition-failed,
  // limit-exceeded) and the state is unchanged.
  std::optional<Failure> edit(nlohmann::json ops, std::string* editId = nullptr);
  // Oldest first: what a RunAgentInput carries in forwardedProps.stateSync.edits.
  std::vector<PendingEdit> pendingEdits() const;
  // A pending edit writes at, under or above `pointer` (an invalid pointer: false).
  bool editPendingAt(const std::string& pointer) const;
  // The prefix of this engine's editIds (options.clientId or a random one).
  const std::string& clientId() const;
  // The number of the last editId handed out ("<clientId>:<n>").
  uint64_t editCounter() const;

  // --- reloads (checkpoint.h) ---
  // Everything a reload needs (a copy of the confirmed state: O(state)).
  Checkpoint checkpoint() const;
  // Continues from a checkpoint: its state, position, epoch, last event id,
  // client id and pending edits (which keep their ids). The status becomes
  // `resyncing` with reason `restored` (a resync outcome in `out`): a replay
  // from lastSeq, a snapshot, or a heartbeat at lastSeq ends it. A stored edit
  // that the ownership rules now refuse is dropped with an edit-rejected outcome.
  void restore(Checkpoint checkpoint, std::vector<Outcome>& out);
  SyncStatus status() const;
  std::optional<uint64_t> lastSeq() const;
  // The sender's epoch (metadata.epoch of the state's snapshot, as text), if known.
  const std::optional<std::string>& epoch() const;
  // The SSE last event id (null until an event carried a non-empty id).
  std::optional<std::string> lastEventId() const;
  // The latest valid SSE `retry:` value.
  std::optional<uint64_t> retry() const;
  // Set while resyncing: why, and where the state is.
  const std::optional<ResyncRequest>& resyncRequest() const;
  // Deltas held in the reorder window.
  size_t pendingCount() const;
  // The seqs of held deltas that can still apply, ascending (at most
  // reorderWindow): a catch-up request lists them so that a replay can leave
  // them out (docs/wire.md section 3, "Held seqs").
  std::vector<uint64_t> heldSeqs() const;
  const Metrics& metrics() const;
  // With options.activities: every activity held, by messageId.
  std::vector<ActivityView> activities() const;
  // One activity by messageId (nullopt: not held), in O(log activities).
  std::optional<ActivityView> activity(const std::string& messageId) const;
  // Bytes received since construction: any growth is a sign of life (heartbeats included).
  uint64_t bytesReceived() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agui_sync
