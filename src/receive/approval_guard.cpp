#include <agui_sync/approval_guard.h>

#include <agui_sync/canonical_json.h>
#include "json/json_pointer.h"

namespace agui_sync {

using nlohmann::json;

std::string digestAt(const json& state, const std::string& path) {
  Tokens tokens;
  std::string error;
  if (!parsePointer(path, tokens, error)) return "";
  const json* node = resolvePointer(state, tokens, tokens.size());
  return node ? stateDigest(*node) : "";
}

std::optional<Code> ApprovalGuard::blocker(uint64_t nowMs) const {
  switch (engine_.status()) {
    case SyncStatus::Resyncing: return Code::Resyncing;
    case SyncStatus::Unverified:
      if (!options_.trustUnsequenced) return Code::Unverified;
      break;
    case SyncStatus::Synced: break;
  }
  if (!connected_) return Code::Disconnected;
  if (!hasActivity_ || nowMs < lastActivityMs_ || nowMs - lastActivityMs_ > options_.staleAfterMs) return Code::Stale;
  if (engine_.pendingCount() > 0) return Code::GapPending;
  return std::nullopt;
}

GuardResult ApprovalGuard::view(const std::string& path, const json** value, ViewToken* token) const {
  Tokens tokens;
  std::string error;
  if (!parsePointer(path, tokens, error)) return {false, Code::InvalidToken};
  if (engine_.editPendingAt(path)) return {false, Code::EditPending};
  const json* node = resolvePointer(engine_.state(), tokens, tokens.size());
  if (!node) return {false, Code::Missing};
  if (value) *value = node;
  if (token) *token = ViewToken{path, engine_.lastSeq(), stateDigest(*node)};
  return GuardResult{true};
}

GuardResult ApprovalGuard::approve(const ViewToken& token, uint64_t nowMs, Approval* approval) const {
  if (std::optional<Code> why = blocker(nowMs)) return {false, *why};
  if (token.digest.rfind("sha256:", 0) != 0) return {false, Code::InvalidToken};
  Tokens tokens;
  std::string error;
  if (!parsePointer(token.path, tokens, error)) return {false, Code::InvalidToken};
  // A pending edit at, under or above the path: the person would approve their
  // own value, which the agent does not hold. Elsewhere the visible state is
  // the confirmed one, so the digests below are the agent's.
  if (engine_.editPendingAt(token.path)) return {false, Code::EditPending};
  const json* node = resolvePointer(engine_.state(), tokens, tokens.size());
  if (!node) return {false, Code::Missing};
  // The digest, not the seq, decides: unrelated deltas elsewhere in the state
  // must not invalidate what the person saw, but any change at `path` must.
  const std::string current = stateDigest(*node);
  if (current != token.digest) return {false, Code::Changed};
  if (approval) *approval = Approval{token.path, engine_.lastSeq(), token.seq, current, engine_.epoch()};
  return GuardResult{true};
}

bool verifyApproval(const Approval& approval, const json& agentState) {
  if (approval.digest.empty()) return false;
  return digestAt(agentState, approval.path) == approval.digest;
}

}  // namespace agui_sync
