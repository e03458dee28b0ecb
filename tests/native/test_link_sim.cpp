// The SSE link fault simulator (bench/sim/link_sim.h) and a short snapshot-tax
// study (bench/sim/study.h), both from the agui_sim library.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <agui_sync/approval_guard.h>

#include "sim/link_sim.h"
#include "sim/study.h"

namespace {

using agui_sim::FaultSchedule;
using agui_sim::Link;
using agui_sim::LinkProfile;

std::vector<std::string> deliverAll(const FaultSchedule& schedule, size_t steps, agui_sim::LinkStats* stats) {
  Link link(schedule);
  std::vector<std::string> out;
  for (size_t s = 0; s < steps; ++s) {
    if (!link.up(s)) continue;
    if (!link.connected()) link.connect();
    std::vector<std::string> frames{"frame " + std::to_string(s) + "\n\n", "extra " + std::to_string(s) + "\n\n"};
    link.send(s, frames, out);
  }
  if (stats) *stats = link.stats();
  return out;
}

}  // namespace

TEST_CASE("link sim: the same seed gives the same schedule and deliveries", "[sim]") {
  for (const LinkProfile& p : agui_sim::standardProfiles()) {
    const FaultSchedule a(p, 5000, 42), b(p, 5000, 42), c(p, 5000, 43);
    CHECK(a.fingerprint() == b.fingerprint());
    CHECK(a.drops() == b.drops());
    CHECK(a.badSteps() == b.badSteps());
    if (p.name != "wired") CHECK(a.fingerprint() != c.fingerprint());  // wired is almost all quiet
    agui_sim::LinkStats sa, sb;
    CHECK(deliverAll(a, 5000, &sa) == deliverAll(b, 5000, &sb));
    CHECK(sa.bytesSent == sb.bytesSent);
    CHECK(sa.framesLost == sb.framesLost);
  }
  // A frame's fate depends only on (seed, step, index): not on what was sent before.
  const FaultSchedule m(agui_sim::mobileTrain(), 1000, 7);
  for (size_t s = 0; s < 1000; s += 37) {
    const auto f1 = m.frame(s, 3), f2 = m.frame(s, 3);
    CHECK(f1.lost == f2.lost);
    CHECK(f1.duplicated == f2.duplicated);
    CHECK(f1.delay == f2.delay);
  }
}

TEST_CASE("link sim: each profile's loss rate is in its documented range", "[sim]") {
  const size_t steps = 400000;
  for (const LinkProfile& p : agui_sim::standardProfiles()) {
    INFO(p.name);
    CHECK(p.expectedLoss() >= p.lossRangeLo);
    CHECK(p.expectedLoss() <= p.lossRangeHi);
    const FaultSchedule s(p, steps, 2024);
    const double loss = s.lossRate();
    CHECK(loss >= p.lossRangeLo);
    CHECK(loss <= p.lossRangeHi);
    // Drops come about every meanFramesBetweenDrops connected steps (within 25%).
    const double connected = static_cast<double>(steps - s.downSteps());
    const double expectedDrops = connected / p.meanFramesBetweenDrops;
    CHECK(static_cast<double>(s.drops()) > 0.75 * expectedDrops);
    CHECK(static_cast<double>(s.drops()) < 1.25 * expectedDrops);
  }
  const FaultSchedule none(agui_sim::lossless(), 10000, 1);
  CHECK(none.lossRate() == 0);
  CHECK(none.drops() == 0);
  // Profiles are ordered by harshness.
  CHECK(agui_sim::wired().expectedLoss() < agui_sim::wifi().expectedLoss());
  CHECK(agui_sim::wifi().expectedLoss() < agui_sim::mobileTrain().expectedLoss());
}

TEST_CASE("link sim: faults happen as configured", "[sim]") {
  LinkProfile p;
  p.name = "test";
  p.duplicateRate = 0.1;
  p.reorderRate = 0.1;
  p.reorderMaxDistance = 2;
  p.pGoodToBad = 0.05;
  p.pBadToGood = 0.5;
  p.lossBad = 0.5;
  p.meanFramesBetweenDrops = 50;
  p.truncateOnDrop = 1;
  p.downtimeMinSteps = 2;
  p.downtimeMaxSteps = 3;
  const FaultSchedule s(p, 3000, 5);
  agui_sim::LinkStats st;
  const auto out = deliverAll(s, 3000, &st);
  CHECK(st.framesLost > 0);
  CHECK(st.framesDuplicated > 0);
  CHECK(st.framesReordered > 0);
  CHECK(st.framesTruncated == st.drops);
  CHECK(st.drops == s.drops());
  CHECK(st.bytesDelivered < st.bytesSent);
  // Every truncated frame is a strict prefix of a frame.
  size_t cut = 0;
  for (const auto& chunk : out)
    if (chunk.size() < 2 || chunk.compare(chunk.size() - 2, 2, "\n\n") != 0) ++cut;
  CHECK(cut > 0);
  CHECK(cut <= st.framesTruncated);
}

