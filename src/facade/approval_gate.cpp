#include "facade/approval_gate.h"

#include <cmath>
#include <cstdint>
#include <set>

#include <agui_sync/approval_guard.h>
#include <agui_sync/canonical_json.h>

#include "facade/facade_json.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;

namespace {

struct Entry {
  std::string interruptId;
  const json* approval;
};

enum class Standing { Ours, Fresh, Replayed, Conflict };

const json* member(const json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

bool isString(const json* value) { return value != nullptr && value->is_string(); }

// A resume entry carries one of our approvals when it is resolved, approved and
// has an approval object and an interrupt id; anything else passes untouched.
std::vector<Entry> entriesOf(const json* resume) {
  std::vector<Entry> found;
  if (resume == nullptr || !resume->is_array()) return found;
  for (const json& entry : *resume) {
    const json* status = member(entry, "status");
    const json* payload = member(entry, "payload");
    const json* id = member(entry, "interruptId");
    if (!isString(status) || *status != "resolved" || payload == nullptr) continue;
    const json* approved = member(*payload, "approved");
    const json* approval = member(*payload, "approval");
    if (approved == nullptr || *approved != true || approval == nullptr || !approval->is_object()) continue;
    if (isString(id) && !id->get_ref<const std::string&>().empty()) found.push_back({id->get<std::string>(), approval});
  }
  return found;
}

GateDecision decided(GateVerdict verdict, std::vector<std::string> ids) {
  GateDecision d;
  d.verdict = verdict;
  d.interruptIds = std::move(ids);
  return d;
}

GateDecision refused(Code code, const std::string& interruptId, const std::string& why) {
  GateDecision d = decided(GateVerdict::Refuse, {interruptId});
  d.code = code;
  d.message = why + "; nothing was forwarded";
  return d;
}

// Requests the gate cannot judge: an approval without string path and digest,
// or one interrupt answered twice (its second claim would be lost to its first).
std::optional<GateDecision> malformed(const std::vector<Entry>& entries) {
  std::set<std::string> seen;
  for (const Entry& e : entries) {
    Approval a;
    if (!approvalFromJson(*e.approval, a))
      return refused(Code::InvalidRequest, e.interruptId,
                     "the approval for interrupt " + e.interruptId + " needs a string path and digest (and messageId, if any)");
    if (!seen.insert(e.interruptId).second)
      return refused(Code::InvalidRequest, e.interruptId, "interrupt " + e.interruptId + " has two resume entries");
  }
  return std::nullopt;
}

// consumeApproval's reading of a record: this approval's (a replay) or another's.
Standing standing(const GateInput& in, const Entry& e) {
  if (in.claimed.count(e.interruptId)) return Standing::Ours;
  const json& recorded = in.records->at(e.interruptId);
  if (recorded.is_null()) return Standing::Fresh;
  json record;
  if (!recorded.is_string() || parseBounded(recorded.get_ref<const std::string&>(), 4, record)) return Standing::Conflict;
  const json* key = member(record, "effectKey");
  return isString(key) && *key == approvalEffectKey(*e.approval, in.threadId, e.interruptId) ? Standing::Replayed
                                                                                             : Standing::Conflict;
}

// The activity an entry's approval names, if any (malformed() read it already).
const json* activityOf(const Entry& e) {
  const json* id = member(*e.approval, "messageId");
  return isString(id) ? id : nullptr;
}

// Why a fresh entry is not verified (empty: it is), against the document it names.
std::optional<std::string> unverified(const GateInput& in, const Entry& e) {
  Approval a;
  approvalFromJson(*e.approval, a);
  const std::optional<Code> why = judgeApproval(a, in.state, in.activities);
  const std::string& id = e.interruptId;
  if (!why) return std::nullopt;
  if (*why == Code::Missing)
    return "the thread holds no activity " + *a.messageId + " to verify the approval for interrupt " + id;
  if (!a.messageId && in.state == nullptr)
    return "the thread has no sequenced state to verify the approval for interrupt " + id;
  return "the approval for interrupt " + id + " is not of the thread's current value";
}

std::string recordOf(const GateInput& in, const Entry& e) {
  return approvalRecord(approvalEffectKey(*e.approval, in.threadId, e.interruptId), in.nowMs);
}

// A run that is not forwarded leaves nothing consumed: this request's claims go back.
GateDecision releasing(GateDecision d, const GateInput& in) {
  for (const auto& [id, record] : in.claimed) d.releases.push_back({id, record});
  return d;
}

// Every record read: the first conflict refuses, then a replay wins, then fresh
// entries are verified (all of them before any is claimed) and claimed.
GateDecision judgeRead(const GateInput& in, const std::vector<Entry>& entries) {
  std::vector<Standing> standings;
  for (const Entry& e : entries) standings.push_back(standing(in, e));
  for (size_t i = 0; i < entries.size(); ++i)
    if (standings[i] == Standing::Conflict)
      return releasing(refused(Code::AlreadyConsumed, entries[i].interruptId,
                               "interrupt " + entries[i].interruptId + " was already resolved by another approval"),
                       in);
  for (size_t i = 0; i < entries.size(); ++i)
    if (standings[i] == Standing::Replayed) return releasing(decided(GateVerdict::Replay, {entries[i].interruptId}), in);
  GateDecision claim = decided(GateVerdict::Claim, {});
  for (size_t i = 0; i < entries.size(); ++i) {
    if (standings[i] != Standing::Fresh) continue;
    const std::string& id = entries[i].interruptId;
    if (std::optional<std::string> why = unverified(in, entries[i]))
      return releasing(refused(Code::ApprovalStale, id, *why), in);
    claim.claims.push_back({id, recordOf(in, entries[i])});
  }
  if (!claim.claims.empty()) return claim;
  std::vector<std::string> ids;
  for (const Entry& e : entries) ids.push_back(e.interruptId);
  return decided(GateVerdict::Forward, std::move(ids));
}

json safeSeq(const json& seq) {
  constexpr int64_t kMax = 9007199254740991;  // Number.MAX_SAFE_INTEGER, as effectKey reads seq
  if (seq.is_number_unsigned()) return seq.get<uint64_t>() <= static_cast<uint64_t>(kMax) ? seq : json(nullptr);
  if (seq.is_number_integer()) return std::llabs(seq.get<int64_t>()) <= kMax ? seq : json(nullptr);
  if (!seq.is_number_float()) return nullptr;
  const double d = seq.get<double>();
  return std::isfinite(d) && d == std::trunc(d) && std::fabs(d) <= static_cast<double>(kMax) ? seq : json(nullptr);
}

}  // namespace

std::string approvalEffectKey(const json& approval, const json& threadId, const json& interruptId) {
  const json* seq = member(approval, "seq");
  const json* epoch = member(approval, "epoch");
  json identity = {{"v", 1},
                   {"threadId", threadId},
                   {"interruptId", interruptId},
                   {"path", *member(approval, "path")},
                   {"seq", seq ? safeSeq(*seq) : json(nullptr)},
                   {"digest", *member(approval, "digest")},
                   {"epoch", isString(epoch) ? *epoch : json(nullptr)}};
  if (const json* messageId = member(approval, "messageId"); isString(messageId)) identity["messageId"] = *messageId;
  return stateDigest(identity).substr(7);  // without "sha256:"
}

std::string approvalRecord(const std::string& effectKey, double nowMs) {
  const double at = std::isfinite(nowMs) && std::fabs(nowMs) < 9.0e15 ? nowMs : 0;  // a time in ms, never UB
  return jsonText(json{{"decision", "approved"}, {"effectKey", effectKey}, {"at", static_cast<int64_t>(at)}});
}

bool carriesApprovals(const json* resume) { return !entriesOf(resume).empty(); }

GateDecision judgeApprovals(const GateInput& in) {
  const std::vector<Entry> entries = entriesOf(in.resume);
  if (entries.empty()) return decided(GateVerdict::Pass, {});
  if (std::optional<GateDecision> refusal = malformed(entries)) return releasing(*refusal, in);
  std::vector<std::string> unread;
  std::set<std::string> contents;  // the activities named whose content the binding has not given
  for (const Entry& e : entries) {
    const bool read = in.records != nullptr && in.records->is_object() && in.records->contains(e.interruptId);
    if (!read && !in.claimed.count(e.interruptId)) unread.push_back(e.interruptId);
    const json* messageId = activityOf(e);
    if (messageId == nullptr) continue;
    const bool given = in.activities != nullptr && in.activities->is_object() && in.activities->contains(*messageId);
    if (!given) contents.insert(messageId->get<std::string>());
  }
  if (unread.empty() && contents.empty()) return judgeRead(in, entries);
  GateDecision peek = decided(GateVerdict::Peek, std::move(unread));
  peek.activities.assign(contents.begin(), contents.end());
  return peek;
}

}  // namespace agui_sync
