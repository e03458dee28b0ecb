#include "emit/activity_cursor.h"

#include <utility>

#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// Suspended messageIds are pruned of those the emitter no longer holds past this many.
constexpr size_t kSuspendedPrune = 256;

const json* member(const json& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

std::string stringMember(const json& o, const char* key) {
  const json* v = member(o, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool ownMember(const std::string& key) {
  static const char* const kOwn[] = {"type", "messageId", "activityType", "content", "patch",
                                     "replace", "metadata", "seq", "base_seq"};
  for (const char* own : kOwn)
    if (key == own) return true;
  return false;
}

// AG-UI 1.0 ends a run on a null where a field is optional, and on a timestamp
// that is not an integer: such members of the agent's event are not carried.
bool carried(const std::string& key, const json& value) {
  if (value.is_null() || ownMember(key)) return false;
  if (key != "timestamp") return true;
  if (value.is_number_integer()) return value.is_number_unsigned() ? value.get<uint64_t>() <= kMaxSeq
                                                                   : value.get<int64_t>() >= -static_cast<int64_t>(kMaxSeq);
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return d == static_cast<double>(static_cast<int64_t>(d)) && d <= static_cast<double>(kMaxSeq) &&
         d >= -static_cast<double>(kMaxSeq);
}

}  // namespace

json carryActivityFields(const json& agent, json stamped) {
  for (const auto& item : agent.items())
    if (carried(item.key(), item.value()) && !stamped.contains(item.key())) stamped[item.key()] = item.value();
  const json* metadata = member(agent, "metadata");
  if (metadata == nullptr || !metadata->is_object()) return stamped;
  json& ours = stamped["metadata"];
  for (const auto& item : metadata->items())
    if (item.key() != kWireKey && !ours.contains(item.key())) ours[item.key()] = item.value();
  return stamped;
}

ActivityWrite ActivityCursor::drop(std::string messageId, const char* reason, std::optional<Failure> failure) {
  ActivityWrite out;
  out.kind = ActivityWrite::Kind::Drop;
  out.messageId = std::move(messageId);
  out.reason = reason;
  out.failure = std::move(failure);
  return out;
}

ActivityWrite ActivityCursor::write(ActivityEmitter& emitter, json event, bool verified) {
  const json* type = member(event, "type");
  if (type == nullptr || !type->is_string()) return {};
  const bool isSnapshot = *type == "ACTIVITY_SNAPSHOT";
  if (!isSnapshot && *type != "ACTIVITY_DELTA") return {};
  const json* id = member(event, "messageId");
  const json* payload = member(event, isSnapshot ? "content" : "patch");
  if (id == nullptr || !id->is_string() || payload == nullptr) {
    std::string messageId = id != nullptr && id->is_string() ? id->get<std::string>() : std::string();
    if (!messageId.empty()) suspended_.insert(messageId);  // what follows it cannot be vouched for
    return drop(std::move(messageId), "invalid-event", std::nullopt);
  }
  if (isSnapshot) {
    json content = std::move(event["content"]);
    return snapshot(emitter, event, std::move(content));
  }
  return delta(emitter, event, verified);
}

ActivityWrite ActivityCursor::writeContent(ActivityEmitter& emitter, json event, json content) {
  if (!event.is_object() || !member(event, "messageId") || !(*member(event, "messageId")).is_string()) return {};
  event["replace"] = true;  // the verified content replaces whatever the thread held
  return snapshot(emitter, event, std::move(content));
}

ActivityWrite ActivityCursor::snapshot(ActivityEmitter& emitter, json& event, json content) {
  ActivityWrite out;
  out.kind = ActivityWrite::Kind::Write;
  out.messageId = event["messageId"].get<std::string>();
  const json* replace = member(event, "replace");
  const bool replacing = replace == nullptr || !replace->is_boolean() || replace->get<bool>();
  if (replacing) suspended_.erase(out.messageId);  // the agent's whole content again: vouched for
  out.events = emitter.snapshot(out.messageId, stringMember(event, "activityType"), std::move(content), replacing);
  for (json& e : out.events) e = carryActivityFields(event, std::move(e));
  return out;
}

ActivityWrite ActivityCursor::delta(ActivityEmitter& emitter, json& event, bool verified) {
  std::string messageId = event["messageId"].get<std::string>();
  if (suspended_.count(messageId)) return drop(std::move(messageId), "patch-failed", std::nullopt);
  json ops = std::move(event["patch"]);
  PatchOutcome r = emitter.patch(messageId, stringMember(event, "activityType"), std::move(ops));
  if (!r.ok()) {
    if (verified) {
      ActivityWrite out;
      out.kind = ActivityWrite::Kind::NeedContent;
      out.messageId = std::move(messageId);
      return out;
    }
    if (suspended_.size() >= kSuspendedPrune) {
      for (auto it = suspended_.begin(); it != suspended_.end();) it = emitter.content(*it) ? std::next(it) : suspended_.erase(it);
    }
    suspended_.insert(messageId);
    const char* reason = codeName(r.failure->code);
    return drop(std::move(messageId), reason, std::move(r.failure));
  }
  ActivityWrite out;
  out.kind = ActivityWrite::Kind::Write;
  out.messageId = std::move(messageId);
  out.events = std::move(r.events);
  for (json& e : out.events) e = carryActivityFields(event, std::move(e));
  return out;
}

void ActivityStream::caughtUp(const ActivityEmitter& emitter) {
  for (std::string& id : emitter.ids()) known_[id] = emitter.generation(id);
}

void ActivityStream::shape(const ActivityEmitter& emitter, ActivityWrite& write) {
  if (write.kind != ActivityWrite::Kind::Write) return;
  // A line adopted from the store since (another instance's) is new to the client too.
  auto [known, fresh] = known_.try_emplace(write.messageId, emitter.generation(write.messageId));
  if (!fresh && known->second == emitter.generation(write.messageId)) return;
  known->second = emitter.generation(write.messageId);
  std::optional<json> snapshot = emitter.snapshotOf(write.messageId);
  if (!snapshot) return;  // (forgotten at once: nothing to send of it)
  json whole = write.events.empty() ? std::move(*snapshot) : carryActivityFields(write.events.front(), std::move(*snapshot));
  write.events.clear();
  write.events.push_back(std::move(whole));
}

}  // namespace agui_sync