TEST_CASE("tax study: ours never drifts and never lets a drifted approval through", "[sim]") {
  tax_study::StudyConfig c;
  c.stateBytes = 8000;
  c.updates = 500;
  c.seed = 11;
  c.meanSessionGapSteps = 12;
  // The headline client is the product's: the guard's default options plus its
  // built-in disconnect signal, and catch-up requests that list the held seqs.
  CHECK(c.guard.staleAfterMs == agui_sync::GuardOptions{}.staleAfterMs);
  CHECK(c.disconnectSignal);
  CHECK(c.sendHeld);
  const tax_study::Study st = tax_study::runStudy(c, agui_sim::standardProfiles(), false);
  REQUIRE(st.runs.size() == 4);
  for (const auto& run : st.runs) {
    INFO(run.profile.name);
    for (const auto& r : run.results) {
      INFO(tax_study::strategyName(r.strategy));
      CHECK(r.approvals > 0);
      if (r.strategy == tax_study::Strategy::Reference) continue;
      CHECK(r.driftSteps == 0);         // synced always means "equal to the agent at lastSeq"
      CHECK(r.driftedWrongState == 0);  // an approval never rests on a wrong state
      CHECK(r.actedOnDrift == 0);       // verifyApproval refuses whatever slipped through
      // The client tells the guard when its stream broke (as Facade::end()
      // does), so no approval slips through during an outage.
      if (tax_study::isOurs(r.strategy)) CHECK(r.driftedApprovals == 0);
    }
    CHECK(run.of(tax_study::Strategy::DeltaReplay).finalInSync);
  }
  // The faults bite: the reference handler drifts on the mobile link; ours stays
  // near the zero-loss delta bytes there.
  const auto& mobile = st.runs.back();
  REQUIRE(mobile.profile.name == "mobile-train");
  CHECK(mobile.of(tax_study::Strategy::Reference).driftSteps > 0);
  CHECK(mobile.of(tax_study::Strategy::DeltaReplay).link.bytesSent < st.baselineBytes * 13 / 10);
  CHECK(mobile.of(tax_study::Strategy::SnapshotsOnly).link.bytesSent > st.baselineBytes * 3);
  // Held seqs in the catch-up request: the replay leaves out what the client holds.
  tax_study::StudyConfig noHeld = c;
  noHeld.sendHeld = false;
  const auto resent =
      tax_study::runStrategy(tax_study::Strategy::DeltaReplay, st.trace, mobile.schedule, st.human, noHeld);
  CHECK(resent.finalInSync);
  CHECK(resent.replayedFrames > mobile.of(tax_study::Strategy::DeltaReplay).replayedFrames);
  CHECK(resent.link.bytesSent > mobile.of(tax_study::Strategy::DeltaReplay).link.bytesSent);
  // Without the disconnect signal, on staleness alone, the guard lets some through here.
  tax_study::StudyConfig staleOnly = c;
  staleOnly.disconnectSignal = false;
  const auto stale =
      tax_study::runStrategy(tax_study::Strategy::DeltaReplay, st.trace, mobile.schedule, st.human, staleOnly);
  CHECK(stale.blockedBy.count("disconnected") == 0);
  CHECK(mobile.of(tax_study::Strategy::DeltaReplay).blockedBy.count("disconnected") == 1);
  // The lossless run is the baseline: every strategy but snapshots-only sends it.
  CHECK(st.runs[0].of(tax_study::Strategy::Reference).link.bytesSent == st.baselineBytes);
}

TEST_CASE("tax study: adaptive switches to snapshots and back, still in sync", "[sim]") {
  tax_study::StudyConfig c;
  c.stateBytes = 6000;
  c.updates = 600;
  c.seed = 5;
  c.adaptiveWindow = 50;
  c.adaptiveTaxRate = 0.001;  // force the switch: any resync makes deltas "the worse deal"
  const tax_study::Trace trace = tax_study::makeTrace(c);
  const auto human = tax_study::makeHuman(c, c.seed);
  const FaultSchedule schedule(agui_sim::mobileTrain(), static_cast<size_t>(c.updates) + 1, 77);
  const auto adaptive = tax_study::runStrategy(tax_study::Strategy::Adaptive, trace, schedule, human, c);
  const auto replay = tax_study::runStrategy(tax_study::Strategy::DeltaReplay, trace, schedule, human, c);
  CHECK(adaptive.modeSwitches >= 2);
  CHECK(adaptive.snapshotModeSteps > 0);
  CHECK(adaptive.snapshotModeSteps < static_cast<uint64_t>(c.updates));
  CHECK(adaptive.snapshotsSent > replay.snapshotsSent);
  CHECK(adaptive.driftSteps == 0);
  CHECK(adaptive.driftedWrongState == 0);
  CHECK(adaptive.finalInSync);
}
