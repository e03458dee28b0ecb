// Snapshot-tax study (issue 7, part 1): five ways of keeping AG-UI shared state
// in step, run on the SAME agent trace and the SAME fault schedule per link
// profile (bench/sim/link_sim.h), measuring bytes on the wire, silent drift and
// approvals of proposals the agent no longer holds.
//
//   build/native/tax_study [--updates N] [--state-bytes B] [--seed S] [--step-ms MS]
//                          [--sweep SEEDS] [--md docs/tax-study.md] [--svg docs/tax-study.svg]
// --sweep K repeats strategies 1, 4, 5 (and 4 without the guard's disconnect
// signal, and 4 without held seqs in the catch-up request) for seeds
// seed+1 .. seed+K (robustness).
//   make study      (writes docs/tax-study.md and docs/tax-study.svg)
//
// Prints the markdown report on stdout; exit status 0 whether the goals pass or
// not (they are reported as PASS/FAIL lines), 2 on bad arguments or I/O errors.
//
// This file is the presentation: the goals, the findings text, the markdown
// report and the SVG. The model (trace, human, strategies, runs, sweep) is
// bench/sim/study.cpp in the agui_sim library, which tests/native/test_link_sim.cpp
// links as well.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <agui_sync/approval_guard.h>

#include "sim/link_sim.h"
#include "sim/study.h"

