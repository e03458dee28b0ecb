// The snapshot tax per segment (emit/segment_tax.h), the tax study's policy 5
// in the sender: a segment switches to a snapshot per update only at a
// window's end, when its catch-ups cost more than deltas save, and comes back
// to deltas once its clients miss few enough seqs. Through the facade too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "emit/segment_tax.h"
#include "facade/segment_tax_facade.h"

using agui_sync::SegmentSwitch;
using agui_sync::SegmentTax;
using agui_sync::SegmentTaxFacade;
using agui_sync::SegmentTaxOptions;
using agui_sync::SegmentWindow;

namespace {

constexpr uint64_t kSnapshot = 10000;
constexpr uint64_t kDelta = 100;

// The segment's opening snapshot (S known), then `n` deltas; the switch the last one reported.
SegmentSwitch deltas(SegmentTax& tax, const std::string& label, size_t n) {
  SegmentSwitch last = SegmentSwitch::None;
  for (size_t i = 0; i < n; ++i) last = tax.sent(label, kDelta, false);
  return last;
}

// The rule as docs/proxy.md#snapshots-for-a-flaky-segment states it, written out again from a
// window's counts (the oracle).
bool rule(const SegmentWindow& w, double given) {
  const double S = double(w.snapshotBytes);
  const double d = w.deltas ? double(w.deltaBytes) / double(w.deltas) : w.meanDelta;
  if (given <= 0 && S == 0) return w.snapshots;
  const double breakEven = given > 0 ? given : std::max(0.0, (S - d) / S);
  const double n = double(w.updates);
  if (w.snapshots) return double(w.missedSeqs) / n >= breakEven / 2;
  const bool taxed = double(w.catchUps) / n > breakEven;
  return S == 0 ? taxed : (n * (S - d) - double(w.snapshotCatchUps) * S < 0 || taxed);
}

}  // namespace

TEST_CASE("segment tax: no catch-ups, no switch however many windows", "[segment-tax]") {
  SegmentTax tax(SegmentTaxOptions{10, 0, 8});
  tax.sent("4g", kSnapshot, true);
  for (int window = 0; window < 20; ++window) {
    deltas(tax, "4g", 10);
    REQUIRE_FALSE(tax.snapshots("4g"));
  }
  REQUIRE(tax.segment("4g")->switches == 0);
}

TEST_CASE("segment tax: a catch-up rate above break-even switches at the window's end, not before", "[segment-tax]") {
  // breakEven = (S - d) / S = 0.99 with these sizes: use an explicit 0.2.
  SegmentTax tax(SegmentTaxOptions{10, 0.2, 8});
  tax.sent("2g", kSnapshot, true);  // update 1 of the window
  for (int i = 0; i < 3; ++i) tax.caughtUp("2g", 2, false);  // 3 catch-ups answered by deltas: netSaved stays > 0
  REQUIRE(deltas(tax, "2g", 8) == SegmentSwitch::None);     // update 9: the rate is already 3/9, yet no switch
  REQUIRE_FALSE(tax.snapshots("2g"));
  REQUIRE(tax.sent("2g", kDelta, false) == SegmentSwitch::ToSnapshots);  // update 10: the window ends
  REQUIRE(tax.snapshots("2g"));
  REQUIRE(tax.segment("2g")->switches == 1);
  REQUIRE_FALSE(tax.snapshots("4g"));  // other segments are not touched
}

TEST_CASE("segment tax: a rate at or under break-even does not switch", "[segment-tax]") {
  SegmentTax tax(SegmentTaxOptions{10, 0.2, 8});
  tax.sent("wifi", kSnapshot, true);
  tax.caughtUp("wifi", 1, false);
  tax.caughtUp("wifi", 1, false);  // 2 / 10 = 0.2: not above
  deltas(tax, "wifi", 9);
  REQUIRE_FALSE(tax.snapshots("wifi"));
}

TEST_CASE("segment tax: catch-ups by snapshot that cost more than deltas saved switch (netSaved < 0)", "[segment-tax]") {
  // Implicit break-even (S - d) / S = 0.5: S = 200, d = 100. Each update saves 100 bytes, each
  // snapshot catch-up costs 200: 10 updates save 1000 (one snapshot + 9 deltas: d = 100, S = 200).
  SegmentTax tax(SegmentTaxOptions{10, 0, 8});
  tax.sent("3g", 200, true);
  for (int i = 0; i < 5; ++i) tax.caughtUp("3g", 1, true);  // 5 * 200 = 1000: netSaved = 10 * 100 - 1000 = 0, rate 0.5
  REQUIRE(deltas(tax, "3g", 9) == SegmentSwitch::None);
  REQUIRE_FALSE(tax.snapshots("3g"));
  tax.sent("3g", 200, true);
  for (int i = 0; i < 5; ++i) tax.caughtUp("3g", 0, true);
  tax.caughtUp("3g", 0, true);  // 6 * 200 > 10 * 100 saved: netSaved < 0 (the rate 0.6 > 0.5 agrees)
  REQUIRE(deltas(tax, "3g", 9) == SegmentSwitch::ToSnapshots);
  REQUIRE(tax.snapshots("3g"));
}

