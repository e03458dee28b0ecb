#pragma once
// AG-UI 1.0 activity events for the native tests, stamped as the wire says
// (docs/wire.md sections 10 and 11): each messageId its own line of seqs.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/canonical_json.h>
#include <agui_sync/state_emitter.h>
#include <agui_sync/sync_engine.h>

#include "wire/wire.h"

namespace agui_test {

inline nlohmann::json activityWire(std::optional<uint64_t> seq, std::optional<uint64_t> base,
                                   const nlohmann::json* digestOf) {
  nlohmann::json w = nlohmann::json::object();
  if (seq) w["seq"] = *seq;
  if (base) w["baseSeq"] = *base;
  if (digestOf) w["digest"] = agui_sync::stateDigest(*digestOf);
  return {{agui_sync::kWireKey, w}};
}

inline nlohmann::json activitySnapshot(const std::string& id, const nlohmann::json& content,
                                       std::optional<uint64_t> seq, bool digest = false) {
  nlohmann::json e = {{"type", "ACTIVITY_SNAPSHOT"}, {"messageId", id}, {"activityType", "form"}, {"content", content}};
  if (seq) e["metadata"] = activityWire(seq, std::nullopt, digest ? &content : nullptr);
  return e;
}

inline nlohmann::json activityDelta(const std::string& id, const nlohmann::json& patch, std::optional<uint64_t> base,
                                    std::optional<uint64_t> seq, const nlohmann::json* digestOf = nullptr) {
  nlohmann::json e = {{"type", "ACTIVITY_DELTA"}, {"messageId", id}, {"activityType", "form"}, {"patch", patch}};
  if (seq) e["metadata"] = activityWire(seq, base, digestOf);
  return e;
}

// A receiver's options with activities on.
inline agui_sync::Options receivingActivities() {
  agui_sync::Options o;
  o.activities = true;
  return o;
}

// Feeds a sender's activity events (no SSE ids) to `engine`.
inline std::vector<agui_sync::Outcome> feedActivities(agui_sync::SyncEngine& engine, const std::vector<nlohmann::json>& events) {
  std::vector<agui_sync::Outcome> out;
  engine.feed(agui_sync::StateEmitter::encodeAll(events, false), out);
  return out;
}

inline const agui_sync::ActivityView* findActivity(const std::vector<agui_sync::ActivityView>& views, const std::string& id) {
  for (const agui_sync::ActivityView& v : views)
    if (*v.messageId == id) return &v;
  return nullptr;
}

}  // namespace agui_test
