#include "facade/access_gate.h"

#include <nlohmann/json.hpp>

#include <agui_sync/canonical_json.h>

#include "json/sha256.h"

namespace agui_sync {

namespace {

bool accepted(int status) { return status >= 200 && status <= 299; }

AccessDecision verdict(AccessVerdict v, int status = 0) { return AccessDecision{v, status}; }

}  // namespace

AccessDecision judgeAccess(const AccessInput& in) {
  // The backend answered a forwarded request: its answer decides, whatever was known before.
  if (in.upstreamStatus != 0) {
    if (accepted(in.upstreamStatus)) return verdict(AccessVerdict::Grant);
    return verdict(AccessVerdict::Deny, in.upstreamStatus);
  }
  if (!in.looked) return verdict(AccessVerdict::Lookup);
  if (in.granted) return verdict(AccessVerdict::Serve);
  if (in.hasAuthorizer && in.authorized < 0) return verdict(AccessVerdict::Ask);
  if (in.authorized == 1) return verdict(AccessVerdict::Grant);
  // Not known (or the hook said no): a run that carries nothing of the thread still goes to the
  // backend, which judges it; nothing else does.
  if (in.kind == AccessKind::Start && !in.touchesThread) return verdict(AccessVerdict::Forward);
  return verdict(AccessVerdict::Refuse, 403);
}

std::string requesterOf(const nlohmann::json& credentials) { return sha256Hex(canonicalJson(credentials)); }

const char* grantScope() { return "grant"; }

std::string grantId(const std::string& threadId, const std::string& requester) {
  return sha256Hex(canonicalJson(nlohmann::json::array({threadId, requester})));
}

}  // namespace agui_sync