namespace tax_study {
namespace {

struct Goal {
  std::string text;
  bool pass = false;
};

std::vector<Goal> goals(const Study& st, const Sweep* sweep = nullptr) {
  std::vector<Goal> g;
  {
    Goal a{"ours (4, 5): zero drifted approvals on every profile", true};
    std::string detail;
    for (const auto& r : st.runs)
      for (Strategy s : {Strategy::DeltaReplay, Strategy::Adaptive}) {
        const uint64_t n = r.of(s).driftedApprovals;
        if (n) a.pass = false, detail += " " + r.profile.name + "/" + strategyShort(s) + "=" + std::to_string(n);
      }
    if (!detail.empty()) a.text += " (drifted:" + detail + ")";
    g.push_back(a);
  }
  {
    Goal b{"engine strategies (2-5): zero silently drifted steps on every profile", true};
    for (const auto& r : st.runs)
      for (Strategy s : kStrategies)
        if (s != Strategy::Reference && r.of(s).driftSteps) b.pass = false;
    g.push_back(b);
  }
  for (const auto& r : st.runs) {
    if (r.profile.name != "mobile-train") continue;
    for (Strategy s : {Strategy::DeltaReplay, Strategy::Adaptive}) {
      const double ratio = static_cast<double>(r.of(s).link.bytesSent) / static_cast<double>(st.baselineBytes);
      g.push_back({std::string("mobile-train: ") + strategyShort(s) + " bytes " + agui_sim::fmt("%.3f", ratio) +
                       " x zero-loss delta bytes <= 1.1",
                   ratio <= 1.1});
    }
  }
  if (sweep && sweep->seeds > 0) {
    const std::string seeds = "(" + std::to_string(sweep->seeds) + " other seeds) ";
    for (Strategy s : {Strategy::DeltaReplay, Strategy::Adaptive}) {
      uint64_t approvals = 0, drifted = 0;
      size_t runs = 0, over = 0;
      for (const auto& row : sweep->rows) {
        if (!row.variant.headline || row.variant.strategy != s) continue;
        approvals += row.approvals;
        drifted += row.drifted;
        if (row.profile == "mobile-train") runs += row.runs, over += row.over;
      }
      g.push_back({seeds + strategyShort(s) + ": " + std::to_string(drifted) + " drifted approvals in " +
                       std::to_string(approvals) + " approvals, all profiles",
                   drifted == 0});
      g.push_back({seeds + "mobile-train: " + strategyShort(s) + " bytes <= 1.1 x zero-loss delta bytes in " +
                       std::to_string(runs - over) + " of " + std::to_string(runs) + " seeds",
                   over == 0});
    }
  }
  return g;
}

// ---------------------------------------------------------------- output

std::string withCommas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string blockedText(const Result& r) {
  if (r.strategy == Strategy::Reference) return "– (never blocks)";
  if (!r.blocked) return "0";
  std::string s = std::to_string(r.blocked) + " (";
  bool first = true;
  for (const auto& [why, n] : r.blockedBy) {
    s += (first ? "" : ", ") + why + " " + std::to_string(n);
    first = false;
  }
  return s + ")";
}

// Sums over the sweep rows that match `pick`.
struct SweepSum {
  uint64_t approvals = 0, drifted = 0, inOutage = 0, actedOn = 0;
  double sumRatio = 0, maxRatio = 0;
  size_t runs = 0, over = 0;
};
template <typename Pick>
SweepSum sweepSum(const Sweep& sweep, const std::string& profile, Pick pick) {
  SweepSum t;
  for (const auto& row : sweep.rows) {
    if ((!profile.empty() && row.profile != profile) || !pick(row.variant)) continue;
    t.approvals += row.approvals, t.drifted += row.drifted, t.inOutage += row.inOutage, t.actedOn += row.actedOn;
    t.sumRatio += row.sumRatio, t.maxRatio = std::max(t.maxRatio, row.maxRatio);
    t.runs += row.runs, t.over += row.over;
  }
  return t;
}
std::string ratioSummary(const SweepSum& t) {
  return "mean " + agui_sim::fmt("%.3f", t.runs ? t.sumRatio / static_cast<double>(t.runs) : 0) + "×, max " +
         agui_sim::fmt("%.3f", t.maxRatio) + "×, " + std::to_string(t.over) + " of " + std::to_string(t.runs) +
         " seeds above 1.1×";
}

// The gap tuning table's paragraph: what the numbers of its rows say.
std::string gapTuningText(const Study& st) {
  double lo = 1e300, hi = 0;
  const Result* defaultGap = nullptr;
  const Result* used = nullptr;
  const Result* noHeld = nullptr;
  for (const auto& [label, r] : st.gapTuning) {
    const double ratio = static_cast<double>(r.link.bytesSent) / static_cast<double>(st.baselineBytes);
    if (label.find("without the held seqs") != std::string::npos) {
      noHeld = &r;
      continue;
    }
    lo = std::min(lo, ratio), hi = std::max(hi, ratio);
    if (label.find("engine default") != std::string::npos) defaultGap = &r;
    if (label.find("used above") != std::string::npos) used = &r;
  }
  std::ostringstream o;
  o << "While a gap is open the receiver holds the deltas after it (the link reorders by at most 3 frames, which "
       "maxGapEvents 2 still heals in place). ";
  if (st.config.sendHeld)
    o << "Its catch-up request lists them, so the replay does not send them again, and how long it waits barely "
         "moves the bytes ("
      << agui_sim::fmt("%.3f", lo) << "× to " << agui_sim::fmt("%.3f", hi) << "× over the rows with held seqs)";
  if (defaultGap && used)
    o << "; it moves how long the UI stays behind: " << defaultGap->behindSteps << " steps with the engine default, "
      << used->behindSteps << " with maxGapEvents " << st.config.engine.maxGapEvents;
  if (noHeld)
    o << ". Without the held seqs in the request every held delta is sent twice: "
      << agui_sim::fmt("%.3f", static_cast<double>(noHeld->link.bytesSent) / static_cast<double>(st.baselineBytes))
      << "× (last row)";
  o << ".";
  return o.str();
}

std::string heldFinding(const Study& st, const Sweep* sweep) {
  std::ostringstream o;
  for (const auto& [label, r] : st.gapTuning)
    if (label.find("without the held seqs") != std::string::npos)
      o << " Without the held seqs the replay sends those deltas again: "
        << agui_sim::fmt("%.2f", static_cast<double>(r.link.bytesSent) / static_cast<double>(st.baselineBytes))
        << "× on this seed (gap tuning table)";
  if (sweep && sweep->seeds > 0) {
    const SweepSum with = sweepSum(*sweep, "mobile-train",
                                   [](const SweepVariant& v) { return v.headline && v.strategy == Strategy::DeltaReplay; });
    const SweepSum without = sweepSum(*sweep, "mobile-train", [](const SweepVariant& v) {
      return !v.headline && v.strategy == Strategy::DeltaReplay && !v.sendHeld;
    });
    o << "; over " << sweep->seeds << " other seeds on `mobile-train`, with them: " << ratioSummary(with)
      << "; without: " << ratioSummary(without);
  }
  if (o.tellp() > 0) o << ".";
  return o.str();
}

std::string guardFinding(const Study& st, const Sweep* sweep) {
  const StudyConfig& c = st.config;
  uint64_t drifted = 0, approvals = 0;
  for (const auto& r : st.runs)
    for (Strategy s : {Strategy::DeltaReplay, Strategy::Adaptive})
      drifted += r.of(s).driftedApprovals, approvals += r.of(s).approvals;
  std::ostringstream o;
  o << "6. **The approval guard knows when the stream broke**"
    << (c.disconnectSignal ? "" : " only if told (this run left the disconnect signal off)") << ". ";
  if (c.disconnectSignal)
    o << "The client calls `noteDisconnected()` when its stream ends (as `Facade::end()` does, unless the run had "
         "just finished), and the guard refuses with reason `disconnected` until bytes flow again. ";
  o << "With " << (c.disconnectSignal ? "that and " : "") << "staleAfterMs " << c.guard.staleAfterMs
    << (c.guard.staleAfterMs == agui_sync::GuardOptions{}.staleAfterMs ? " (the guard's default)" : "") << ", ours let "
    << drifted << " drifted approval(s) through in " << approvals << " (strategies 4 and 5, all profiles, this seed)";
  if (sweep && sweep->seeds > 0) {
    const SweepSum head = sweepSum(*sweep, "", [](const SweepVariant& v) {
      return v.headline && (v.strategy == Strategy::DeltaReplay || v.strategy == Strategy::Adaptive);
    });
    const SweepSum stale = sweepSum(*sweep, "", [](const SweepVariant& v) { return !v.disconnectSignal; });
    o << " and " << head.drifted << " in " << head.approvals << " over " << sweep->seeds << " other seeds";
    o << ". Without the signal, on staleness alone (staleAfterMs 2000 with a heartbeat every " << c.heartbeatMs
      << " ms, this study's earlier headline), strategy 4 let " << stale.drifted << " through in " << stale.approvals
      << " over the same seeds (" << stale.inOutage << " during an outage; the agent's `verifyApproval` would have "
      << "acted on " << stale.actedOn << ")";
  }
  for (const auto& [label, r] : st.guardTuning)
    if (label.find("staleness only: staleAfterMs 15000") != std::string::npos)
      o << "; with the default 15 s and no signal, " << r.driftedApprovals
        << " on this seed's `mobile-train` alone (guard tuning table)";
  o << ".";
  return o.str();
}

std::string adaptiveFinding(const Study& st, const Result& mobileAdaptive) {
  uint64_t switches = 0;
  for (const auto& r : st.runs) switches += r.of(Strategy::Adaptive).modeSwitches;
  std::ostringstream o;
  o << "5. **Adaptive** ";
  if (switches == 0)
    o << "never switched on these profiles: the highest window taxRate on `mobile-train` was "
      << agui_sim::fmt("%.3f", mobileAdaptive.maxWindowTaxRate) << " against a break-even of "
      << agui_sim::fmt("%.3f", mobileAdaptive.breakEvenTaxRate)
      << ", and netSavedBytes stayed positive, because replays keep resyncs from costing snapshots. With replay, a "
         "snapshot per update is never the better deal for a state many times larger than a delta (the switch itself "
         "is exercised by tests/native/test_link_sim.cpp with a forced threshold).";
  else
    o << "switched modes " << switches << " time(s) over these profiles (link counters table); on `mobile-train` the "
      << "highest window taxRate in delta mode was " << agui_sim::fmt("%.3f", mobileAdaptive.maxWindowTaxRate)
      << " against a break-even of " << agui_sim::fmt("%.3f", mobileAdaptive.breakEvenTaxRate) << ".";
  return o.str();
}

// What the numbers say, with the numbers of this run.
std::string findings(const Study& st, const Sweep* sweep) {
  const ProfileRun* mobile = nullptr;
  for (const auto& r : st.runs)
    if (r.profile.name == "mobile-train") mobile = &r;
  if (!mobile) return "";
  auto x = [&](const Result& r) {
    return agui_sim::fmt("%.2f", static_cast<double>(r.link.bytesSent) / static_cast<double>(st.baselineBytes)) + "×";
  };
  const Result& ref = mobile->of(Strategy::Reference);
  const Result& snap = mobile->of(Strategy::DeltaSnapshot);
  const Result& only = mobile->of(Strategy::SnapshotsOnly);
  const Result& ours = mobile->of(Strategy::DeltaReplay);
  const Result& adaptive = mobile->of(Strategy::Adaptive);
  std::ostringstream o;
  o << "\n## Findings\n\n"
    << "1. **The reference handler drifts silently** once the link loses anything: on `mobile-train` its state "
       "differed from the agent's in "
    << ref.driftSteps << " of " << st.config.updates << " steps, " << ref.failedPatches
    << " patches failed and were dropped, and " << ref.driftedApprovals << " of " << ref.approvals
    << " approvals were of a proposal the agent no longer held (the agent acts on them: nothing in the approval lets "
       "it check). Only the snapshot at each reconnect repairs it, until the next loss.\n"
    << "2. **Snapshots only** never drifts but costs " << x(only) << " the zero-loss delta bytes on `mobile-train` ("
    << x(st.runs[0].of(Strategy::SnapshotsOnly)) << " on a perfect link): every update ships the whole "
    << withCommas(st.trace.stateBytes) << "-byte state.\n"
    << "3. **Delta + snapshot resync** is safe (0 drifted steps) but every resync and reconnect costs a snapshot: "
    << x(snap) << " on `mobile-train` (" << snap.snapshotsSent << " snapshots).\n"
    << "4. **Delta + replay (ours)** is safe and cheap: " << x(ours) << " on `mobile-train`, " << ours.replays
    << " catch-ups answered by replays, " << ours.snapshotsSent << " snapshot(s) in all. "
    << (st.config.sendHeld
            ? std::string("The catch-up request lists the seqs the client holds in its reorder window, so the replay "
                          "sends only what is missing; what remains above the zero-loss bytes is what the link wasted: "
                          "frames lost on the way (sent again by the replay), duplicates, cut frames and the odd "
                          "heartbeat.")
            : std::string("The replay resends the deltas the client holds in its reorder window."))
    << heldFinding(st, sweep) << "\n"
    << adaptiveFinding(st, adaptive) << "\n"
    ;
  o << guardFinding(st, sweep) << "\n";
  uint64_t engineDriftSteps = 0;
  for (const auto& r : st.runs)
    for (const auto& res : r.results)
      if (res.strategy != Strategy::Reference) engineDriftSteps += res.driftSteps;
  if (sweep)
    for (const auto& row : sweep->rows)
      if (row.variant.strategy != Strategy::Reference) engineDriftSteps += row.driftSteps;
  if (engineDriftSteps == 0)
    o << "7. **The engine never reported `synced` on a wrong state**: 0 drifted steps for strategies 2–5 on every "
         "profile"
      << (sweep && sweep->seeds ? " (and for 4, 5 on every other seed)" : "")
      << "; being behind (lost, held, outage) shows as `resyncing`, a pending gap, a disconnect or staleness, and "
         "the guard refuses then.\n";
  else
    o << "7. **The engine reported `synced` on a wrong state in " << engineDriftSteps
      << " steps** (strategies 2–5, all runs): a bug to investigate.\n";
  return o.str();
}

// The report is written section by section into one stream, in this order.

// Title and the setup: trace, server, human, our client, faults.
void writeSetup(std::ostream& o, const Study& st, const std::string& command) {
  const StudyConfig& c = st.config;
  o << "# Snapshot-tax study\n\n"
    << "Generated by `" << command
    << "` (`make study`; bench/tax_study.cpp, model bench/sim/study.cpp, link simulator bench/sim/link_sim.h). "
    << "Deterministic: the same seed gives the same trace, faults, human and numbers.\n\n"
    << "## Setup\n\n"
    << "- **Trace**: one agent-shaped state (bench/workload.h: document sections, todos, a proposal) of "
    << withCommas(st.trace.stateBytes) << " bytes, " << c.updates << " updates of 1–5 ops, one every " << c.stepMs
    << " ms, seed " << c.seed << ". `/proposal` {recipient, amount, content} is replaced " << st.trace.proposalChanges
    << " times (about 1 update in " << static_cast<int>(std::lround(1 / c.proposalRate))
    << "), each with a `test` of the old value; the workload's other ops are kept as generated.\n"
    << "- **Server**: a StateEmitter (epoch, digest every " << c.emitter.digestEvery << " events, snapshot fallback ratio "
    << c.emitter.snapshotRatio << ", replay ring " << c.emitter.replayMaxEvents << " events / "
    << (c.emitter.replayMaxBytes >> 20) << " MiB) produces every frame; all strategies carry the same update stream.\n"
    << "- **Human**: " << st.human.size() << " sessions; the person opens the proposal (a geometric gap, mean "
    << c.meanSessionGapSteps << " steps), clicks approve " << c.approveMinSteps << "–" << c.approveMaxSteps
    << " steps later; after a refusal they look again and click again " << c.retryMinSteps << "–" << c.retryMaxSteps
    << " steps later, at most " << c.maxRetries << " times. The schedule is the same for every strategy.\n"
    << "- **Our client**: SyncEngine (reorderWindow " << c.engine.reorderWindow << ", maxGapEvents "
    << c.engine.maxGapEvents << ") + ApprovalGuard (staleAfterMs " << c.guard.staleAfterMs
    << (c.guard.staleAfterMs == agui_sync::GuardOptions{}.staleAfterMs ? ", the default" : "")
    << (c.disconnectSignal ? "; when the stream ends or breaks the client calls `noteDisconnected()` as "
                             "`Facade::end()` does (unless the last event was RUN_FINISHED / RUN_ERROR, which this "
                             "one-run trace never sends), and bytes arriving clear it"
                           : "; no disconnect signal: the guard sees an outage only as silence")
    << "; the server writes a `: hb <seq>` heartbeat after " << c.heartbeatMs
    << " ms without a frame). A resync outcome closes the stream and reconnects at once with lastSeq/epoch/reason"
    << (c.sendHeld ? " and the seqs it holds in its reorder window (`resync.held`, `X-AGUI-State-Held`)" : "")
    << "; a catch-up that produced nothing is asked again after " << c.resyncTimeoutSteps << " steps.\n"
    << "- **Faults**: one schedule per profile (seeded), shared by all five strategies; a frame's fate depends only on "
    << "(step, index of the frame within the step). After a drop the client reconnects as soon as the outage ends. "
    << "Faults are modelled at the level of SSE events (relays, fan-out, broken connections), not TCP segments: a "
       "frame is lost whole whatever its size, so a 30 KB snapshot is as likely to arrive as a 300-byte delta "
       "(which flatters snapshots).\n\n";
}

// What the five strategies are and what each metric counts.
void writeDefinitions(std::ostream& o, const Study& st) {
  const StudyConfig& c = st.config;
  o << "### Strategies\n\n"
    << "1. **reference handler** (AG-UI docs): snapshots replace, deltas go through `applyPatch` blindly, a failed patch "
       "is logged and dropped, no sequencing. The server sends a snapshot at every (re)connect.\n"
    << "2. **delta + snapshot resync**: SyncEngine; every resync and every reconnect is answered with a snapshot.\n"
    << "3. **snapshots only** (ADR-0005): every update is a full `STATE_SNAPSHOT` (SyncEngine client, snapshot at "
       "reconnect).\n"
    << "4. **delta + replay (ours)**: StateEmitter + SyncEngine; a reconnect or resync sends lastSeq, epoch and the "
       "seqs the client holds, and the server answers `replaySince(lastSeq, epoch, held)` (the missed deltas but the "
       "held ones, when the ring covers them and they are cheaper, else a snapshot); reasons that mean the state is "
       "wrong get a snapshot (docs/wire.md section 3).\n"
    << "5. **adaptive (ours)**: like 4, but every " << c.adaptiveWindow
    << " steps the client reads the engine's metrics over the window and switches the server to a snapshot per "
       "update when `netSavedBytes < 0` or `taxRate` exceeds the break-even rate (S − d)/S (S snapshot bytes, d mean "
       "delta bytes: past it, resyncs answered by snapshots eat what deltas save); back to deltas when the seqs it "
       "misses fall under half that rate.\n\n"
    << "### Metrics\n\n"
    << "- **wire bytes**: every byte the server wrote: lost frames, duplicates, the transmitted prefix of a cut frame, "
       "catch-up snapshots and replays. **× base**: relative to the zero-loss delta bytes (strategy 4 on the lossless "
       "link: one snapshot + every delta = "
    << withCommas(st.baselineBytes) << " bytes).\n"
    << "- **drifted steps**: steps (after each update) where the UI state is wrong while the UI believes it is fine. "
       "Reference: any mismatch with the agent's state. Engine strategies: status `synced` but the state differs from "
       "the agent's state at the seq the engine claims (being behind is not drift: see *behind*).\n"
    << "- **behind**: steps where the UI state differs from the agent's current state, for any reason (lost, held, "
       "outage, resyncing).\n"
    << "- **approvals**: clicks the UI let through (reference: all; engine strategies: `ApprovalGuard::approve` ok). "
       "**drifted approvals**: of those, the UI's proposal differed from the agent's at that moment. **acted on**: "
       "drifted approvals the agent would execute (reference: all, its approval carries nothing to check; ours: "
       "`verifyApproval` of the approval's digest passes). **blocked**: guard refusals, by reason.\n\n";
}

// The profiles' parameters and what this seed's schedules realized.
void writeLinks(std::ostream& o, const Study& st) {
  o << "## Link profiles\n\n" << LinkProfile::markdownHeader() << "\n";
  for (const auto& r : st.runs) o << r.profile.markdownRow() << "\n";
  o << "\nOne step = one update = " << st.config.stepMs << " ms. Realized on this seed's schedules:\n\n"
    << "| profile | bad steps | drops | outage steps | frame loss (1 frame/step) |\n|---|---|---|---|---|\n";
  for (const auto& r : st.runs)
    o << "| `" << r.profile.name << "` | " << r.schedule.badSteps() << " | " << r.schedule.drops() << " | "
      << r.schedule.downSteps() << " | " << agui_sim::fmt("%.2f%%", 100 * r.schedule.lossRate()) << " |\n";
}

// Every strategy on every profile: the headline table and the link counters.
void writeResults(std::ostream& o, const Study& st) {
  o << "\n## Results\n\n"
    << "| profile | strategy | wire bytes | × base | drifted steps | behind | resyncs | reconnects | snapshots sent | "
       "replays | approvals | drifted approvals | acted on | blocked |\n"
    << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& pr : st.runs)
    for (const Result& r : pr.results) {
      const double ratio = static_cast<double>(r.link.bytesSent) / static_cast<double>(st.baselineBytes);
      o << "| `" << pr.profile.name << "` | " << strategyName(r.strategy) << " | " << withCommas(r.link.bytesSent)
        << " | " << agui_sim::fmt("%.3f", ratio) << " | " << r.driftSteps << " | " << r.behindSteps << " | "
        << (r.strategy == Strategy::Reference ? std::string("–") : std::to_string(r.resyncs)) << " | "
        << r.reconnects << " | " << r.snapshotsSent << " | " << r.replays << " | " << r.approvals << " | "
        << r.driftedApprovals << (r.driftedInOutage ? " (" + std::to_string(r.driftedInOutage) + " in outage)" : std::string())
        << " | " << r.actedOnDrift << " | " << blockedText(r) << " |\n";
    }

