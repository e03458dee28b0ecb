#include <agui_sync/metrics.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "json/json_write.h"

namespace agui_sync {

// Built member by member from a table rather than from one braced
// initializer: the same object (members in key order, as every nlohmann object
// keeps them), in a fraction of the code, which the browser engine downloads.
std::string metricsToJson(const Metrics& m) {
  const std::pair<const char*, uint64_t> counts[] = {
      {"events", m.events},
      {"heartbeats", m.heartbeats},
      {"snapshots", m.snapshots},
      {"resyncSnapshots", m.resyncSnapshots},
      {"deltasApplied", m.deltasApplied},
      {"duplicates", m.duplicates},
      {"staleSnapshots", m.staleSnapshots},
      {"held", m.held},
      {"reordersHealed", m.reordersHealed},
      {"replayHeals", m.replayHeals},
      {"errors", m.errors},
      {"resyncs", m.resyncs},
      {"snapshotBytes", m.snapshotBytes},
      {"resyncSnapshotBytes", m.resyncSnapshotBytes},
      {"deltaBytes", m.deltaBytes},
      {"deltaSavedBytes", m.deltaSavedBytes},
      {"stateBytes", m.stateBytes},
      {"digestChecks", m.digestChecks},
      {"anchors", m.anchors},
  };
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : counts) j[name] = value;
  j["resyncsByReason"] = m.resyncsByReason;
  j["netSavedBytes"] = m.netSavedBytes();
  j["taxRate"] = m.taxRate();
  return jsonText(j);
}

}  // namespace agui_sync
