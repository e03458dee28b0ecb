#pragma once
// Snapshot-tax metrics. Formulas (also in docs/concepts.md#metrics):
//   taxRate          = resyncs / deltasApplied            (0 when no delta applied)
//   deltaSavedBytes  = sum over applied deltas of max(0, stateBytes_after - deltaEventBytes)
//                      i.e. what one snapshot per update would have cost beyond the delta
//   resyncSnapshotBytes = bytes of snapshot events that answered a resync
//   netSavedBytes    = deltaSavedBytes - resyncSnapshotBytes  (negative: deltas are the worse deal)
// stateBytes is the state's serialized size with strings counted raw (escapes ignored;
// json_measure.h rawSize), kept incrementally from what each delta adds and removes, never
// by re-serializing.
#include <cstdint>
#include <map>
#include <string>

namespace agui_sync {

struct Metrics {
  uint64_t events = 0;          // SSE events dispatched
  uint64_t heartbeats = 0;      // SSE comments
  uint64_t snapshots = 0;       // snapshots applied
  uint64_t resyncSnapshots = 0; // ... of which answered a resync
  uint64_t deltasApplied = 0;
  uint64_t duplicates = 0;      // seq already applied (verified or too old to verify)
  uint64_t staleSnapshots = 0;  // sequenced snapshots older than lastSeq
  uint64_t held = 0;            // deltas parked in the reorder window
  uint64_t reordersHealed = 0;  // held deltas applied once their gap filled
  uint64_t replayHeals = 0;     // resyncs healed by a replay of deltas, without a snapshot
  uint64_t errors = 0;          // error outcomes
  uint64_t resyncs = 0;         // resync outcomes (by reason below)
  std::map<std::string, uint64_t> resyncsByReason;
  uint64_t snapshotBytes = 0;   // data bytes of applied snapshot events
  uint64_t resyncSnapshotBytes = 0;
  uint64_t deltaBytes = 0;      // data bytes of applied delta events
  uint64_t deltaSavedBytes = 0;
  uint64_t stateBytes = 0;      // estimated serialized size of the current state
  uint64_t digestChecks = 0;
  uint64_t anchors = 0;         // positions adopted from a delta's baseSeq (half-sequenced streams)

  double taxRate() const { return deltasApplied == 0 ? 0.0 : static_cast<double>(resyncs) / static_cast<double>(deltasApplied); }
  int64_t netSavedBytes() const {
    return static_cast<int64_t>(deltaSavedBytes) - static_cast<int64_t>(resyncSnapshotBytes);
  }
};

// The metrics as one JSON object (camelCase keys, plus taxRate and netSavedBytes).
std::string metricsToJson(const Metrics& m);

}  // namespace agui_sync
