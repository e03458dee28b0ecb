#pragma once
// The snapshot-tax study's model (issue 7, part 1): five ways of keeping AG-UI
// shared state in step, each run on the SAME agent trace, the SAME simulated
// human and the SAME fault schedule per link profile (sim/link_sim.h), measuring
// bytes on the wire, silent drift and approvals of proposals the agent no longer
// holds.
//
// Part of the agui_sim library: bench/tax_study.cpp turns a Study into the
// markdown report and the SVG; tests/native/test_link_sim.cpp runs short studies.
// Everything is deterministic for a given StudyConfig::seed.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/approval_guard.h>
#include <agui_sync/options.h>
#include <agui_sync/state_emitter.h>

#include "sim/link_sim.h"

namespace tax_study {

using agui_sim::FaultSchedule;
using agui_sim::LinkProfile;

// ---------------------------------------------------------------- configuration

// Everything a run depends on besides the link profile: the trace, the human,
// and how our client and server are set up.
struct StudyConfig {
  size_t stateBytes = 30000;   // agent-shaped state (bench/workload.h)
  int updates = 2000;          // agent state updates = steps
  uint32_t seed = 7;
  uint64_t stepMs = 500;       // one update every 500 ms
  double proposalRate = 1.0 / 40;  // chance that an update replaces /proposal
  // The simulated human.
  double meanSessionGapSteps = 25;  // between approval sessions (geometric)
  uint32_t approveMinSteps = 4, approveMaxSteps = 20;  // view -> approve: 2-10 s
  uint32_t retryMinSteps = 2, retryMaxSteps = 8;       // after a refusal: look again, approve again
  uint32_t maxRetries = 2;
  // Our side: engine, guard, emitter, client behaviour.
  agui_sync::Options engine = tunedEngineOptions();
  agui_sync::GuardOptions guard;     // the guard's defaults (staleAfterMs 15000); see the guard tuning table
  bool disconnectSignal = true;      // the client tells the guard when its stream ended, as Facade::end() does
  uint64_t heartbeatMs = 1000;      // the server writes ": hb <seq>" when it wrote nothing for this long
  bool sendHeld = true;              // the catch-up request lists the seqs the client holds (X-AGUI-State-Held)
  agui_sync::EmitterOptions emitter = defaultEmitterOptions();
  uint32_t resyncTimeoutSteps = 2;  // a catch-up that produced nothing is asked again after this
  size_t adaptiveWindow = 100;      // steps per adaptive decision
  double adaptiveTaxRate = 0;       // switch threshold for taxRate; 0 = the break-even rate (see Run::adapt)

