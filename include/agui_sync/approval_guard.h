#pragma once
// Drift-aware approval guard.
//
// A human approves what the UI shows; the agent acts on what it holds. The guard
// makes those provably the same thing:
//  - view(path) hands out the value plus a token {path, seq, digest} where the
//    digest is stateDigest() (RFC 8785 + SHA-256) of the value at path;
//  - approve(token) succeeds only while the state is verified (status synced, or
//    unverified with trustUnsequenced), the connection is live (activity within
//    staleAfterMs), no out-of-order deltas are waiting, and the value at path
//    still has the token's digest; the approval then carries {path, seq, digest,
//    epoch} so the agent can re-check it against its own state (verifyApproval).
//  - an activity (docs/wire.md section 11) is a target too: viewActivity(messageId,
//    path) tokens the value at path in that activity's content, with the
//    activity's own seq, and approve() judges it by that activity's own line
//    (its status, its held deltas) and liveness, never by the state's; the
//    approval carries the messageId, so the agent checks it against its content
//    of that activity (judgeApproval), not its state.
// Time is passed in by the caller (milliseconds, any monotonic origin), which
// keeps the guard deterministic and testable.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "codes.h"
#include "sync_engine.h"

namespace agui_sync {

struct GuardOptions {
  uint64_t staleAfterMs = 15000;
  bool trustUnsequenced = false;  // allow approvals on a stream without seq numbers
};

struct ViewToken {
  std::string path;
  std::optional<uint64_t> seq;  // the state's lastSeq, or the activity's own
  std::string digest;
  std::optional<std::string> messageId;  // set: the value is in that activity's content
};

struct Approval {
  std::string path;
  std::optional<uint64_t> seq;        // lastSeq when approved
  std::optional<uint64_t> viewedSeq;  // lastSeq when the value was viewed
  std::string digest;
  std::optional<std::string> epoch;
  std::optional<std::string> messageId;  // an activity's content was approved, not the state
};

struct GuardResult {
  bool ok = false;
  // When !ok, a guard code: Resyncing | Unverified | Disconnected | Stale |
  // GapPending | Changed | Missing | InvalidToken | EditPending (a pending
  // user edit writes at, under or above the path: edits.h).
  Code reason = Code::InvalidToken;
};

class ApprovalGuard {
 public:
  ApprovalGuard(const SyncEngine& engine, GuardOptions options) : engine_(engine), options_(options) {}

  const GuardOptions& options() const { return options_; }
  // Bytes or a heartbeat arrived at `nowMs`.
  void noteActivity(uint64_t nowMs) { lastActivityMs_ = nowMs; hasActivity_ = true; connected_ = true; }
  // The stream ended or broke. Silence alone takes staleAfterMs to notice; a
  // known-dead connection blocks approvals at once, until bytes arrive again.
  void noteDisconnected() { connected_ = false; }

  // Why an approval would be refused right now regardless of path (empty = approvable).
  std::optional<Code> blocker(uint64_t nowMs) const;
  // The same for a value in activity `messageId`: its own status and held
  // deltas, and the connection's liveness; Missing when no such activity is held.
  std::optional<Code> activityBlocker(const std::string& messageId, uint64_t nowMs) const;

  // The value at `path` (RFC 6901) and its token, or a reason (missing / invalid-token).
  GuardResult view(const std::string& path, const nlohmann::json** value, ViewToken* token) const;
  // The value at `path` in activity `messageId`'s content (missing: no such
  // activity, or the path does not resolve in it).
  GuardResult viewActivity(const std::string& messageId, const std::string& path, const nlohmann::json** value,
                           ViewToken* token) const;
  // A token with a messageId is judged against that activity, else against the state.
  GuardResult approve(const ViewToken& token, uint64_t nowMs, Approval* approval) const;

 private:
  std::optional<Code> statusBlocker(SyncStatus status) const;
  std::optional<Code> liveness(uint64_t nowMs) const;
  GuardResult approveActivity(const ViewToken& token, uint64_t nowMs, Approval* approval) const;

  const SyncEngine& engine_;
  GuardOptions options_;
  uint64_t lastActivityMs_ = 0;
  bool hasActivity_ = false;
  bool connected_ = true;
};

// Digest of the value at `path` in `state` ("" when the path does not resolve
// or is not a valid pointer).
std::string digestAt(const nlohmann::json& state, const std::string& path);

// What the agent calls before acting: true only if `agentState` at
// approval.path has exactly approval.digest. An approval of an activity
// (messageId set) is never of the state: false (judgeApproval checks it).
bool verifyApproval(const Approval& approval, const nlohmann::json& agentState);

// The agent's (or the proxy's) check of any approval, against the document it
// names: with messageId, `activities[messageId]` ({messageId: content}, the
// agent's; null or absent: none held), else `agentState` (null: none). nullopt
// when verified; else Missing (the activity it names is not held) or Changed.
// An approval as JSON (sent by a client): path and digest strings, an optional
// messageId string (null counts as absent). false: not an approval (anything
// else; a messageId of another type is malformed, never read as the state's).
bool approvalFromJson(const nlohmann::json& j, Approval& a);

std::optional<Code> judgeApproval(const Approval& approval, const nlohmann::json* agentState,
                                  const nlohmann::json* activities);

}  // namespace agui_sync