TEST_CASE("segment tax: netSaved < 0 alone switches, with the rate under break-even", "[segment-tax]") {
  // Deltas as large as the snapshot: nothing is saved, one snapshot catch-up tips it.
  SegmentTax tax(SegmentTaxOptions{4, 0.9, 8});
  tax.sent("slow-2g", 500, true);
  tax.caughtUp("slow-2g", 1, true);  // rate 1/4 < 0.9
  for (int i = 0; i < 2; ++i) tax.sent("slow-2g", 500, false);
  REQUIRE(tax.sent("slow-2g", 500, false) == SegmentSwitch::ToSnapshots);
}

TEST_CASE("segment tax: back to deltas with hysteresis (missed seqs per update under breakEven / 2)", "[segment-tax]") {
  SegmentTax tax(SegmentTaxOptions{10, 0.2, 8});
  tax.sent("2g", kSnapshot, true);
  for (int i = 0; i < 3; ++i) tax.caughtUp("2g", 1, false);
  deltas(tax, "2g", 9);
  REQUIRE(tax.snapshots("2g"));
  // Snapshot mode: 1 missed seq in 10 updates = 0.1, not under 0.2 / 2: stays.
  tax.caughtUp("2g", 1, true);
  for (int i = 0; i < 10; ++i) REQUIRE(tax.sent("2g", kSnapshot, true) == SegmentSwitch::None);
  REQUIRE(tax.snapshots("2g"));
  // A window under 0.1 (the rate that switched it in, 0.3, would be far above): back to deltas.
  for (int i = 0; i < 9; ++i) REQUIRE(tax.sent("2g", kSnapshot, true) == SegmentSwitch::None);
  REQUIRE(tax.sent("2g", kSnapshot, true) == SegmentSwitch::ToDeltas);
  REQUIRE_FALSE(tax.snapshots("2g"));
  REQUIRE(tax.segment("2g")->switches == 2);
}

TEST_CASE("segment tax: without a snapshot size and a threshold nothing switches", "[segment-tax]") {
  SegmentTax tax(SegmentTaxOptions{5, 0, 8});
  for (int i = 0; i < 5; ++i) tax.caughtUp("2g", 3, false);
  deltas(tax, "2g", 5);
  REQUIRE_FALSE(tax.snapshots("2g"));
}

TEST_CASE("segment tax: the number of segments is bounded", "[segment-tax]") {
  SegmentTax tax(SegmentTaxOptions{2, 0.1, 3});
  for (int i = 0; i < 50; ++i) {
    const std::string label = "seg" + std::to_string(i);
    tax.sent(label, kSnapshot, true);
    tax.caughtUp(label, 5, false);
    tax.sent(label, kDelta, false);
  }
  REQUIRE(tax.segments().size() == 3);
  REQUIRE(tax.snapshots("seg0"));
  REQUIRE(tax.segment("seg3") == nullptr);
  REQUIRE_FALSE(tax.snapshots("seg3"));  // untracked: deltas
}

