#pragma once
// User edits: the write path from the app back to the agent (docs/wire.md,
// section 9; docs/concepts.md#editing-shared-state).
//
// The client keeps two layers. The *confirmed* state is the agent's, exactly as
// received and verified. *Pending edits* are the user's RFC 6902 patches that
// the agent has not acknowledged yet; the *visible* state is the confirmed
// state with every pending edit replayed on top, in order (an edit that no
// longer applies is skipped and stays pending: the agent decides its fate).
//
// Ownership is by longest JSON Pointer prefix ("" is the root; default shared):
//   agent   edits are refused ('agent-owned'), locally and by the emitter. An
//           edit at a path *above* an agent-owned one is refused as well.
//   user    an agent write that lands while an edit is pending is masked: the
//           user's value stays visible until the agent acknowledges the edit.
//   shared  an agent write that overlaps a pending edit is a conflict, reported
//           whichever side wins, and resolved by the ConflictPolicy.
// Two pointers overlap when one is a prefix of the other (token-wise). A write
// to an array element counts as a write to the whole array, since inserting or
// removing an element shifts every index after it.
//
// The emitter acknowledges every edit it receives in the `metadata.acks` of a
// state event: [{"editId","status":"applied"|"rejected","reason"?,"seq"?}].
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codes.h"

namespace agui_sync {

enum class Owner : uint8_t { Shared, Agent, User };
enum class ConflictPolicy : uint8_t { AgentWins, UserWins };

const char* ownerName(Owner owner);
const char* conflictPolicyName(ConflictPolicy policy);

struct OwnershipRule {
  std::string path;  // JSON Pointer
  Owner owner = Owner::Shared;
};

struct EditPolicy {
  std::vector<OwnershipRule> ownership;
  ConflictPolicy onConflict = ConflictPolicy::AgentWins;
};

// One edit as it travels to the agent (RunAgentInput.forwardedProps.stateSync.edits).
struct EditRequest {
  std::string editId;             // unique per client: "<clientId>:<n>"
  std::optional<uint64_t> baseSeq;  // the confirmed lastSeq when the edit was made (null: none)
  nlohmann::json ops;             // RFC 6902, `test` allowed
};

// An edit the agent has not acknowledged yet (SyncEngine::pendingEdits()).
struct PendingEdit {
  std::string editId;
  std::optional<uint64_t> baseSeq;
  nlohmann::json ops;   // as the app passed them
  bool applies = true;  // false: it no longer applies to the confirmed state (skipped
                        // in the visible state); it stays pending until the agent decides
};

// The agent's verdict on one edit, as carried by metadata.acks.
struct EditAck {
  std::string editId;
  bool applied = false;
  Code reason = Code::Conflict;  // when !applied: an edit rejection reason (codes.h, category edit)
  std::optional<uint64_t> seq;   // the seq that applied (or refused) it; absent = the carrying event's
};

// The client part of an editId: everything before its last ':' (the whole id
// when it has none). Edits from one origin never conflict with each other.
std::string editOrigin(const std::string& editId);

}  // namespace agui_sync