  o << "\nLink counters (frames): \n\n| profile | strategy | sent | lost | duplicated | reordered | cut | dropped "
       "with the connection | failed patches (reference) | adaptive: switches / steps in snapshot mode / max window taxRate "
       "(break-even) |\n"
       "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& pr : st.runs)
    for (const Result& r : pr.results)
      o << "| `" << pr.profile.name << "` | " << strategyShort(r.strategy) << " | " << r.link.framesSent << " | "
        << r.link.framesLost << " | " << r.link.framesDuplicated << " | " << r.link.framesReordered << " | "
        << r.link.framesTruncated << " | " << r.link.framesDiscarded << " | "
        << (r.strategy == Strategy::Reference ? std::to_string(r.failedPatches) : std::string("–")) << " | "
        << (r.strategy == Strategy::Adaptive
                ? std::to_string(r.modeSwitches) + " / " + std::to_string(r.snapshotModeSteps) + " / " +
                      agui_sim::fmt("%.3f", r.maxWindowTaxRate) + " (" + agui_sim::fmt("%.3f", r.breakEvenTaxRate) + ")"
                : std::string("–"))
        << " |\n";
}

// Strategy 4 on mobile-train with other receiver and guard options (when run).
void writeTuning(std::ostream& o, const Study& st) {
  if (!st.gapTuning.empty()) {
    o << "\n## Tuning the receiver: how long to wait for a gap (ours, strategy 4, `mobile-train`)\n\n"
      << gapTuningText(st) << "\n\n"
      << "| receiver options | wire bytes | × base | resyncs | replays | drifted approvals | behind |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [label, r] : st.gapTuning)
      o << "| " << label << " | " << withCommas(r.link.bytesSent) << " | "
        << agui_sim::fmt("%.3f", static_cast<double>(r.link.bytesSent) / static_cast<double>(st.baselineBytes))
        << " | " << r.resyncs << " | " << r.replays << " | " << r.driftedApprovals << " | " << r.behindSteps
        << " |\n";
  }
  if (!st.guardTuning.empty()) {
    o << "\n## Tuning the guard: what the UI knows during an outage (ours, strategy 4, `mobile-train`)\n\n"
      << "Without a disconnect signal the guard learns that the stream is gone only from silence (`staleAfterMs`): "
         "while a tunnel lasts less than that, the UI shows the last proposal it saw as approvable although the agent "
         "may have replaced it, and a short `staleAfterMs` is safe for a healthy stream only if the server writes at "
         "least that often (updates or `: hb` heartbeats; docs/wire.md suggests 5 s). With the built-in signal the "
         "guard refuses with reason `disconnected` from the moment the stream ends until bytes flow again, whatever "
         "`staleAfterMs`. (An earlier version of this study also had an app policy \"refuse while disconnected\"; "
         "the built-in signal is that policy, inside the guard.)\n\n"
      << "| guard options | approvals | drifted approvals (in outage) | acted on | blocked |\n|---|---:|---:|---:|---|\n";
    for (const auto& [label, r] : st.guardTuning)
      o << "| " << label << " | " << r.approvals << " | " << r.driftedApprovals << " (" << r.driftedInOutage << ") | "
        << r.actedOnDrift << " | " << blockedText(r) << " |\n";
  }
}

// The robustness sweep's rows, summed per profile and variant.
void writeSweep(std::ostream& o, const Sweep& sweep) {
  o << "\n## Other seeds (" << sweep.seeds << " seeds, " << sweep.firstSeed << "–" << sweep.firstSeed + sweep.seeds - 1
    << "): each a new trace, human and fault schedule, same options\n\n"
    << "| profile | strategy | approvals | drifted approvals (in outage) | acted on | drifted steps | mean × base | "
       "max × base | seeds > 1.1 × base |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : sweep.rows)
    o << "| `" << row.profile << "` | " << row.variant.label << " | " << row.approvals << " | " << row.drifted
      << " (" << row.inOutage << ") | " << row.actedOn << " | " << row.driftSteps << " | "
      << agui_sim::fmt("%.3f", row.runs ? row.sumRatio / static_cast<double>(row.runs) : 0) << " | "
      << agui_sim::fmt("%.3f", row.maxRatio) << " | " << row.over << " |\n";
}

// The whole markdown report; `command` is the command line it names as its source.
std::string report(const Study& st, const std::string& command, const Sweep* sweep = nullptr) {
  std::ostringstream o;
  writeSetup(o, st, command);
  writeDefinitions(o, st);
  writeLinks(o, st);
  writeResults(o, st);
  o << "\n## Goals\n\n";
  for (const Goal& g : goals(st, sweep)) o << "- **" << (g.pass ? "PASS" : "FAIL") << "** " << g.text << "\n";
  writeTuning(o, st);
  if (sweep && sweep->seeds > 0) writeSweep(o, *sweep);
  o << findings(st, sweep);
  o << "\n![bytes and drifted approvals](tax-study.svg)\n";
  return o.str();
}

// Grouped bars: bytes relative to the zero-loss delta bytes (log scale) and
// drifted approvals, per profile and strategy. One group per profile, one bar
// per strategy, the same x positions in both panels. A class only so that the
// panels share the geometry (the members below) and the stream.
class SvgWriter {
 public:
  explicit SvgWriter(const Study& study) : st(study) {}