TEST_CASE("segment tax: seeded schedules change mode only at window ends, as the rule on the window's counts says",
          "[segment-tax][property]") {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    const size_t window = 1 + rng() % 12;
    const double breakEven = (rng() % 2) ? 0 : 0.05 + (rng() % 90) / 100.0;
    SegmentTax tax(SegmentTaxOptions{window, breakEven, 4});
    const std::string label = "seg" + std::to_string(rng() % 3);
    SegmentWindow model;  // the window's counts, kept here independently
    size_t inWindow = 0;
    const uint32_t lossPercent = rng() % 60;
    for (int step = 0; step < 400; ++step) {
      if (rng() % 100 < lossPercent) {
        const uint64_t missed = rng() % 5;
        const bool bySnapshot = rng() % 2;
        tax.caughtUp(label, missed, bySnapshot);
        ++model.catchUps, model.missedSeqs += missed, model.snapshotCatchUps += bySnapshot ? 1 : 0;
        continue;
      }
      const bool snapshot = tax.snapshots(label) || rng() % 10 == 0;
      const uint64_t bytes = snapshot ? 1000 + rng() % 4000 : 10 + rng() % 900;
      ++model.updates, ++inWindow;
      if (snapshot) model.snapshotBytes = bytes;
      else ++model.deltas, model.deltaBytes += bytes;
      const bool before = tax.snapshots(label);
      const SegmentSwitch change = tax.sent(label, bytes, snapshot);
      INFO("seed " << seed << " step " << step);
      if (inWindow < window) {
        REQUIRE(change == SegmentSwitch::None);
        REQUIRE(tax.snapshots(label) == before);
        continue;
      }
      model.snapshots = before;
      const bool expected = rule(model, breakEven);
      REQUIRE(tax.snapshots(label) == expected);
      REQUIRE(change == (expected == before ? SegmentSwitch::None : expected ? SegmentSwitch::ToSnapshots : SegmentSwitch::ToDeltas));
      // The rule by hand, where it is checkable without the unit: a window with no catch-up never switches in.
      if (!before && model.catchUps == 0 && model.snapshotCatchUps == 0 && (model.snapshotBytes == 0 || model.deltas > 0)) {
        const double d = model.deltas ? double(model.deltaBytes) / double(model.deltas) : model.meanDelta;
        if (model.snapshotBytes >= d) REQUIRE_FALSE(expected);
      }
      model.meanDelta = model.deltas ? double(model.deltaBytes) / double(model.deltas) : model.meanDelta;
      model.updates = model.deltas = model.deltaBytes = model.catchUps = model.missedSeqs = model.snapshotCatchUps = 0;
      inWindow = 0;
    }
  }
}

TEST_CASE("segment tax facade: options are checked, the rule runs behind plain data", "[segment-tax][facade]") {
  REQUIRE(SegmentTaxFacade(R"({"window":0})").initResult().find("invalid-options") != std::string::npos);
  REQUIRE(SegmentTaxFacade(R"({"breakEven":1.5})").initResult().find("invalid-options") != std::string::npos);
  REQUIRE(SegmentTaxFacade(R"({"breakEven":"x"})").initResult().find("invalid-options") != std::string::npos);
  REQUIRE(SegmentTaxFacade("[1]").initResult().find("invalid-options") != std::string::npos);
  REQUIRE(SegmentTaxFacade("{").initResult().find("invalid-json") != std::string::npos);
  SegmentTaxFacade f(R"({"window":3,"breakEven":0.3})");
  REQUIRE(f.initResult() == R"({"ok":true})");
  f.sent("2g", 5000, true);
  f.caughtUp("2g", 4, false);
  REQUIRE(f.sent("2g", 80, false) == 0);
  REQUIRE(f.sent("2g", 80, false) == 1);
  REQUIRE(f.snapshots("2g"));
  REQUIRE(f.switches("2g") == 1);
  REQUIRE(f.switches("4g") == 0);
  for (int i = 0; i < 2; ++i) REQUIRE(f.sent("2g", 5000, true) == 0);
  REQUIRE(f.sent("2g", 5000, true) == 2);
  REQUIRE_FALSE(f.snapshots("2g"));
}

TEST_CASE("segment tax facade: a returning client is a catch-up only when behind in the thread's epoch", "[segment-tax][facade]") {
  SegmentTaxFacade f(R"({"window":2,"breakEven":0.4})");
  REQUIRE(f.cameBack("3g", -1, "e1", 9, "e1", false) == 0);          // no position: a first connect
  REQUIRE(f.cameBack("3g", 4, "e0", 9, "e1", true) == 0);            // another epoch: a resync, not missed seqs
  REQUIRE(f.cameBack("3g", 9, "e1", 9, "e1", false) == 0);           // current
  REQUIRE(f.cameBack("3g", 12, "e1", 9, "e1", false) == 0);          // ahead (a reset thread): nothing missed
  REQUIRE(f.cameBack("3g", std::nan(""), "e1", 9, "e1", false) == 0);
  f.sent("3g", 4000, true);
  REQUIRE(f.sent("3g", 100, false) == 0);                            // none of the above counted
  REQUIRE_FALSE(f.snapshots("3g"));
  REQUIRE(f.cameBack("3g", 6, "e1", 9, "e1", false) == 3);           // behind by 3
  f.sent("3g", 100, false);
  REQUIRE(f.sent("3g", 100, false) == 1);                            // 1 catch-up in 2 updates > 0.4
  REQUIRE(f.snapshots("3g"));
}
