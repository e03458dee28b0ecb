#include "receive/receiver.h"

#include <algorithm>

#include <agui_sync/canonical_json.h>

#include "json/cold.h"
#include "json/json_measure.h"
#include "json/json_patch.h"
#include "wire/patch_code.h"

namespace agui_sync {

using nlohmann::json;

namespace {

constexpr size_t kRecentCapacity = 256;
// Bytes a STATE_SNAPSHOT envelope adds around the state: {"type":"STATE_SNAPSHOT","snapshot":...}
constexpr uint64_t kSnapshotEnvelope = 40;

}  // namespace

Receiver::Receiver(const Options& options) : options_(options) {
  metrics_.stateBytes = rawSize(state_);
}

void Receiver::setInitialState(json state) {
  state_ = std::move(state);
  metrics_.stateBytes = rawSize(state_);
  status_ = SyncStatus::Unverified;
  lastSeq_.reset();
  anchored_ = false;
}

void Receiver::restore(json state, std::optional<uint64_t> lastSeq, std::optional<std::string> epoch,
                       std::vector<Outcome>& out) {
  state_ = std::move(state);
  metrics_.stateBytes = rawSize(state_);
  lastSeq_ = lastSeq;
  epoch_ = std::move(epoch);
  anchored_ = false;
  pending_.clear();
  pendingBytes_ = 0;
  recent_.clear();
  resync_.reset();
  // What a catch-up restores: synced when the checkpoint had a position.
  status_ = lastSeq_ ? SyncStatus::Synced : SyncStatus::Unverified;
  requestResync(Code::Restored, "restored from a checkpoint", out, true);
}

std::vector<uint64_t> Receiver::heldSeqs() const {
  std::vector<uint64_t> seqs;
  for (const auto& [base, held] : pending_) {
    if (seqs.size() >= options_.reorderWindow) break;
    if (lastSeq_ && base < *lastSeq_) continue;  // straddles lastSeq: can never apply
    if (held.event.seq.seq) seqs.push_back(*held.event.seq.seq);
  }
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  return seqs;
}

void Receiver::emitIgnored(Code reason, std::optional<uint64_t> seq, std::vector<Outcome>& out) {
  Outcome o;
  o.kind = OutcomeKind::Ignored;
  o.reason = reason;
  o.seq = seq;
  out.push_back(std::move(o));
}

AGUI_COLD void Receiver::emitError(Code code, std::string message, std::vector<Outcome>& out) {
  ++metrics_.errors;
  Outcome o;
  o.kind = OutcomeKind::Error;
  o.reason = code;
  o.detail = std::move(message);
  out.push_back(std::move(o));
}

AGUI_COLD void Receiver::requestResync(Code reason, std::string detail, std::vector<Outcome>& out,
                             bool repeat) {
  if (status_ == SyncStatus::Resyncing && !repeat) {
    // One request per episode, unless a replay-healable episode turns out to
    // need a snapshot after all: then the app must hear the stronger reason.
    if (!(resync_ && healableByReplay(resync_->reason) && !healableByReplay(reason))) return;
  } else {
    statusBeforeResync_ = status_;
  }
  status_ = SyncStatus::Resyncing;
  resync_ = ResyncRequest{reason, lastSeq_, lastEventId_};
  gapAge_ = 0;
  ++metrics_.resyncs;
  ++metrics_.resyncsByReason[codeName(reason)];
  Outcome o;
  o.kind = OutcomeKind::Resync;
  o.reason = reason;
  o.detail = std::move(detail);
  o.lastSeq = lastSeq_;
  o.lastEventId = lastEventId_;
  out.push_back(std::move(o));
}

bool Receiver::isRetiredEpoch(const std::string& epoch) const {
  for (const auto& e : retiredEpochs_)
    if (e == epoch) return true;
  return false;
}

void Receiver::remember(uint64_t seq, uint64_t hash) {
  recent_.emplace_back(seq, hash);
  if (recent_.size() > kRecentCapacity) recent_.pop_front();
}

void Receiver::onRunStarted() {
  if (anchored_) dropAnchor();
}

void Receiver::onLostUpdate(const DecodeError& error, std::vector<Outcome>& out) {
  requestResync(error.code == Code::LimitExceeded ? Code::LimitExceeded : Code::Malformed,
                "an update was lost: " + error.message, out);
}

void Receiver::requireSnapshot(Code reason, std::string detail, std::vector<Outcome>& out) {
  requestResync(reason, std::move(detail), out);
}

void Receiver::onEvent(DecodedEvent event, std::string raw, std::vector<Outcome>& out) {
  if (event.cls == EventClass::Other) {
    if (anchored_ && event.type == "RUN_STARTED") dropAnchor();
    Outcome o;
    o.kind = OutcomeKind::Event;
    o.type = std::move(event.type);
    o.raw = std::move(raw);
    out.push_back(std::move(o));
    return;
  }
  const bool gapWasOpen = !pending_.empty();
  if (event.cls == EventClass::StateSnapshot) handleSnapshot(event, raw, out);
  else handleDelta(event, raw, out);
  // A gap may outlive only maxGapEvents further state events.
  if (gapWasOpen && !pending_.empty() && status_ != SyncStatus::Resyncing &&
      ++gapAge_ > options_.maxGapEvents) {
    requestResync(Code::Gap, "missing seq " + (lastSeq_ ? std::to_string(*lastSeq_ + 1) : std::string("baseline")) +
                             " did not arrive within " + std::to_string(options_.maxGapEvents) + " events",
                  out);
  }
}

AGUI_COLD void Receiver::onDecodeError(const DecodeError& error, std::vector<Outcome>& out) {
  emitError(error.code, error.message, out);
  if (error.stateEvent)
    requestResync(error.code == Code::LimitExceeded ? Code::LimitExceeded : Code::Malformed,
                  "a state event was lost: " + error.message, out);
}

void Receiver::onHeartbeat(std::optional<uint64_t> senderSeq, std::vector<Outcome>& out) {
  ++metrics_.heartbeats;
  if (senderSeq && lastSeq_ && *senderSeq == *lastSeq_ && status_ == SyncStatus::Resyncing && resync_ &&
      resync_->reason == Code::Restored) {
    // The sender is where the checkpoint was: the catch-up had nothing to send.
    status_ = statusBeforeResync_;
    resync_.reset();
    return;
  }
  if (!senderSeq || !lastSeq_ || status_ == SyncStatus::Resyncing) return;
  if (*senderSeq > *lastSeq_ && pending_.empty())
    requestResync(Code::Gap, "heartbeat reports seq " + std::to_string(*senderSeq) + " but lastSeq is " +
                             std::to_string(*lastSeq_),
                  out);
}

void Receiver::onStreamEnd(std::vector<Outcome>& out) {
  if (!pending_.empty() && status_ != SyncStatus::Resyncing)
    requestResync(Code::Gap, "the stream ended while " + std::to_string(pending_.size()) + " deltas waited for a gap",
                  out);
}

void Receiver::handleSnapshot(DecodedEvent& ev, std::string& raw, std::vector<Outcome>& out) {
  const std::optional<uint64_t> seq = ev.seq.seq;
  const bool epochChanged = ev.seq.epoch && epoch_ && *ev.seq.epoch != *epoch_;
  if ((epochChanged && isRetiredEpoch(*ev.seq.epoch)) ||
      (seq && lastSeq_ && *seq < *lastSeq_ && !epochChanged && !anchored_ && status_ != SyncStatus::Resyncing)) {
    ++metrics_.staleSnapshots;
    emitIgnored(Code::StaleSnapshot, seq, out);
    return;
  }
  const uint64_t bytes = rawSize(ev.snapshot);
  if (!snapshotAcceptable(ev, bytes, out)) return;
  adoptSnapshot(ev, bytes, raw.size(), epochChanged);
  Outcome o;
  o.kind = OutcomeKind::Applied;
  o.type = "STATE_SNAPSHOT";
  o.seq = seq;
  o.raw = std::move(raw);
  o.changedPaths.emplace_back("");
  o.acks = std::move(ev.seq.acks);
  out.push_back(std::move(o));
  drain(out);
}

bool Receiver::snapshotAcceptable(const DecodedEvent& ev, uint64_t bytes, std::vector<Outcome>& out) {
  // A rejected snapshot always yields a resync outcome, even mid-resync: it may
  // have been the very answer the app asked for.
  const bool repeat = true;
  if (bytes > options_.maxStateBytes) {
    emitError(Code::LimitExceeded, "snapshot of ~" + std::to_string(bytes) + " bytes exceeds maxStateBytes", out);
    requestResync(Code::LimitExceeded, "snapshot over maxStateBytes", out, repeat);
    return false;
  }
  // The event depth check allows for a delta's envelope, which a snapshot lacks.
  if (ev.snapshotDepth > options_.maxDepth) {
    emitError(Code::LimitExceeded, "snapshot nests deeper than maxDepth (" + std::to_string(options_.maxDepth) + ")",
              out);
    requestResync(Code::LimitExceeded, "snapshot over maxDepth", out, repeat);
    return false;
  }
  if (ev.seq.digest) {
    ++metrics_.digestChecks;
    if (stateDigest(ev.snapshot) != *ev.seq.digest) {
      requestResync(Code::DigestMismatch, "snapshot content does not match its metadata.digest", out, repeat);
      return false;
    }
  }
  return true;
}

void Receiver::adoptSnapshot(DecodedEvent& ev, uint64_t bytes, size_t eventBytes, bool epochChanged) {
  ++metrics_.snapshots;
  metrics_.snapshotBytes += eventBytes;
  if (status_ == SyncStatus::Resyncing) {  // it answered the resync
    ++metrics_.resyncSnapshots;
    metrics_.resyncSnapshotBytes += eventBytes;
  }
  state_ = std::move(ev.snapshot);
  metrics_.stateBytes = bytes;
  if (epochChanged || (ev.seq.epoch && !epoch_)) {
    recent_.clear();
    if (epochChanged) pending_.clear(), pendingBytes_ = 0;
  }
  if (epochChanged) {
    retiredEpochs_.push_back(*epoch_);
    if (retiredEpochs_.size() > 8) retiredEpochs_.pop_front();
  }
  if (ev.seq.epoch) epoch_ = ev.seq.epoch;
  anchored_ = false;
  if (ev.seq.seq) {
    lastSeq_ = ev.seq.seq;
    status_ = SyncStatus::Synced;
  } else {
    lastSeq_.reset();
    status_ = SyncStatus::Unverified;
    pending_.clear();
    pendingBytes_ = 0;
  }
  resync_.reset();
  staleStreak_ = 0;
  gapAge_ = 0;
}

void Receiver::handleDelta(DecodedEvent& ev, std::string& raw, std::vector<Outcome>& out) {
  if (!ev.seq.seq) {
    if (status_ == SyncStatus::Resyncing) return emitIgnored(Code::AwaitingSnapshot, std::nullopt, out);
    if (applyDelta(ev, raw, 0, out) && status_ == SyncStatus::Synced) status_ = SyncStatus::Unverified;
    return;
  }
  const uint64_t seq = *ev.seq.seq, base = *ev.seq.baseSeq;
  // Content identity for duplicate verification: the ops, not the envelope, so
  // a re-sent copy with other metadata or formatting still counts as the same.
  const uint64_t hash = ev.deltaHash;
  if (ev.seq.epoch && epoch_ && *ev.seq.epoch != *epoch_) {
    if (isRetiredEpoch(*ev.seq.epoch)) return emitIgnored(Code::StaleEpoch, seq, out);
    if (status_ == SyncStatus::Resyncing) return emitIgnored(Code::AwaitingSnapshot, seq, out);
    return requestResync(Code::EpochChanged, "delta from epoch " + *ev.seq.epoch + ", state is from " + *epoch_, out);
  }
  if (!lastSeq_ && status_ != SyncStatus::Resyncing) adoptPosition(ev);
  if (lastSeq_ && seq <= *lastSeq_) return handleOld(seq, hash, out);
  if (status_ == SyncStatus::Resyncing && resync_ && healableByReplay(resync_->reason) && lastSeq_ &&
      base == *lastSeq_) {
    // A replay from where we are: the state was right, just behind.
    status_ = statusBeforeResync_;
    resync_.reset();
    gapAge_ = 0;
    ++metrics_.replayHeals;
    if (applyDelta(ev, raw, hash, out)) drain(out);
    return;
  }
  if (status_ == SyncStatus::Resyncing || !lastSeq_ || base > *lastSeq_) return hold(ev, raw, hash, out);
  if (base < *lastSeq_)
    return requestResync(Code::StaleBase,
                         "delta " + std::to_string(base) + "->" + std::to_string(seq) + " straddles lastSeq " +
                             std::to_string(*lastSeq_),
                         out);
  if (applyDelta(ev, raw, hash, out)) drain(out);
}

void Receiver::adoptPosition(const DecodedEvent& ev) {
  anchorSeq_ = *ev.seq.baseSeq;
  lastSeq_ = anchorSeq_;
  anchored_ = true;
  if (ev.seq.epoch && !epoch_) epoch_ = ev.seq.epoch;
  ++metrics_.anchors;
}

void Receiver::dropAnchor() {
  lastSeq_.reset();
  anchored_ = false;
  pending_.clear();
  pendingBytes_ = 0;
  recent_.clear();
  gapAge_ = 0;
  staleStreak_ = 0;
  // A gap in the old run's numbering can never be replayed in the new one's.
  if (status_ == SyncStatus::Resyncing && resync_ && healableByReplay(resync_->reason)) {
    status_ = SyncStatus::Unverified;
    resync_.reset();
  }
}

void Receiver::handleOld(uint64_t seq, uint64_t hash, std::vector<Outcome>& out) {
  // Nothing at or below an adopted position was ever applied here: such a
  // delta means the first delta to arrive was a reordered later one, so the
  // position (and the state built on it) is wrong.
  if (anchored_ && seq <= anchorSeq_ && status_ != SyncStatus::Resyncing)
    return requestResync(Code::AnchorMismatch,
                         "delta " + std::to_string(seq) + " arrived after the position " + std::to_string(anchorSeq_) +
                             " was adopted from a later one",
                         out);
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {
    if (it->first != seq) continue;
    if (it->second == hash) {
      ++metrics_.duplicates;
      return emitIgnored(Code::Duplicate, seq, out);
    }
    if (status_ == SyncStatus::Resyncing) return emitIgnored(Code::AwaitingSnapshot, seq, out);
    return requestResync(Code::SeqConflict, "seq " + std::to_string(seq) + " arrived again with different content", out);
  }
  // Too old (or skipped by a snapshot) to verify. Idempotent to ignore, but a long
  // run of them means the counter went backwards under us.
  ++metrics_.duplicates;
  if (++staleStreak_ > options_.maxGapEvents && status_ != SyncStatus::Resyncing)
    return requestResync(Code::SeqRegression,
                         std::to_string(staleStreak_) + " consecutive events below lastSeq " +
                             std::to_string(lastSeq_ ? *lastSeq_ : 0),
                         out);
  emitIgnored(Code::Duplicate, seq, out);
}

void Receiver::hold(DecodedEvent& ev, std::string& raw, uint64_t hash, std::vector<Outcome>& out) {
  const uint64_t seq = *ev.seq.seq, base = *ev.seq.baseSeq;
  const bool resyncing = status_ == SyncStatus::Resyncing;
  auto existing = pending_.find(base);
  if (existing != pending_.end()) {
    const Held& h = existing->second;
    if (*h.event.seq.seq == seq && h.hash == hash) {
      ++metrics_.duplicates;
      return emitIgnored(Code::Duplicate, seq, out);
    }
    if (resyncing) return emitIgnored(Code::AwaitingSnapshot, seq, out);
    return requestResync(Code::SeqConflict, "two different deltas claim baseSeq " + std::to_string(base), out);
  }
  if (pending_.size() >= options_.reorderWindow || pendingBytes_ + raw.size() > options_.reorderBytes) {
    if (resyncing) return emitIgnored(Code::AwaitingSnapshot, seq, out);
    return requestResync(Code::Gap, "reorder window full while waiting for seq " +
                                    (lastSeq_ ? std::to_string(*lastSeq_ + 1) : std::string("baseline")),
                         out);
  }
  if (pending_.empty()) gapAge_ = 0;
  Held h{std::move(ev), std::move(raw), hash};
  pendingBytes_ += h.raw.size();
  pending_.emplace(base, std::move(h));
  ++metrics_.held;
  emitIgnored(resyncing ? Code::AwaitingSnapshot : Code::Reordered, seq, out);
}

bool Receiver::applyDelta(DecodedEvent& ev, std::string& raw, uint64_t hash, std::vector<Outcome>& out) {
  PatchTransaction tx(state_, options_.maxDepth);
  PatchResult r = ev.opsProblem.ok() ? tx.apply(std::move(ev.ops)) : ev.opsProblem;
  if (!r.ok()) {
    if (r.status == PatchStatus::Malformed || r.status == PatchStatus::LimitExceeded) {
      emitError(patchCode(r.status), r.message, out);
      requestResync(r.status == PatchStatus::Malformed ? Code::Malformed : Code::LimitExceeded, r.message, out);
    } else {
      requestResync(patchCode(r.status), r.message, out);
    }
    return false;
  }
  const int64_t newBytes = static_cast<int64_t>(metrics_.stateBytes) + tx.sizeDelta();
  if (newBytes > static_cast<int64_t>(options_.maxStateBytes)) {
    tx.rollback();
    emitError(Code::LimitExceeded, "state would grow to ~" + std::to_string(newBytes) + " bytes, over maxStateBytes", out);
    requestResync(Code::LimitExceeded, "delta would exceed maxStateBytes", out);
    return false;
  }
  bool proven = false;
  if (ev.seq.digest) {
    // O(state), but the sender stamps a digest only every K events (see docs/wire.md).
    ++metrics_.digestChecks;
    if (stateDigest(state_) != *ev.seq.digest) {
      tx.rollback();
      requestResync(Code::DigestMismatch, "state after seq " + std::to_string(ev.seq.seq.value_or(0)) +
                                           " does not match the sender's digest",
                    out);
      return false;
    }
    proven = ev.seq.seq.has_value();
  }
  tx.commit();
  if (proven && status_ == SyncStatus::Unverified) {
    // The sender's own digest of its state at this seq: position and content
    // are now both known good (an adopted position included).
    status_ = SyncStatus::Synced;
    anchored_ = false;
  }
  metrics_.stateBytes = newBytes < 0 ? 0 : static_cast<uint64_t>(newBytes);
  ++metrics_.deltasApplied;
  metrics_.deltaBytes += raw.size();
  const uint64_t snapshotCost = metrics_.stateBytes + kSnapshotEnvelope;
  if (snapshotCost > raw.size()) metrics_.deltaSavedBytes += snapshotCost - raw.size();
  if (ev.seq.seq) {
    lastSeq_ = ev.seq.seq;
    remember(*ev.seq.seq, hash);
  }
  staleStreak_ = 0;
  Outcome o;
  o.kind = OutcomeKind::Applied;
  o.type = "STATE_DELTA";
  o.seq = ev.seq.seq;
  o.raw = std::move(raw);
  o.changedPaths = tx.takeChangedPaths();
  o.acks = std::move(ev.seq.acks);
  out.push_back(std::move(o));
  return true;
}

void Receiver::prunePending() {
  // Held deltas whose base is behind lastSeq can never apply: either they are
  // already contained in the state (seq <= lastSeq) or they straddle it.
  while (!pending_.empty() && lastSeq_ && pending_.begin()->first < *lastSeq_) {
    pendingBytes_ -= pending_.begin()->second.raw.size();
    pending_.erase(pending_.begin());
  }
}

void Receiver::drain(std::vector<Outcome>& out) {
  while (lastSeq_ && status_ != SyncStatus::Resyncing) {
    prunePending();
    auto it = pending_.find(*lastSeq_);
    if (it == pending_.end()) break;
    Held h = std::move(it->second);
    pendingBytes_ -= h.raw.size();
    pending_.erase(it);
    if (!applyDelta(h.event, h.raw, h.hash, out)) break;
    ++metrics_.reordersHealed;
  }
  if (pending_.empty()) gapAge_ = 0;
}

}  // namespace agui_sync