  std::string write() {
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
      << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">Snapshot tax: wire bytes "
      << "relative to zero-loss delta bytes (log scale)</text>\n";
    bytesPanel();
    legend();
    driftPanel();
    o << "<text x=\"" << left << "\" y=\"" << H - 12 << "\" fill=\"#555\">seed " << st.config.seed << ", "
      << st.config.updates << " updates of a " << withCommas(st.trace.stateBytes)
      << "-byte state; base = zero-loss delta bytes " << withCommas(st.baselineBytes) << "</text>\n</svg>\n";
    return o.str();
  }

 private:
  static std::string num(double v) { return agui_sim::fmt("%.1f", v); }

  // Panel 1: log10 scale from 0.5 to the largest ratio, with the 1.1x goal line.
  void bytesPanel() {
    double maxRatio = 2;
    for (const auto& pr : st.runs)
      for (const auto& r : pr.results)
        maxRatio = std::max(maxRatio, static_cast<double>(r.link.bytesSent) / static_cast<double>(st.baselineBytes));
    const double lo = std::log10(0.5), hi = std::log10(maxRatio * 1.3);
    auto y1 = [&](double ratio) { return top1 + h1 - (std::log10(ratio) - lo) / (hi - lo) * h1; };
    for (double t : {0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0}) {
      if (t > maxRatio * 1.3) break;
      o << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << num(y1(t)) << "\" y2=\"" << num(y1(t))
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << num(y1(t) + 4)
        << "\" text-anchor=\"end\">" << t << "×</text>\n";
    }
    o << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << num(y1(1.1)) << "\" y2=\"" << num(y1(1.1))
      << "\" stroke=\"#333\" stroke-dasharray=\"5,4\"/>\n";
    for (size_t g = 0; g < groups; ++g) {
      const auto& pr = st.runs[g];
      const double gx = left + groupW * static_cast<double>(g) + groupW * 0.1;
      for (size_t b = 0; b < pr.results.size(); ++b) {
        const double ratio = static_cast<double>(pr.results[b].link.bytesSent) / static_cast<double>(st.baselineBytes);
        const double x = gx + barW * static_cast<double>(b), y = y1(std::max(ratio, 0.5));
        o << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(barW - 2) << "\" height=\""
          << num(top1 + h1 - y) << "\" fill=\"" << colors[b] << "\"><title>" << pr.profile.name << " / "
          << strategyName(pr.results[b].strategy) << ": " << agui_sim::fmt("%.3f", ratio) << "×</title></rect>\n"
          << "<text x=\"" << num(x + (barW - 2) / 2) << "\" y=\"" << num(y - 3)
          << "\" text-anchor=\"middle\" font-size=\"9\">" << agui_sim::fmt(ratio < 10 ? "%.2f" : "%.0f", ratio)
          << "</text>\n";
      }
      o << "<text x=\"" << num(left + groupW * (static_cast<double>(g) + 0.5)) << "\" y=\"" << num(top1 + h1 + 18)
        << "\" text-anchor=\"middle\" font-weight=\"bold\">" << pr.profile.name << "</text>\n";
    }
  }

