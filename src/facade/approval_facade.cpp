#include "facade/approval_facade.h"

#include <agui_sync/options.h>

#include "facade/approval_gate.h"
#include "facade/facade_json.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;

namespace {

const char* verdictName(GateVerdict v) {
  switch (v) {
    case GateVerdict::Pass: return "pass";
    case GateVerdict::Peek: return "peek";
    case GateVerdict::Claim: return "claim";
    case GateVerdict::Forward: return "forward";
    case GateVerdict::Replay: return "replay";
    case GateVerdict::Refuse: return "refuse";
  }
  return "refuse";
}

json claimsJson(const std::vector<GateClaim>& claims) {
  json out = json::array();
  for (const GateClaim& c : claims) out.push_back({{"interruptId", c.interruptId}, {"record", c.record}});
  return out;
}

json answerOf(const GateDecision& d) {
  json out = {{"ok", true}, {"verdict", verdictName(d.verdict)}};
  if (!d.releases.empty()) out["releases"] = claimsJson(d.releases);
  switch (d.verdict) {
    case GateVerdict::Peek:
      out["interruptIds"] = d.interruptIds;
      if (!d.activities.empty()) out["activities"] = d.activities;
      break;
    case GateVerdict::Forward: out["interruptIds"] = d.interruptIds; break;
    case GateVerdict::Replay: out["interruptId"] = d.interruptIds.front(); break;
    case GateVerdict::Refuse:
      out["code"] = codeName(d.code);
      out["interruptId"] = d.interruptIds.front();
      out["message"] = d.message;
      break;
    case GateVerdict::Claim: out["claims"] = claimsJson(d.claims); break;
    case GateVerdict::Pass: break;
  }
  return out;
}

}  // namespace

std::string judgeApprovalsJson(const std::string& requestJson) {
  json request;
  // The thread's state rides in the request: its depth limit plus the request's own levels.
  if (std::optional<Failure> failure = parseBounded(requestJson, Options{}.maxDepth + 8, request))
    return failureJson(*failure);
  auto thread = request.find("threadId");
  if (!request.is_object() || thread == request.end() || !thread->is_string())
    return failureJson(Code::InvalidRequest, "judgeApprovals needs {threadId, resume, state?, records, claimed, nowMs}");
  GateInput in;
  in.threadId = thread->get<std::string>();
  auto field = [&](const char* name) -> const json* {
    auto it = request.find(name);
    return it == request.end() ? nullptr : &*it;
  };
  in.resume = field("resume");
  in.state = field("state");
  in.records = field("records");
  in.activities = field("activities");
  if (const json* claimed = field("claimed"); claimed && claimed->is_object())
    for (auto it = claimed->begin(); it != claimed->end(); ++it)
      if (it->is_string()) in.claimed[it.key()] = it->get<std::string>();
  if (const json* now = field("nowMs"); now && now->is_number()) in.nowMs = now->get<double>();
  return jsonText(answerOf(judgeApprovals(in)));
}

}  // namespace agui_sync
