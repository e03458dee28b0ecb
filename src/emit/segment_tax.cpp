#include "emit/segment_tax.h"

#include <algorithm>

namespace agui_sync {

namespace {

// The window's mean delta size, or the last one known (a window in snapshot mode sends none).
double meanDelta(const SegmentWindow& w) {
  return w.deltas > 0 ? static_cast<double>(w.deltaBytes) / static_cast<double>(w.deltas) : w.meanDelta;
}

// (S - d) / S, or the explicit threshold; negative: unknown (no snapshot seen and none given).
double breakEvenOf(const SegmentWindow& w, double explicitBreakEven) {
  if (explicitBreakEven > 0) return explicitBreakEven;
  if (w.snapshotBytes == 0) return -1;
  const double s = static_cast<double>(w.snapshotBytes);
  return std::max(0.0, (s - meanDelta(w)) / s);
}

}  // namespace

// The mode after the window `w` (its counts, its mode before): the tax study's Run::adapt on a sender's counts.
bool SegmentTax::decide(const SegmentWindow& w, double explicitBreakEven) {
  const double breakEven = breakEvenOf(w, explicitBreakEven);
  if (breakEven < 0 || w.updates == 0) return w.snapshots;
  const double updates = static_cast<double>(w.updates);
  if (!w.snapshots) {
    const double rate = static_cast<double>(w.catchUps) / updates;
    if (w.snapshotBytes == 0) return rate > breakEven;  // no S yet: only the (explicit) rate can tell
    const double s = static_cast<double>(w.snapshotBytes);
    const double netSaved = updates * (s - meanDelta(w)) - static_cast<double>(w.snapshotCatchUps) * s;
    return netSaved < 0 || rate > breakEven;
  }
  return !(static_cast<double>(w.missedSeqs) / updates < breakEven / 2);
}

SegmentWindow* SegmentTax::find(const std::string& label) {
  auto it = segments_.find(label);
  if (it != segments_.end()) return &it->second;
  if (segments_.size() >= options_.maxSegments) return nullptr;
  return &segments_[label];
}

SegmentSwitch SegmentTax::sent(const std::string& label, uint64_t bytes, bool snapshot) {
  SegmentWindow* w = find(label);
  if (w == nullptr) return SegmentSwitch::None;
  ++w->updates;
  if (snapshot) {
    w->snapshotBytes = bytes;
  } else {
    ++w->deltas;
    w->deltaBytes += bytes;
  }
  if (w->updates < options_.window) return SegmentSwitch::None;
  const bool before = w->snapshots;
  const bool after = decide(*w, options_.breakEven);
  w->meanDelta = meanDelta(*w);
  // A new window: the counts restart, what describes the segment (S, d, mode) stays.
  w->updates = w->deltas = w->deltaBytes = w->catchUps = w->missedSeqs = w->snapshotCatchUps = 0;
  w->snapshots = after;
  if (after == before) return SegmentSwitch::None;
  ++w->switches;
  return after ? SegmentSwitch::ToSnapshots : SegmentSwitch::ToDeltas;
}

void SegmentTax::caughtUp(const std::string& label, uint64_t missedSeqs, bool bySnapshot) {
  SegmentWindow* w = find(label);
  if (w == nullptr) return;
  ++w->catchUps;
  w->missedSeqs += missedSeqs;
  if (bySnapshot) ++w->snapshotCatchUps;
}

bool SegmentTax::snapshots(const std::string& label) const {
  const SegmentWindow* w = segment(label);
  return w != nullptr && w->snapshots;
}

const SegmentWindow* SegmentTax::segment(const std::string& label) const {
  auto it = segments_.find(label);
  return it == segments_.end() ? nullptr : &it->second;
}

}  // namespace agui_sync
