#pragma once
// Plain-data facade over the snapshot tax per segment (emit/segment_tax.h)
// for a binding's sender: the sequencing proxy's flakySegments option. The
// binding says what it sent and who came back behind; the core says which
// segments get a snapshot per update. One per proxy. Exception-free.
//
//   SegmentTaxFacade(optionsJson)  {window: n >= 1 (100), breakEven: 0 < x <= 1 (absent: (S - d) / S),
//                                   maxSegments: n >= 1 (32)}; initResult() says why options were refused
//   sent(label, bytes, snapshot)   one update sent to a client of `label` -> 0 (no switch),
//                                  1 (the window ended: snapshots from now), 2 (back to deltas)
//   caughtUp(label, missed, snapshot)  a client of `label` came back `missed` seqs behind
//   cameBack(label, lastSeq, clientEpoch, seq, epoch, snapshot)
//                                  a client of `label` came back at lastSeq (< 0: none) of clientEpoch
//                                  while the thread stands at seq of epoch: a catch-up of the seqs it
//                                  missed when it is behind in the same epoch -> those seqs, else 0
//   snapshots(label)               whether `label`'s clients get a snapshot per update
//   switches(label)                how many times `label` changed mode
#include <cstdint>
#include <string>

#include "emit/segment_tax.h"

namespace agui_sync {

class SegmentTaxFacade {
 public:
  explicit SegmentTaxFacade(const std::string& optionsJson);
  const std::string& initResult() const { return initResult_; }
  int sent(const std::string& label, double bytes, bool snapshot) {
    return static_cast<int>(tax_.sent(label, toCount(bytes), snapshot));
  }
  void caughtUp(const std::string& label, double missed, bool snapshot) { tax_.caughtUp(label, toCount(missed), snapshot); }
  // Every binding's sender reports a returning client this way, so "behind" is decided once: a
  // client of another epoch is resynced from scratch (not a missed run of deltas), and one at or
  // past the thread's seq missed nothing.
  double cameBack(const std::string& label, double lastSeq, const std::string& clientEpoch, double seq,
                  const std::string& epoch, bool snapshot) {
    if (!(lastSeq >= 0) || clientEpoch != epoch || !(lastSeq < seq)) return 0;
    const double missed = seq - lastSeq;
    caughtUp(label, missed, snapshot);
    return missed;
  }
  bool snapshots(const std::string& label) const { return tax_.snapshots(label); }
  double switches(const std::string& label) const {
    const SegmentWindow* w = tax_.segment(label);
    return w == nullptr ? 0 : static_cast<double>(w->switches);
  }

 private:
  // A JS number as a count: negative or not a number is 0.
  static uint64_t toCount(double n) { return n > 0 ? static_cast<uint64_t>(n) : 0; }
  SegmentTax tax_{SegmentTaxOptions{}};
  std::string initResult_;
};

}  // namespace agui_sync
