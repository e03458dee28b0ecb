#include <agui_sync/metrics.h>

#include <nlohmann/json.hpp>

#include "json/json_write.h"

namespace agui_sync {

std::string metricsToJson(const Metrics& m) {
  nlohmann::json j = {
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
      {"resyncsByReason", m.resyncsByReason},
      {"snapshotBytes", m.snapshotBytes},
      {"resyncSnapshotBytes", m.resyncSnapshotBytes},
      {"deltaBytes", m.deltaBytes},
      {"deltaSavedBytes", m.deltaSavedBytes},
      {"netSavedBytes", m.netSavedBytes()},
      {"stateBytes", m.stateBytes},
      {"digestChecks", m.digestChecks},
      {"anchors", m.anchors},
      {"taxRate", m.taxRate()},
  };
  return jsonText(j);
}

}  // namespace agui_sync
