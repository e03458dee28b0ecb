#pragma once
// The client's edit layer (edits.h): pending user edits over the confirmed state.
//
// There is one document. While edits are pending it holds the *visible* state:
// each pending edit is applied as a PatchTransaction that keeps its undo log.
// Before the confirmed state changes (an agent event), detach() rolls the edits
// back (last first), which restores the confirmed document exactly; after it,
// rebase() turns the events' acks and overlapping writes into edit outcomes,
// and attach() replays the edits that remain. Cost: O(pending edits) per feed
// while edits are pending, nothing otherwise; never a copy of the state.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>
#include <agui_sync/edits.h>
#include <agui_sync/outcome.h>

#include "edit/edit_paths.h"
#include "json/json_patch.h"

namespace agui_sync {

class EditLayer {
 public:
  static constexpr size_t kMaxPendingEdits = 1024;

  EditLayer(size_t maxDepth, size_t maxEditBytes) : maxDepth_(maxDepth), maxEditBytes_(maxEditBytes) {}
  bool configure(const EditPolicy& policy, std::string clientId, std::string& error);
  const std::string& clientId() const { return clientId_; }

  bool empty() const { return edits_.empty(); }
  // `doc` goes from visible to confirmed (no-op when nothing is applied).
  void detach(nlohmann::json& doc);
  // `doc` goes from confirmed to visible: every pending edit that applies is replayed.
  void attach(nlohmann::json& doc);

  // Applies a new edit atomically to `doc` (the visible state). Refused (state
  // unchanged): invalid-patch, agent-owned, limit-exceeded (also once the
  // counter reached kMaxSeq: editIds stay JS-safe integers, as checkpoints
  // store them), patch-failed, precondition-failed; failure.opIndex names the op.
  std::optional<Failure> edit(nlohmann::json& doc, nlohmann::json ops, std::optional<uint64_t> baseSeq,
                              std::string& editId);

  // After agent events changed the (detached, confirmed) `doc`: for every
  // applied outcome in out[from..], inserts right after it the edit outcomes it
  // caused (edit-acked / edit-rejected / conflict). Call attach() afterwards.
  void rebase(const nlohmann::json& doc, std::vector<Outcome>& out, size_t from);

  // Replaces the pending edits with stored ones (their ids kept) over the
  // confirmed `doc`, and continues the edit numbering. An edit the rules now
  // refuse becomes an edit-rejected outcome. `doc` is left visible (attached).
  void restore(nlohmann::json& doc, std::vector<PendingEdit> edits, std::string clientId, uint64_t counter,
               std::vector<Outcome>& out);
  uint64_t counter() const { return counter_; }

  std::vector<PendingEdit> pending() const;
  // A pending edit writes at, under or above `path`.
  bool pendingAt(const Tokens& path) const;

 private:
  struct Write {
    Tokens path;                        // as writtenPath() saw it
    Owner owner = Owner::Shared;
    // The agent's value there, as a content hash (absent = no such path): a
    // snapshot, which does not say what it changed, is compared against it.
    std::optional<uint64_t> base;
    std::optional<nlohmann::json> mine;  // the value the edit left there
    std::optional<uint64_t> mineHash;    // its content hash: the agent holding it is no conflict
  };
  struct Edit {
    PendingEdit info;
    PatchOps ops;
    std::vector<Write> writes;
    std::unique_ptr<PatchTransaction> tx;  // set while applied to the document
  };

  std::optional<Failure> check(const nlohmann::json& doc, const nlohmann::json& ops, PatchOps& parsed,
                               std::vector<Write>& writes) const;
  bool applyEdit(nlohmann::json& doc, Edit& e, PatchResult* result = nullptr);
  void readBases(nlohmann::json& doc, std::vector<Write>& writes);
  static void readMine(const nlohmann::json& doc, std::vector<Write>& writes);
  void onApplied(const nlohmann::json& doc, const Outcome& applied, std::vector<Outcome>& out);
  bool takeAcks(const Outcome& applied, std::vector<Outcome>& out);
  void checkWrites(const nlohmann::json& doc, const Outcome& applied, bool ours, std::vector<Outcome>& out);
  void conflict(Edit& e, const Write& w, const nlohmann::json& doc, std::optional<uint64_t> seq,
                std::vector<Outcome>& out);

  size_t maxDepth_;
  size_t maxEditBytes_;
  OwnershipMap owners_;
  ConflictPolicy onConflict_ = ConflictPolicy::AgentWins;
  std::string clientId_;
  uint64_t counter_ = 0;
  std::vector<Edit> edits_;
  std::vector<std::string> lostToAgent_;  // edits dropped by a conflict the agent won (late acks still count)
};

}  // namespace agui_sync
