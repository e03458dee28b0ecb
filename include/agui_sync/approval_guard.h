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
  std::optional<uint64_t> seq;
  std::string digest;
};

struct Approval {
  std::string path;
  std::optional<uint64_t> seq;        // lastSeq when approved
  std::optional<uint64_t> viewedSeq;  // lastSeq when the value was viewed
  std::string digest;
  std::optional<std::string> epoch;
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

  // The value at `path` (RFC 6901) and its token, or a reason (missing / invalid-token).
  GuardResult view(const std::string& path, const nlohmann::json** value, ViewToken* token) const;
  GuardResult approve(const ViewToken& token, uint64_t nowMs, Approval* approval) const;

 private:
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
// approval.path has exactly approval.digest.
bool verifyApproval(const Approval& approval, const nlohmann::json& agentState);

}  // namespace agui_sync
