#pragma once
// StateEmitter's internals, shared by state_emitter.cpp (state events, replay)
// and edit_intake.cpp (user edits). Not part of the public API.
#include <agui_sync/state_emitter.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "edit/edit_ledger.h"
#include "edit/edit_paths.h"
#include "json/json_diff.h"

namespace agui_sync {

using nlohmann::json;

// The emitter's state; StateEmitter's public methods forward here.
struct StateEmitter::Impl {
  Impl(EmitterOptions options, json initialState);

  std::vector<json> updateImpl(const json& target, json* owned);
  std::optional<std::vector<json>> updateByDiff(const StateEmitter::DiffFn& diff, json* opsOut);
  // A diff's ops onto the state, atomically; false (nothing changed) if they do not apply.
  bool applyInPlace(const json& ops);
  PatchOutcome patch(json ops);
  std::vector<json> replaySince(uint64_t seq, const std::string* epoch, const std::vector<uint64_t>& skip) const;
  // `acks`: metadata.acks for the event (edit_intake.cpp), or nullptr.
  std::vector<json> emit(json ops, bool forceSnapshot = false, const json* acks = nullptr);
  // `writes`: writesOf() the ops, taken before they changed the state.
  std::vector<json> emitAgent(json ops, std::vector<Tokens> writes, bool forceSnapshot = false);
  json metadata(uint64_t seq, const uint64_t* baseSeq, const std::string* digest, const json* acks = nullptr) const;
  json snapshotEvent(uint64_t seq, const std::string* digest, const json* acks) const;
  // A snapshot of the current state; its acks are the verdicts given after
  // `since` (a client's position) or, when null, the most recent ones.
  json snapshot(std::optional<uint64_t> since) const;
  // Valid RFC 6902 ops (validatePatch): depth-checked and repaired (patch()'s rules).
  std::optional<Failure> prepareOps(json& ops);
  size_t adoptHistory(const std::vector<json>& events);
  void adoptEvent(const json& event, uint64_t seq);
  EditsOutcome applyEdits(const std::vector<EditRequest>& edits, const EditPolicy& policy);
  EditAck judge(const EditRequest& edit, const OwnershipMap& owners, ConflictPolicy policy,
                json& accepted, std::vector<Tokens>& written);
  size_t snapshotEventBytes(const json& meta, size_t limit) const;
  bool snapshotCheaper(size_t deltaBytes, const json& snapshotMeta) const;
  void remember(json event, size_t bytes);
  void refuse(Code code, std::string message, std::optional<size_t> opIndex = std::nullopt);

  struct Stored {
    json event;
    size_t bytes = 0;  // serialized size of the event's JSON
  };

  EmitterOptions options_;
  DiffOptions diffOptions_;
  json state_;
  uint64_t seq_ = 0;
  std::deque<Stored> ring_;  // consecutive deltas: ring_[i] has seq floor_ + i + 1
  size_t ringBytes_ = 0;
  uint64_t floor_ = 0;
  std::string configError_;
  std::optional<Failure> lastFailure_;
  EditLedger ledger_;
  mutable EmitterStats stats_;  // replaySince() const counts too
};

}  // namespace agui_sync
