#pragma once
// The snapshot tax per segment of clients (a connection type, as the client
// reports it), and the tax study's policy 5 ("adaptive", docs/tax-study.md)
// on it: whether a segment's clients get a STATE_SNAPSHOT per update rather
// than deltas. The sender feeds what it already measures: each update it sends
// to a client of the segment (its framed bytes, and whether it was a
// snapshot) and each client that came back behind (the seqs it missed, and
// whether its catch-up was a snapshot). Decisions are taken only at a
// window's end, every `window` updates of the segment:
//   delta mode    -> snapshots when netSaved < 0 or catchUps / updates > breakEven,
//                    netSaved = updates * (S - d) - snapshotCatchUps * S
//                    (S: the size of the last snapshot sent, d: the window's mean
//                    delta bytes), breakEven = (S - d) / S unless given;
//   snapshot mode -> deltas when missedSeqs / updates < breakEven / 2 (hysteresis:
//                    the way back needs the loss well under the way in).
// Until the segment has sent a snapshot, S is unknown and only an explicit
// breakEven can switch it. At most maxSegments are tracked (labels are
// bounded upstream too); a label past that bound is not tracked and stays on
// deltas. Plain C++, exception-free; one per sender.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace agui_sync {

struct SegmentTaxOptions {
  size_t window = 100;      // updates per decision, per segment
  double breakEven = 0;     // > 0: an explicit switch threshold; 0: (S - d) / S
  size_t maxSegments = 32;  // segments tracked
};

// The counts of a segment's current window, and its mode.
struct SegmentWindow {
  uint64_t updates = 0;
  uint64_t deltaBytes = 0;       // of the window's deltas
  uint64_t deltas = 0;
  uint64_t catchUps = 0;
  uint64_t missedSeqs = 0;
  uint64_t snapshotCatchUps = 0;  // catch-ups answered by a snapshot
  uint64_t snapshotBytes = 0;     // S: the last snapshot sent (0: none yet)
  double meanDelta = 0;           // d: the last window's with deltas (kept through snapshot mode)
  bool snapshots = false;
  uint64_t switches = 0;
};

enum class SegmentSwitch { None = 0, ToSnapshots = 1, ToDeltas = 2 };

class SegmentTax {
 public:
  explicit SegmentTax(SegmentTaxOptions options) : options_(options) {}

  // One update sent to a client of `label`: `bytes` framed, a snapshot or a delta.
  // Returns the switch the window's end decided, if this update ended one.
  SegmentSwitch sent(const std::string& label, uint64_t bytes, bool snapshot);
  // A client of `label` came back `missedSeqs` behind; `bySnapshot`: its catch-up was a snapshot.
  void caughtUp(const std::string& label, uint64_t missedSeqs, bool bySnapshot);
  // True while `label`'s clients get a snapshot per update.
  bool snapshots(const std::string& label) const;
  // The segment's counts (nullptr: not tracked).
  const SegmentWindow* segment(const std::string& label) const;
  const std::map<std::string, SegmentWindow>& segments() const { return segments_; }
  const SegmentTaxOptions& options() const { return options_; }

  // The rule at a window's end, on its counts alone (the property test recomputes it).
  static bool decide(const SegmentWindow& w, double explicitBreakEven);

 private:
  SegmentWindow* find(const std::string& label);
  SegmentTaxOptions options_;
  std::map<std::string, SegmentWindow> segments_;
};

}  // namespace agui_sync
