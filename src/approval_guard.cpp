#include "approval_guard.h"

#include "canonical_json.h"
#include "json_pointer.h"

namespace agui_sync {

using nlohmann::json;

std::string digestAt(const json& state, const std::string& path) {
  Tokens tokens;
  std::string error;
  if (!parsePointer(path, tokens, error)) return "";
  const json* node = resolvePointer(state, tokens, tokens.size());
  return node ? stateDigest(*node) : "";
}

std::string ApprovalGuard::blocker(uint64_t nowMs) const {
  switch (engine_.status()) {
    case SyncStatus::Resyncing: return "resyncing";
    case SyncStatus::Unverified:
      if (!options_.trustUnsequenced) return "unverified";
      break;
    case SyncStatus::Synced: break;
  }
  if (!connected_) return "disconnected";
  if (!hasActivity_ || nowMs < lastActivityMs_ || nowMs - lastActivityMs_ > options_.staleAfterMs) return "stale";
  if (engine_.receiver().pendingCount() > 0) return "gap-pending";
  return "";
}

GuardResult ApprovalGuard::view(const std::string& path, const json** value, ViewToken* token) const {
  Tokens tokens;
  std::string error;
  if (!parsePointer(path, tokens, error)) return {false, "invalid-token"};
  const json* node = resolvePointer(engine_.state(), tokens, tokens.size());
  if (!node) return {false, "missing"};
  if (value) *value = node;
  if (token) *token = ViewToken{path, engine_.lastSeq(), stateDigest(*node)};
  return {true, ""};
}

GuardResult ApprovalGuard::approve(const ViewToken& token, uint64_t nowMs, Approval* approval) const {
  std::string why = blocker(nowMs);
  if (!why.empty()) return {false, why};
  if (token.digest.rfind("sha256:", 0) != 0) return {false, "invalid-token"};
  Tokens tokens;
  std::string error;
  if (!parsePointer(token.path, tokens, error)) return {false, "invalid-token"};
  const json* node = resolvePointer(engine_.state(), tokens, tokens.size());
  if (!node) return {false, "missing"};
  // The digest, not the seq, decides: unrelated deltas elsewhere in the state
  // must not invalidate what the person saw, but any change at `path` must.
  const std::string current = stateDigest(*node);
  if (current != token.digest) return {false, "changed"};
  if (approval) *approval = Approval{token.path, engine_.lastSeq(), token.seq, current, engine_.receiver().epoch()};
  return {true, ""};
}

bool verifyApproval(const Approval& approval, const json& agentState) {
  if (approval.digest.empty()) return false;
  return digestAt(agentState, approval.path) == approval.digest;
}

}  // namespace agui_sync
