#include "facade/access_facade.h"

#include <optional>

#include <agui_sync/options.h>

#include "facade/access_gate.h"
#include "facade/approval_gate.h"
#include "facade/facade_json.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// The request is flat but for RunAgentInput.resume, read as the approval gate reads it.
const size_t kMaxRequestDepth = Options{}.maxDepth + 8;

const char* verdictName(AccessVerdict v) {
  switch (v) {
    case AccessVerdict::Lookup: return "lookup";
    case AccessVerdict::Ask: return "ask";
    case AccessVerdict::Serve: return "serve";
    case AccessVerdict::Forward: return "forward";
    case AccessVerdict::Grant: return "grant";
    case AccessVerdict::Refuse: return "refuse";
    case AccessVerdict::Deny: return "deny";
  }
  return "refuse";
}

std::optional<AccessKind> kindOf(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& name = value.get_ref<const std::string&>();
  if (name == "attach") return AccessKind::Attach;
  if (name == "resume") return AccessKind::Resume;
  if (name == "start") return AccessKind::Start;
  return std::nullopt;
}

bool flag(const json& request, const char* name) {
  auto it = request.find(name);
  return it != request.end() && it->is_boolean() && it->get<bool>();
}

// The credential headers' values, in the driver's fixed order: a string, or null when absent.
bool validCredentials(const json& value) {
  if (!value.is_array() || value.size() > 16) return false;
  for (const json& v : value)
    if (!v.is_null() && !v.is_string()) return false;
  return true;
}

// The request's fields, or nullopt when one is missing or of the wrong type.
std::optional<AccessInput> inputOf(const json& request) {
  if (!request.is_object()) return std::nullopt;
  auto kind = request.find("kind");
  auto thread = request.find("threadId");
  auto credentials = request.find("credentials");
  if (kind == request.end() || thread == request.end() || credentials == request.end()) return std::nullopt;
  std::optional<AccessKind> k = kindOf(*kind);
  if (!k || !thread->is_string() || !validCredentials(*credentials)) return std::nullopt;
  AccessInput in;
  in.kind = *k;
  // Approvals read the thread (a verdict tells its value); resume entries that carry none do not.
  auto resume = request.find("resume");
  in.touchesThread = flag(request, "touchesThread") || (resume != request.end() && carriesApprovals(&*resume));
  in.looked = flag(request, "looked");
  in.granted = flag(request, "granted");
  in.hasAuthorizer = flag(request, "hasAuthorizer");
  if (auto a = request.find("authorized"); a != request.end() && a->is_boolean()) in.authorized = a->get<bool>() ? 1 : 0;
  if (auto s = request.find("upstreamStatus"); s != request.end() && s->is_number_integer()) {
    const auto status = s->get<long long>();
    if (status < 100 || status > 599) return std::nullopt;
    in.upstreamStatus = static_cast<int>(status);
  }
  return in;
}

}  // namespace

std::string judgeAccessJson(const std::string& requestJson) {
  json request;
  if (std::optional<Failure> failure = parseBounded(requestJson, kMaxRequestDepth, request)) return failureJson(*failure);
  std::optional<AccessInput> in = inputOf(request);
  if (!in)
    return failureJson(Code::InvalidRequest,
                       "judgeAccess needs {kind: attach|resume|start, threadId, credentials: [string|null]} with booleans and an HTTP "
                       "upstreamStatus");
  const AccessDecision d = judgeAccess(*in);
  json out = {{"ok", true}, {"verdict", verdictName(d.verdict)}};
  if (d.verdict == AccessVerdict::Lookup || d.verdict == AccessVerdict::Grant || d.verdict == AccessVerdict::Deny) {
    out["scope"] = grantScope();
    out["id"] = grantId(request["threadId"].get<std::string>(), requesterOf(request["credentials"]));
  }
  if (d.verdict == AccessVerdict::Refuse) {
    out["status"] = d.status;
    out["code"] = codeName(Code::NotAuthorized);
    out["message"] = "the backend has not accepted this requester for this thread";
  }
  if (d.verdict == AccessVerdict::Deny) out["status"] = d.status;
  return jsonText(out);
}

}  // namespace agui_sync