  // The engine defaults with a shorter gap wait, for this study's links (study.cpp says why).
  static agui_sync::Options tunedEngineOptions();
  // The emitter defaults with a fixed epoch, so replays can check it.
  static agui_sync::EmitterOptions defaultEmitterOptions();
};

// ---------------------------------------------------------------- the agent's trace

// The agent's updates and, per seq, what its state was: the ground truth every
// strategy's UI state is measured against.
struct Trace {
  nlohmann::json initial;
  std::vector<nlohmann::json> ops;             // ops[s - 1] is update s
  std::vector<std::string> digests;  // stateDigest of the agent state at seq s (0..updates)
  std::vector<nlohmann::json> proposals;       // /proposal at seq s
  size_t stateBytes = 0;
  size_t proposalChanges = 0;
};

// The workload (bench/workload.h) made into a trace whose /proposal changes only
// now and then, guarded by a `test` of the old value. Exits(2) if an update does
// not apply (a bug in the generator, not a study result).
Trace makeTrace(const StudyConfig& c);

// ---------------------------------------------------------------- the human

// One approval session: the person opens the proposal, clicks approve, and after
// a refusal looks again and clicks again.
struct Session {
  size_t view = 0;     // step at which the person opens the proposal
  size_t approve = 0;  // step at which they click approve
  uint32_t retry[4] = {0, 0, 0, 0};  // after a refusal: steps until the next click
};

// The human's sessions over the whole run, from `seed` (the same for every strategy).
std::vector<Session> makeHuman(const StudyConfig& c, uint64_t seed);

// ---------------------------------------------------------------- strategies

enum class Strategy { Reference, DeltaSnapshot, SnapshotsOnly, DeltaReplay, Adaptive };
// Every strategy, in the order of the report's tables and of ProfileRun::results.
inline constexpr Strategy kStrategies[] = {Strategy::Reference, Strategy::DeltaSnapshot, Strategy::SnapshotsOnly,
                                           Strategy::DeltaReplay, Strategy::Adaptive};

// "4 delta + replay (ours)": the numbered name of the report's tables.
const char* strategyName(Strategy s);
// "delta+replay": the short name of goals and counters.
const char* strategyShort(Strategy s);
// Strategies 4 and 5: the product's client and server.
inline bool isOurs(Strategy s) { return s == Strategy::DeltaReplay || s == Strategy::Adaptive; }

// What one strategy did on one link.
struct Result {
  Strategy strategy = Strategy::Reference;
  agui_sim::LinkStats link;
  uint64_t driftSteps = 0;     // UI state wrong while the UI believes it is fine
  uint64_t behindSteps = 0;    // UI state != the agent's current state, for any reason
  uint64_t resyncs = 0;        // resync outcomes of the engine (reference: none, it cannot tell)
  uint64_t reconnects = 0;     // connections after the first (drops and voluntary catch-ups)
  uint64_t snapshotsSent = 0;  // STATE_SNAPSHOT frames written (live + catch-up)
  uint64_t replays = 0;        // catch-ups answered with replayed deltas
  uint64_t replayedFrames = 0;
  uint64_t failedPatches = 0;  // reference: deltas that failed and were dropped
  uint64_t approvals = 0;      // approvals the UI let through
  uint64_t driftedApprovals = 0;   // ... of a proposal != the agent's proposal at that moment
  uint64_t driftedWrongState = 0;  // ... of which the UI state was wrong (not just behind)
  uint64_t driftedInOutage = 0;    // ... of which happened while the connection was down
  uint64_t actedOnDrift = 0;       // drifted approvals the agent would act on
  uint64_t blocked = 0;            // guard refusals
  std::map<std::string, uint64_t> blockedBy;  // guard refusals by wire name ("disconnected", ...)
  uint64_t modeSwitches = 0;       // adaptive: delta <-> snapshot mode changes
  uint64_t snapshotModeSteps = 0;
  double maxWindowTaxRate = 0;     // adaptive: the highest window taxRate seen in delta mode
  double breakEvenTaxRate = 0;     // adaptive: the break-even rate at that window
  uint64_t heartbeats = 0;         // heartbeat frames written
  bool finalInSync = false;
};

// Runs strategy `s` over the whole trace on `schedule`'s link (one step per update).
Result runStrategy(Strategy s, const Trace& trace, const FaultSchedule& schedule, const std::vector<Session>& human,
                   const StudyConfig& c);

// ---------------------------------------------------------------- the study

// Every strategy on one link profile, through one fault schedule.
struct ProfileRun {
  LinkProfile profile;
  FaultSchedule schedule;
  std::vector<Result> results;  // in kStrategies order
  // The result of strategy `s` (results.front() if it did not run).
  const Result& of(Strategy s) const;
};

// One seed's study: the lossless baseline and every profile, plus (optionally)
// strategy 4 on mobile-train with other receiver and guard options.
struct Study {
  StudyConfig config;
  Trace trace;
  std::vector<Session> human;
  std::vector<ProfileRun> runs;  // runs[0] is the lossless baseline
  uint64_t baselineBytes = 0;    // delta + replay (ours) on the lossless link
  // ours (4) on mobile-train with other receiver / guard options.
  std::vector<std::pair<std::string, Result>> gapTuning, guardTuning;
};

// The fault schedule's seed of profile `index` (0 = lossless) for a study seed.
inline uint64_t profileSeed(uint32_t seed, size_t index) { return agui_sim::splitmix64(seed * 1000003ull + index); }

// The lossless baseline followed by `profiles`; `withTuning` adds the tuning tables.
Study runStudy(const StudyConfig& c, const std::vector<LinkProfile>& profiles, bool withTuning);

// ---------------------------------------------------------------- robustness sweep

// One row kind of the sweep: a strategy, possibly without one of its features.
struct SweepVariant {
  std::string label;
  Strategy strategy = Strategy::Reference;
  bool headline = true;  // the configuration of the results table (the goals are judged on these)
  bool disconnectSignal = true;
  std::optional<uint64_t> staleAfterMs;  // none: as above
  bool sendHeld = true;
};

// Strategies 1, 4 and 5 as in the study, plus 4 on staleness alone and 4 without
// held seqs in the catch-up request.
std::vector<SweepVariant> sweepVariants();

// One variant on one profile, summed over the sweep's seeds.
struct SweepRow {
  std::string profile;
  SweepVariant variant;
  uint64_t approvals = 0, drifted = 0, inOutage = 0, actedOn = 0, driftSteps = 0;
  double maxRatio = 0, sumRatio = 0;
  size_t runs = 0, over = 0;  // over: runs above 1.1 x base
};

struct Sweep {
  uint32_t firstSeed = 0;
  uint32_t seeds = 0;
  std::vector<SweepRow> rows;
};

// The study for seeds firstSeed .. firstSeed + seeds - 1 (each a new trace, human
// and fault schedule), every sweep variant on every profile.
Sweep runSweep(const StudyConfig& base, const std::vector<LinkProfile>& profiles, uint32_t firstSeed,
               uint32_t seeds);

}  // namespace tax_study
