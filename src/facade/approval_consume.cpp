#include "facade/approval_consume.h"

#include <cstdint>
#include <optional>

#include <agui_sync/approval_guard.h>
#include <agui_sync/options.h>

#include "facade/approval_gate.h"
#include "facade/facade_json.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;

namespace {

const json& field(const json& object, const char* name) {
  static const json absent;  // null
  if (!object.is_object()) return absent;
  auto it = object.find(name);
  return it == object.end() ? absent : *it;
}

// An approval the key can be made of: an object with string path and digest
// (and a string messageId, if any).
bool wellFormed(const json& approval) {
  Approval a;
  return approvalFromJson(approval, a);
}

// The interrupt an approval answers: the caller's, else the approval's own.
std::optional<json> interruptOf(const json& request) {
  const json& given = field(request, "interruptId");
  const json& own = field(field(request, "approval"), "interruptId");
  const json& id = given.is_null() ? own : given;
  if (!id.is_null() && !id.is_string()) return std::nullopt;
  return id;
}

json answer(bool ok, bool replayed, const json& key, const char* reason) {
  json out = {{"ok", ok}, {"decision", ok ? "approved" : "refused"}, {"replayed", replayed}, {"effectKey", key}};
  if (reason != nullptr) out["reason"] = reason;
  return json{{"ok", true}, {"step", "answer"}, {"answer", std::move(out)}};
}

// A recorded decision compared with this approval's key: a replay, or another approval's.
json fromRecord(const json& recorded, const std::string& key) {
  json record;
  const bool read = recorded.is_string() && !parseBounded(recorded.get_ref<const std::string&>(), 4, record);
  if (!read || field(record, "effectKey") != key) return answer(false, false, nullptr, "already-consumed");
  return answer(true, true, key, nullptr);
}

// Why the approval is not of the agent's document (empty: it is): the state, or
// the agent's content of the activity it names ("missing" when none is held).
std::optional<Code> unverified(const json& request) {
  Approval a;
  approvalFromJson(field(request, "approval"), a);
  auto state = request.find("state");  // absent: none the binding could put in JSON
  auto activities = request.find("activities");
  return judgeApproval(a, state == request.end() ? nullptr : &*state,
                       activities == request.end() ? nullptr : &*activities);
}

json consumeStep(const json& request, const json& interruptId) {
  const json& approval = field(request, "approval");
  if (!wellFormed(approval)) return answer(false, false, nullptr, "invalid-token");
  const std::string key = approvalEffectKey(approval, field(request, "threadId"), interruptId);
  const std::string recordId = interruptId.is_string() ? interruptId.get<std::string>() : "approval:" + key;
  if (!request.contains("record")) return {{"ok", true}, {"step", "peek"}, {"recordId", recordId}};
  if (!request["record"].is_null()) return fromRecord(request["record"], key);
  if (field(request, "claimed") == true) return answer(true, false, key, nullptr);
  if (std::optional<Code> why = unverified(request)) return answer(false, false, nullptr, codeName(*why));
  const json& now = field(request, "nowMs");
  const std::string record = approvalRecord(key, now.is_number() ? now.get<double>() : 0);
  return {{"ok", true}, {"step", "claim"}, {"recordId", recordId}, {"record", record}};
}

}  // namespace

std::string effectKeyJson(const std::string& requestJson) {
  json request;
  if (std::optional<Failure> failure = parseBounded(requestJson, Options{}.maxDepth + 4, request))
    return failureJson(*failure);
  const json& approval = field(request, "approval");
  if (!wellFormed(approval))
    return failureJson(Code::InvalidArgument, "effectKey needs an approval { path, seq, digest, epoch }");
  const std::optional<json> interruptId = interruptOf(request);
  if (!interruptId) return failureJson(Code::InvalidArgument, "approval.interruptId must be a string");
  const std::string key = approvalEffectKey(approval, field(request, "threadId"), *interruptId);
  return jsonText(json{{"ok", true}, {"effectKey", key}});
}

std::string consumeApprovalStepJson(const std::string& requestJson) {
  json request;
  // The agent's state rides in the request: its depth limit plus the request's own levels.
  if (std::optional<Failure> failure = parseBounded(requestJson, Options{}.maxDepth + 4, request))
    return failureJson(*failure);
  const std::optional<json> interruptId = interruptOf(request);
  if (!interruptId || (interruptId->is_string() && interruptId->get_ref<const std::string&>().empty()))
    return failureJson(Code::InvalidOptions, "interruptId must be a non-empty string");
  return jsonText(consumeStep(request, *interruptId));
}

}  // namespace agui_sync
