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

namespace {

// The node at `path` in `doc`, or null; `valid` says whether path is a pointer.
const json* nodeAt(const json& doc, const std::string& path, bool& valid) {
  Tokens tokens;
  std::string error;
  valid = parsePointer(path, tokens, error);
  return valid ? resolvePointer(doc, tokens, tokens.size()) : nullptr;
}

}  // namespace

std::optional<Code> ApprovalGuard::statusBlocker(SyncStatus status) const {
  switch (status) {
    case SyncStatus::Resyncing: return Code::Resyncing;
    case SyncStatus::Unverified:
      if (!options_.trustUnsequenced) return Code::Unverified;
      break;
    case SyncStatus::Synced: break;
  }
  return std::nullopt;
}

std::optional<Code> ApprovalGuard::liveness(uint64_t nowMs) const {
  if (!connected_) return Code::Disconnected;
  if (!hasActivity_ || nowMs < lastActivityMs_ || nowMs - lastActivityMs_ > options_.staleAfterMs) return Code::Stale;
  return std::nullopt;
}

std::optional<Code> ApprovalGuard::blocker(uint64_t nowMs) const {
  if (std::optional<Code> why = statusBlocker(engine_.status())) return why;
  if (std::optional<Code> why = liveness(nowMs)) return why;
  if (engine_.pendingCount() > 0) return Code::GapPending;
  return std::nullopt;
}

// An activity is its own line (docs/wire.md section 11): a resync or a held
// delta of the state says nothing about it, and one of its own blocks it.
std::optional<Code> ApprovalGuard::activityBlocker(const std::string& messageId, uint64_t nowMs) const {
  const std::optional<ActivityView> activity = engine_.activity(messageId);
  if (!activity) return Code::Missing;
  if (std::optional<Code> why = statusBlocker(activity->status)) return why;
  if (std::optional<Code> why = liveness(nowMs)) return why;
  if (activity->held > 0) return Code::GapPending;
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
  if (token) *token = ViewToken{path, engine_.lastSeq(), stateDigest(*node), std::nullopt};
  return GuardResult{true};
}

GuardResult ApprovalGuard::viewActivity(const std::string& messageId, const std::string& path, const json** value,
                                        ViewToken* token) const {
  bool valid = false;
  const std::optional<ActivityView> activity = engine_.activity(messageId);
  const json* node = activity ? nodeAt(*activity->content, path, valid) : nullptr;
  if (activity && !valid) return {false, Code::InvalidToken};
  if (!node) return {false, Code::Missing};
  if (value) *value = node;
  if (token) *token = ViewToken{path, activity->lastSeq, stateDigest(*node), messageId};
  return GuardResult{true};
}

// The activity's own line decides, as the state's does for the state: its
// blockers, then the digest of the value at the path in its content now.
GuardResult ApprovalGuard::approveActivity(const ViewToken& token, uint64_t nowMs, Approval* approval) const {
  const std::string& messageId = *token.messageId;
  if (std::optional<Code> why = activityBlocker(messageId, nowMs)) return {false, *why};
  if (token.digest.rfind("sha256:", 0) != 0) return {false, Code::InvalidToken};
  const std::optional<ActivityView> activity = engine_.activity(messageId);
  bool valid = false;
  const json* node = nodeAt(*activity->content, token.path, valid);
  if (!valid) return {false, Code::InvalidToken};
  if (!node) return {false, Code::Missing};
  const std::string current = stateDigest(*node);
  if (current != token.digest) return {false, Code::Changed};
  if (approval) *approval = Approval{token.path, activity->lastSeq, token.seq, current, *activity->epoch, messageId};
  return GuardResult{true};
}

GuardResult ApprovalGuard::approve(const ViewToken& token, uint64_t nowMs, Approval* approval) const {
  if (token.messageId) return approveActivity(token, nowMs, approval);
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
  if (approval) *approval = Approval{token.path, engine_.lastSeq(), token.seq, current, engine_.epoch(), std::nullopt};
  return GuardResult{true};
}

bool verifyApproval(const Approval& approval, const json& agentState) {
  if (approval.digest.empty() || approval.messageId) return false;
  return digestAt(agentState, approval.path) == approval.digest;
}

bool approvalFromJson(const json& j, Approval& a) {
  if (!j.is_object()) return false;
  auto path = j.find("path");
  auto digest = j.find("digest");
  auto messageId = j.find("messageId");
  if (path == j.end() || !path->is_string() || digest == j.end() || !digest->is_string()) return false;
  if (messageId != j.end() && !messageId->is_null() && !messageId->is_string()) return false;
  a.path = *path->get_ptr<const std::string*>();
  a.digest = *digest->get_ptr<const std::string*>();
  a.messageId = messageId != j.end() && messageId->is_string() ? std::optional<std::string>(*messageId) : std::nullopt;
  return true;
}

std::optional<Code> judgeApproval(const Approval& approval, const json* agentState, const json* activities) {
  const json* doc = agentState;
  if (approval.messageId) {
    doc = nullptr;
    if (activities != nullptr && activities->is_object()) {
      auto it = activities->find(*approval.messageId);
      if (it != activities->end() && !it->is_null()) doc = &*it;
    }
    if (doc == nullptr) return Code::Missing;  // the agent holds no such activity: nothing to vouch for
  }
  if (doc == nullptr || approval.digest.empty() || digestAt(*doc, approval.path) != approval.digest) return Code::Changed;
  return std::nullopt;
}

}  // namespace agui_sync