  // The goal line and one swatch per strategy, above panel 1.
  void legend() {
    o << "<line x1=\"" << left << "\" x2=\"" << left + 24 << "\" y1=\"58\" y2=\"58\" stroke=\"#333\" "
         "stroke-dasharray=\"5,4\"/><text x=\""
      << left + 28 << "\" y=\"62\">goal: ours ≤ 1.1× the zero-loss delta bytes on mobile-train</text>\n";
    for (size_t b = 0; b < bars; ++b) {
      const double x = left + static_cast<double>(b) * 165;
      o << "<rect x=\"" << num(x) << "\" y=\"34\" width=\"12\" height=\"12\" fill=\"" << colors[b] << "\"/>"
        << "<text x=\"" << num(x + 16) << "\" y=\"45\">" << strategyName(kStrategies[b]) << "</text>\n";
    }
  }

  // Panel 2: drifted approvals, linear scale.
  void driftPanel() {
    uint64_t maxDrift = 1;
    for (const auto& pr : st.runs)
      for (const auto& r : pr.results) maxDrift = std::max(maxDrift, r.driftedApprovals);
    o << "<text x=\"" << W / 2 << "\" y=\"" << top2 - 20
      << "\" text-anchor=\"middle\" font-size=\"16\">Drifted approvals: the UI let the person approve a proposal the "
         "agent no longer holds</text>\n";
    auto y2 = [&](double v) { return top2 + h2 - v / static_cast<double>(maxDrift) * h2; };
    const uint64_t tick = maxDrift <= 5 ? 1 : maxDrift <= 20 ? 5 : maxDrift <= 50 ? 10 : 25;
    for (uint64_t t = 0; t <= maxDrift; t += tick)
      o << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << num(y2(static_cast<double>(t)))
        << "\" y2=\"" << num(y2(static_cast<double>(t))) << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6
        << "\" y=\"" << num(y2(static_cast<double>(t)) + 4) << "\" text-anchor=\"end\">" << t << "</text>\n";
    for (size_t g = 0; g < groups; ++g) {
      const auto& pr = st.runs[g];
      const double gx = left + groupW * static_cast<double>(g) + groupW * 0.1;
      for (size_t b = 0; b < pr.results.size(); ++b) {
        const double v = static_cast<double>(pr.results[b].driftedApprovals);
        const double x = gx + barW * static_cast<double>(b), y = y2(v);
        o << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(barW - 2) << "\" height=\""
          << num(top2 + h2 - y) << "\" fill=\"" << colors[b] << "\"/>\n<text x=\"" << num(x + (barW - 2) / 2)
          << "\" y=\"" << num(y - 3) << "\" text-anchor=\"middle\" font-size=\"10\">" << pr.results[b].driftedApprovals
          << "</text>\n";
      }
      o << "<text x=\"" << num(left + groupW * (static_cast<double>(g) + 0.5)) << "\" y=\"" << num(top2 + h2 + 18)
        << "\" text-anchor=\"middle\" font-weight=\"bold\">" << pr.profile.name << "</text>\n";
    }
  }

  const Study& st;
  const char* colors[5] = {"#d62728", "#ff7f0e", "#9467bd", "#2ca02c", "#17becf"};
  const double W = 900, H = 620, left = 70, right = 20, plotW = W - left - right;
  const double top1 = 78, h1 = 250, top2 = 400, h2 = 150;
  const size_t groups = st.runs.size(), bars = std::size(kStrategies);
  const double groupW = plotW / static_cast<double>(groups), barW = groupW * 0.8 / static_cast<double>(bars);
  std::ostringstream o;
};

std::string svg(const Study& st) { return SvgWriter(st).write(); }

}  // namespace
}  // namespace tax_study

int main(int argc, char** argv) {
  tax_study::StudyConfig c;
  std::string mdPath, svgPath;
  uint32_t sweepSeeds = 0;
  std::string command = "build/native/tax_study";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tax_study: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--updates") c.updates = std::atoi(value().c_str());
    else if (a == "--state-bytes") c.stateBytes = static_cast<size_t>(std::atol(value().c_str()));
    else if (a == "--seed") c.seed = static_cast<uint32_t>(std::strtoul(value().c_str(), nullptr, 10));
    else if (a == "--step-ms") c.stepMs = static_cast<uint64_t>(std::atol(value().c_str()));
    else if (a == "--sweep") sweepSeeds = static_cast<uint32_t>(std::strtoul(value().c_str(), nullptr, 10));
    else if (a == "--md") mdPath = value();
    else if (a == "--svg") svgPath = value();
    else {
      std::fprintf(stderr,
                   "usage: tax_study [--updates N] [--state-bytes B] [--seed S] [--step-ms MS] [--sweep SEEDS] [--md FILE] "
                   "[--svg FILE]\n");
      return 2;
    }
    command += " " + a + " " + argv[i];
  }
  if (c.updates < 10 || c.stateBytes < 1000 || c.stepMs == 0) {
    std::fprintf(stderr, "tax_study: need --updates >= 10, --state-bytes >= 1000, --step-ms > 0\n");
    return 2;
  }
  tax_study::Study st = tax_study::runStudy(c, agui_sim::standardProfiles(), true);
  tax_study::Sweep sweep;
  if (sweepSeeds > 0) sweep = tax_study::runSweep(c, agui_sim::standardProfiles(), c.seed + 1, sweepSeeds);
  const std::string md = tax_study::report(st, command, &sweep);
  std::fwrite(md.data(), 1, md.size(), stdout);
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f) {
      std::fprintf(stderr, "tax_study: cannot write %s\n", path.c_str());
      std::exit(2);
    }
  };
  if (!mdPath.empty()) write(mdPath, md);
  if (!svgPath.empty()) write(svgPath, tax_study::svg(st));
  return 0;
}
