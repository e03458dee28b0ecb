// Snapshot-tax study (issue 7, part 1): five ways of keeping AG-UI shared state
// in step, run on the SAME agent trace and the SAME fault schedule per link
// profile (bench/link_sim.h), measuring bytes on the wire, silent drift and
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
// tests/native/test_link_sim.cpp includes this file with AGUI_TAX_STUDY_NO_MAIN
// to run a short study, so everything but main() lives in namespace tax_study.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "approval_guard.h"
#include "canonical_json.h"
#include "json_patch.h"
#include "link_sim.h"
#include "sse_framer.h"
#include "state_emitter.h"
#include "sync_engine.h"
#include "workload.h"

namespace tax_study {

using nlohmann::json;
using agui_sim::FaultSchedule;
using agui_sim::LinkProfile;

// ---------------------------------------------------------------- configuration

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

  // The engine defaults wait maxGapEvents = 32 events before calling a gap
  // (built for reordering relays). This study's links reorder by at most 3
  // frames, so the client waits 2 more events (tolerates distance 3): every
  // event it waits is an event the replay sends again.
  static agui_sync::Options tunedEngineOptions() {
    agui_sync::Options o;
    o.maxGapEvents = 2;
    o.reorderWindow = 16;
    return o;
  }
  static agui_sync::EmitterOptions defaultEmitterOptions() {
    agui_sync::EmitterOptions o;
    o.epoch = "tax-study";
    return o;
  }
};

// ---------------------------------------------------------------- the agent's trace

struct Trace {
  json initial;
  std::vector<json> ops;             // ops[s - 1] is update s
  std::vector<std::string> digests;  // stateDigest of the agent state at seq s (0..updates)
  std::vector<json> proposals;       // /proposal at seq s
  size_t stateBytes = 0;
  size_t proposalChanges = 0;
};

inline const json& proposalOf(const json& state) {
  static const json missing;
  if (!state.is_object()) return missing;
  auto it = state.find("proposal");
  return it == state.end() ? missing : *it;
}

// The workload's updates, except that /proposal is the thing a human approves:
// it changes only now and then (proposalRate), as a whole {recipient, amount,
// content}, guarded by a `test` of the old value (docs/wire.md, section 1).
inline Trace makeTrace(const StudyConfig& c) {
  agui_bench::StateWorkload w = agui_bench::makeStateWorkload(c.stateBytes, c.updates, c.seed);
  std::mt19937_64 rng(agui_sim::splitmix64(c.seed ^ 0x70726f706f73616cull));
  static const char* recipients[] = {"alice@example.com", "bob@example.com", "carol@example.com",
                                     "dave@example.com", "erin@example.com"};
  Trace t;
  t.initial = w.initial;
  t.stateBytes = w.stateBytes;
  json state = w.initial;
  t.digests.push_back(agui_sync::stateDigest(state));
  t.proposals.push_back(proposalOf(state));
  for (int s = 1; s <= c.updates; ++s) {
    json ops = json::array();
    for (const json& op : w.deltas[static_cast<size_t>(s - 1)]) {
      if (op["path"].get<std::string>().rfind("/proposal", 0) == 0) continue;
      ops.push_back(op);
    }
    if (agui_sim::unitFrom(rng()) < c.proposalRate) {
      json next = {{"recipient", recipients[rng() % 5]},
                   {"amount", 50 + static_cast<int>(rng() % 9950)},
                   {"content", "Invoice #" + std::to_string(s)}};
      ops.push_back({{"op", "test"}, {"path", "/proposal"}, {"value", state["proposal"]}});
      ops.push_back({{"op", "replace"}, {"path", "/proposal"}, {"value", next}});
      ++t.proposalChanges;
    }
    if (ops.empty())
      ops.push_back({{"op", "replace"}, {"path", "/document/title"}, {"value", "Quarterly plan rev " + std::to_string(s)}});
    agui_sync::PatchResult r = agui_sync::applyPatch(state, ops);
    if (!r.ok()) {
      std::fprintf(stderr, "tax_study: trace update %d does not apply: %s\n", s, r.message.c_str());
      std::exit(2);
    }
    t.ops.push_back(std::move(ops));
    t.digests.push_back(agui_sync::stateDigest(state));
    t.proposals.push_back(proposalOf(state));
  }
  return t;
}

// ---------------------------------------------------------------- the human

struct Session {
  size_t view = 0;     // step at which the person opens the proposal
  size_t approve = 0;  // step at which they click approve
  uint32_t retry[4] = {0, 0, 0, 0};  // after a refusal: steps until the next click
};

inline std::vector<Session> makeHuman(const StudyConfig& c, uint64_t seed) {
  std::mt19937_64 rng(agui_sim::splitmix64(seed ^ 0x68756d616eull));
  auto between = [&rng](uint32_t lo, uint32_t hi) { return lo + static_cast<uint32_t>(rng() % (hi - lo + 1)); };
  std::vector<Session> out;
  const double p = 1.0 / std::max(1.0, c.meanSessionGapSteps);
  size_t step = 1;
  for (;;) {
    while (agui_sim::unitFrom(rng()) >= p) ++step;  // geometric gap
    Session s;
    s.view = step;
    s.approve = step + between(c.approveMinSteps, c.approveMaxSteps);
    size_t end = s.approve;
    for (uint32_t k = 0; k < 4; ++k) {
      s.retry[k] = between(c.retryMinSteps, c.retryMaxSteps);
      if (k < c.maxRetries) end += s.retry[k];
    }
    if (end > static_cast<size_t>(c.updates)) break;
    out.push_back(s);
    step = end + 1;
  }
  return out;
}

// ---------------------------------------------------------------- strategies

enum class Strategy { Reference, DeltaSnapshot, SnapshotsOnly, DeltaReplay, Adaptive };
const Strategy kStrategies[] = {Strategy::Reference, Strategy::DeltaSnapshot, Strategy::SnapshotsOnly,
                                Strategy::DeltaReplay, Strategy::Adaptive};

inline const char* strategyName(Strategy s) {
  switch (s) {
    case Strategy::Reference: return "1 reference handler";
    case Strategy::DeltaSnapshot: return "2 delta + snapshot resync";
    case Strategy::SnapshotsOnly: return "3 snapshots only";
    case Strategy::DeltaReplay: return "4 delta + replay (ours)";
    case Strategy::Adaptive: return "5 adaptive (ours)";
  }
  return "?";
}
inline const char* strategyShort(Strategy s) {
  switch (s) {
    case Strategy::Reference: return "reference";
    case Strategy::DeltaSnapshot: return "delta+snapshot";
    case Strategy::SnapshotsOnly: return "snapshots only";
    case Strategy::DeltaReplay: return "delta+replay";
    case Strategy::Adaptive: return "adaptive";
  }
  return "?";
}
inline bool isOurs(Strategy s) { return s == Strategy::DeltaReplay || s == Strategy::Adaptive; }

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
  std::map<std::string, uint64_t> blockedBy;
  uint64_t modeSwitches = 0;       // adaptive: delta <-> snapshot mode changes
  uint64_t snapshotModeSteps = 0;
  double maxWindowTaxRate = 0;     // adaptive: the highest window taxRate seen in delta mode
  double breakEvenTaxRate = 0;     // adaptive: the break-even rate at that window
  uint64_t heartbeats = 0;         // heartbeat frames written
  bool finalInSync = false;
};

inline bool stateWrongReason(const std::string& reason) {
  // Replay heals a state that is only behind (docs/wire.md, section 3).
  return !(reason == "gap" || reason == "stale-base" || reason == "reconnect");
}

class Run {
 public:
  Run(Strategy strategy, const Trace& trace, const FaultSchedule& schedule, const std::vector<Session>& human,
      const StudyConfig& config)
      : st_(strategy),
        trace_(trace),
        human_(human),
        c_(config),
        em_(config.emitter, trace.initial),
        link_(schedule),
        schedule_(schedule),
        framer_(config.engine.maxEventBytes),
        engine_(config.engine),
        guard_(engine_, config.guard) {
    res_.strategy = strategy;
  }

  Result run() {
    const size_t steps = static_cast<size_t>(c_.updates);
    for (size_t step = 0; step <= steps; ++step) {
      const uint64_t nowMs = step * c_.stepMs;
      std::vector<json> live;
      if (step > 0) {
        agui_sync::PatchOutcome o = em_.patch(trace_.ops[step - 1]);
        if (!o.ok()) {
          std::fprintf(stderr, "tax_study: emitter refused update %zu: %s\n", step, o.message.c_str());
          std::exit(2);
        }
        live = std::move(o.events);
      }
      if (link_.up(step)) {
        std::vector<std::string> frames;
        if (!link_.connected()) {
          // (Re)connect: the catch-up answer includes this step's update.
          if (everConnected_) ++res_.reconnects;
          everConnected_ = true;
          link_.connect();
          if (!reference()) engine_.reset();
          else framer_.reset();
          catchUp(reconnectReason(), frames);
          lastCatchUp_ = step;
        } else {
          liveFrames(live, frames);
          if (frames.empty() && (step - lastWrite_) * c_.stepMs >= c_.heartbeatMs) {
            frames.push_back(em_.heartbeat());
            ++res_.heartbeats;
          }
        }
        if (!frames.empty()) lastWrite_ = step;
        transmit(step, nowMs, frames);
        // A resync asks for a catch-up on a fresh connection at once; one that
        // produced nothing is asked again after resyncTimeoutSteps.
        if (!reference() && link_.connected() &&
            (wantResync_ || (engine_.status() == agui_sync::SyncStatus::Resyncing &&
                             step >= lastCatchUp_ + c_.resyncTimeoutSteps))) {
          closeStream();
          ++res_.reconnects;
          link_.connect();
          engine_.reset();
          frames.clear();
          catchUp(reconnectReason(), frames);
          lastCatchUp_ = step;
          transmit(step, nowMs, frames);
        }
      }
      human(step, nowMs);
      measure();
      if (st_ == Strategy::Adaptive) adapt(step);
    }
    res_.link = link_.stats();
    res_.resyncs = reference() ? 0 : engine_.metrics().resyncs;
    res_.finalInSync = uiState() == em_.state();
    return res_;
  }

 private:
  bool reference() const { return st_ == Strategy::Reference; }
  const json& uiState() const { return reference() ? ref_ : engine_.state(); }

  std::string reconnectReason() const {
    if (reference()) return "reconnect";
    const auto& r = engine_.receiver().resyncRequest();
    return r ? r->reason : std::string("reconnect");
  }

  void pushSnapshot(std::vector<std::string>& frames) {
    frames.push_back(agui_sync::StateEmitter::encode(em_.snapshot()));
    ++res_.snapshotsSent;
  }

  // What the server writes at the start of a connection (docs/wire.md, section 3).
  void catchUp(const std::string& reason, std::vector<std::string>& frames) {
    wantResync_ = false;
    const bool replayable = isOurs(st_) && !(st_ == Strategy::Adaptive && snapshotMode_) &&
                            engine_.lastSeq() && engine_.receiver().epoch() && !stateWrongReason(reason);
    if (!replayable) return pushSnapshot(frames);
    // The request carries lastSeq, epoch and the seqs the receiver holds in its
    // reorder window (resync.held, X-AGUI-State-Held); the replay leaves those out.
    std::vector<json> events =
        em_.replaySince(*engine_.lastSeq(), &*engine_.receiver().epoch(),
                        c_.sendHeld ? engine_.receiver().heldSeqs() : std::vector<uint64_t>{});
    if (events.size() == 1 && events[0].value("type", "") == "STATE_SNAPSHOT") {
      ++res_.snapshotsSent;
    } else if (!events.empty()) {
      ++res_.replays;
      res_.replayedFrames += events.size();
    }
    for (const json& e : events) frames.push_back(agui_sync::StateEmitter::encode(e));
  }

  void liveFrames(const std::vector<json>& live, std::vector<std::string>& frames) {
    if (live.empty()) return;
    if (st_ == Strategy::SnapshotsOnly || (st_ == Strategy::Adaptive && snapshotMode_)) return pushSnapshot(frames);
    for (const json& e : live) {
      if (e.value("type", "") == "STATE_SNAPSHOT") ++res_.snapshotsSent;  // the emitter's size fallback
      frames.push_back(agui_sync::StateEmitter::encode(e));
    }
  }

  void transmit(size_t step, uint64_t nowMs, const std::vector<std::string>& frames) {
    chunks_.clear();
    const bool alive = link_.send(step, frames, chunks_);
    for (const std::string& chunk : chunks_) deliver(chunk, nowMs);
    if (!alive) closeStream();
  }

  void deliver(const std::string& chunk, uint64_t nowMs) {
    if (reference()) return referenceFeed(chunk);
    outcomes_.clear();
    engine_.feed(chunk, outcomes_);
    if (!chunk.empty()) guard_.noteActivity(nowMs);
    for (const auto& o : outcomes_) {
      if (o.kind == agui_sync::OutcomeKind::Resync) wantResync_ = true;
      // As Facade::feedBytes: did the stream's last event end the run?
      if (o.kind == agui_sync::OutcomeKind::Event) runEnded_ = o.type == "RUN_FINISHED" || o.type == "RUN_ERROR";
      else if (o.kind == agui_sync::OutcomeKind::Applied) runEnded_ = false;
    }
  }

  void closeStream() {
    if (reference()) {
      framer_.endOfStream();
      return;
    }
    outcomes_.clear();
    engine_.end(outcomes_);
    // As Facade::end(): a stream that did not end right after RUN_FINISHED /
    // RUN_ERROR broke, and the guard refuses until bytes flow again. (The
    // study's agent runs one long run, so every end here is a break.)
    if (c_.disconnectSignal && !runEnded_) guard_.noteDisconnected();
    // The connection is gone either way; the next connect() asks with the reason.
    wantResync_ = false;
  }

  // The AG-UI docs handler: snapshots replace, deltas are applied blindly; a
  // failed patch is logged and dropped. No sequencing, nothing asked on reconnect.
  void referenceFeed(const std::string& chunk) {
    items_.clear();
    framer_.feed(chunk, items_);
    for (const auto& item : items_) {
      if (item.kind != agui_sync::SseItem::Kind::Event) continue;
      json ev = json::parse(item.data, nullptr, false);
      if (!ev.is_object()) continue;
      const std::string type = ev.value("type", "");
      if (type == "STATE_SNAPSHOT" && ev.contains("snapshot")) {
        ref_ = std::move(ev["snapshot"]);
      } else if (type == "STATE_DELTA" && ev.contains("delta")) {
        if (!agui_sync::applyPatch(ref_, ev["delta"]).ok()) ++res_.failedPatches;
      }
    }
  }

  // UI state wrong while the UI believes it is fine. Reference: any mismatch with
  // the agent (it believes it is always fine). Ours: status `synced` while the
  // state differs from the agent's state at the seq the engine claims (lastSeq);
  // being behind (events lost, held, or not sent during an outage) is not drift.
  void measure() {
    const bool behind = uiState() != em_.state();
    if (behind) ++res_.behindSteps;
    if (reference()) {
      if (behind) ++res_.driftSteps;
      return;
    }
    if (engine_.status() != agui_sync::SyncStatus::Synced || !stateWrong(&behind)) return;
    ++res_.driftSteps;
  }

  // `behind`: uiState() != em_.state(), when the caller already knows it.
  bool stateWrong(const bool* behind = nullptr) const {
    const auto ls = engine_.lastSeq();
    if (!ls || *ls >= trace_.digests.size()) return true;
    if (*ls == em_.seq()) return behind ? *behind : engine_.state() != em_.state();
    return agui_sync::stateDigest(engine_.state()) != trace_.digests[*ls];
  }

  void human(size_t step, uint64_t nowMs) {
    if (!active_ && next_ < human_.size() && human_[next_].view == step) {
      active_ = true;
      tries_ = 0;
      approveAt_ = human_[next_].approve;
      view();
    }
    if (!active_ || step != approveAt_) return;
    const json& agentProposal = proposalOf(em_.state());
    const bool outage = !link_.connected();
    if (reference()) {
      // The reference UI lets the person approve whatever it shows.
      ++res_.approvals;
      if (proposalOf(ref_) != agentProposal) {
        ++res_.driftedApprovals, ++res_.driftedWrongState, ++res_.actedOnDrift;
        if (outage) ++res_.driftedInOutage;
      }
      return finishSession();
    }
    agui_sync::Approval approval;
    agui_sync::GuardResult r =
        !viewed_ ? agui_sync::GuardResult{false, viewReason_} : guard_.approve(token_, nowMs, &approval);
    if (r.ok) {
      ++res_.approvals;
      if (proposalOf(engine_.state()) != agentProposal) {
        ++res_.driftedApprovals;
        if (outage) ++res_.driftedInOutage;
        if (engine_.status() == agui_sync::SyncStatus::Synced && stateWrong()) ++res_.driftedWrongState;
        if (agui_sync::verifyApproval(approval, em_.state())) ++res_.actedOnDrift;
      }
      return finishSession();
    }
    ++res_.blocked;
    ++res_.blockedBy[r.reason];
    if (tries_ < c_.maxRetries) {
      approveAt_ = step + human_[next_].retry[tries_++];
      view();  // the person looks again at what the UI shows now
      return;
    }
    finishSession();
  }

  void view() {
    if (reference()) return;
    agui_sync::GuardResult r = guard_.view("/proposal", nullptr, &token_);
    viewed_ = r.ok;
    viewReason_ = r.reason;
  }

  void finishSession() {
    active_ = false;
    ++next_;
  }

  // Adaptive: every window, compare what deltas saved with what the tax cost,
  // from the engine's metrics. Deltas are the worse deal when the window's
  // netSavedBytes < 0, or when its taxRate exceeds the break-even rate at which
  // resyncs answered by snapshots eat the savings: (S - d) / S, S = snapshot
  // bytes, d = mean delta bytes. In snapshot mode every update is a snapshot and
  // the client watches the seqs it misses; it goes back to deltas when that loss
  // rate is under half the break-even rate (hysteresis).
  void adapt(size_t step) {
    if (snapshotMode_) ++res_.snapshotModeSteps;
    if (step == 0 || step % c_.adaptiveWindow != 0) return;
    const agui_sync::Metrics& m = engine_.metrics();
    const uint64_t applied = m.deltasApplied - win_.deltasApplied;
    const uint64_t resyncs = m.resyncs - win_.resyncs;
    const int64_t net = m.netSavedBytes() - win_.netSavedBytes();
    const double meanDelta = m.deltasApplied ? static_cast<double>(m.deltaBytes) / static_cast<double>(m.deltasApplied) : 0;
    const double snapshotBytes = static_cast<double>(m.stateBytes) + 40;
    const double breakEven = c_.adaptiveTaxRate > 0 ? c_.adaptiveTaxRate
                                                    : std::max(0.0, (snapshotBytes - meanDelta) / snapshotBytes);
    const uint64_t seqNow = engine_.lastSeq().value_or(0);
    if (!snapshotMode_) {
      const double tax = applied ? static_cast<double>(resyncs) / static_cast<double>(applied) : (resyncs ? 1.0 : 0.0);
      if (tax > res_.maxWindowTaxRate) res_.maxWindowTaxRate = tax, res_.breakEvenTaxRate = breakEven;
      if (net < 0 || tax > breakEven) snapshotMode_ = true, ++res_.modeSwitches;
    } else {
      const uint64_t advanced = seqNow > winSeq_ ? seqNow - winSeq_ : 0;
      const uint64_t got = m.snapshots - win_.snapshots;
      const double missed = advanced ? 1.0 - std::min(1.0, static_cast<double>(got) / static_cast<double>(advanced)) : 1.0;
      if (advanced > 0 && missed < breakEven / 2) snapshotMode_ = false, ++res_.modeSwitches;
    }
    win_ = m;
    winSeq_ = seqNow;
  }

  Strategy st_;
  const Trace& trace_;
  const std::vector<Session>& human_;
  const StudyConfig& c_;
  agui_sync::StateEmitter em_;
  agui_sim::Link link_;
  const FaultSchedule& schedule_;
  // Reference client.
  agui_sync::SseFramer framer_;
  std::vector<agui_sync::SseItem> items_;
  json ref_ = json::object();
  // Our client.
  agui_sync::SyncEngine engine_;
  agui_sync::ApprovalGuard guard_;
  std::vector<agui_sync::Outcome> outcomes_;
  bool wantResync_ = false;
  size_t lastCatchUp_ = 0;
  bool runEnded_ = false;  // the last event was RUN_FINISHED / RUN_ERROR (Facade::end's rule)
  // Adaptive.
  bool snapshotMode_ = false;
  agui_sync::Metrics win_;
  uint64_t winSeq_ = 0;
  // Human.
  size_t next_ = 0;
  bool active_ = false;
  size_t approveAt_ = 0;
  uint32_t tries_ = 0;
  bool viewed_ = false;
  std::string viewReason_;
  agui_sync::ViewToken token_;

  std::vector<std::string> chunks_;
  bool everConnected_ = false;
  size_t lastWrite_ = 0;
  Result res_;
};

inline Result runStrategy(Strategy s, const Trace& trace, const FaultSchedule& schedule,
                          const std::vector<Session>& human, const StudyConfig& c) {
  return Run(s, trace, schedule, human, c).run();
}

// ---------------------------------------------------------------- the study

struct ProfileRun {
  LinkProfile profile;
  FaultSchedule schedule;
  std::vector<Result> results;  // in kStrategies order
  const Result& of(Strategy s) const {
    for (const auto& r : results)
      if (r.strategy == s) return r;
    return results.front();
  }
};

struct Study {
  StudyConfig config;
  Trace trace;
  std::vector<Session> human;
  std::vector<ProfileRun> runs;  // runs[0] is the lossless baseline
  uint64_t baselineBytes = 0;    // delta + replay (ours) on the lossless link
  // ours (4) on mobile-train with other receiver / guard options.
  std::vector<std::pair<std::string, Result>> gapTuning, guardTuning;
};

inline uint64_t profileSeed(uint32_t seed, size_t index) { return agui_sim::splitmix64(seed * 1000003ull + index); }

inline Study runStudy(const StudyConfig& c, const std::vector<LinkProfile>& profiles, bool withTuning) {
  Study st;
  st.config = c;
  st.trace = makeTrace(c);
  st.human = makeHuman(c, c.seed);
  const size_t steps = static_cast<size_t>(c.updates) + 1;
  std::vector<LinkProfile> all{agui_sim::lossless()};
  all.insert(all.end(), profiles.begin(), profiles.end());
  for (size_t i = 0; i < all.size(); ++i) {
    ProfileRun pr{all[i], FaultSchedule(all[i], steps, profileSeed(c.seed, i)), {}};
    for (Strategy s : kStrategies) pr.results.push_back(runStrategy(s, st.trace, pr.schedule, st.human, c));
    st.runs.push_back(std::move(pr));
  }
  st.baselineBytes = st.runs[0].of(Strategy::DeltaReplay).link.bytesSent;
  if (withTuning) {
    const ProfileRun* mobile = nullptr;
    for (const auto& r : st.runs)
      if (r.profile.name == "mobile-train") mobile = &r;
    if (mobile) {
      for (size_t gap : {size_t(32), size_t(8), size_t(4), size_t(2), size_t(1)}) {
        StudyConfig t = c;
        t.engine = agui_sync::Options{};
        t.engine.maxGapEvents = gap;
        if (gap < 32) t.engine.reorderWindow = 16;
        std::string label = "maxGapEvents " + std::to_string(gap) + (gap == 32 ? " (engine default)" : "") +
                            (gap == c.engine.maxGapEvents ? " (used above)" : "");
        st.gapTuning.emplace_back(label, runStrategy(Strategy::DeltaReplay, st.trace, mobile->schedule, st.human, t));
      }
      {
        StudyConfig t = c;
        t.sendHeld = false;
        st.gapTuning.emplace_back("maxGapEvents " + std::to_string(c.engine.maxGapEvents) +
                                      ", catch-up request without the held seqs (the replay sends them again)",
                                  runStrategy(Strategy::DeltaReplay, st.trace, mobile->schedule, st.human, t));
      }
      struct GuardVariant {
        const char* label;
        uint64_t staleAfterMs;
        bool disconnectSignal;
      };
      for (const GuardVariant& v :
           {GuardVariant{"staleness only: staleAfterMs 15000 (guard default)", 15000, false},
            GuardVariant{"staleness only: staleAfterMs 2000 (this study's earlier headline)", 2000, false},
            GuardVariant{"built-in disconnect signal + staleAfterMs 15000 (guard default)", 15000, true},
            GuardVariant{"built-in disconnect signal + staleAfterMs 2000", 2000, true}}) {
        StudyConfig t = c;
        t.guard.staleAfterMs = v.staleAfterMs;
        t.disconnectSignal = v.disconnectSignal;
        std::string label = v.label;
        if (v.staleAfterMs == c.guard.staleAfterMs && v.disconnectSignal == c.disconnectSignal)
          label += " (used above)";
        st.guardTuning.emplace_back(label, runStrategy(Strategy::DeltaReplay, st.trace, mobile->schedule, st.human, t));
      }
    }
  }
  return st;
}

// Robustness: the same study for other seeds (other trace, human and faults),
// strategies 1, 4 and 5 as above (the headline rows) plus two variants of 4
// without one of its features, summed per profile.
struct SweepVariant {
  std::string label;
  Strategy strategy = Strategy::Reference;
  bool headline = true;  // the configuration of the results table (the goals are judged on these)
  bool disconnectSignal = true;
  std::optional<uint64_t> staleAfterMs;  // none: as above
  bool sendHeld = true;
};

inline std::vector<SweepVariant> sweepVariants() {
  return {{strategyName(Strategy::Reference), Strategy::Reference},
          {strategyName(Strategy::DeltaReplay), Strategy::DeltaReplay},
          {strategyName(Strategy::Adaptive), Strategy::Adaptive},
          {"4, guard on staleness only (staleAfterMs 2000, no disconnect signal)", Strategy::DeltaReplay, false, false,
           2000, true},
          {"4, catch-up request without the held seqs", Strategy::DeltaReplay, false, true, std::nullopt, false}};
}

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

inline Sweep runSweep(const StudyConfig& base, const std::vector<LinkProfile>& profiles, uint32_t firstSeed,
                      uint32_t seeds) {
  Sweep sw;
  sw.firstSeed = firstSeed;
  sw.seeds = seeds;
  for (const auto& p : profiles)
    for (const SweepVariant& v : sweepVariants()) sw.rows.push_back(SweepRow{p.name, v});
  for (uint32_t k = 0; k < seeds; ++k) {
    StudyConfig c = base;
    c.seed = firstSeed + k;
    const Trace trace = makeTrace(c);
    const std::vector<Session> human = makeHuman(c, c.seed);
    const size_t steps = static_cast<size_t>(c.updates) + 1;
    const FaultSchedule perfect(agui_sim::lossless(), steps, profileSeed(c.seed, 0));
    const double base0 =
        static_cast<double>(runStrategy(Strategy::DeltaReplay, trace, perfect, human, c).link.bytesSent);
    for (size_t i = 0; i < profiles.size(); ++i) {
      const FaultSchedule schedule(profiles[i], steps, profileSeed(c.seed, i + 1));
      for (auto& row : sw.rows) {
        if (row.profile != profiles[i].name) continue;
        StudyConfig v = c;
        v.disconnectSignal = row.variant.disconnectSignal;
        if (row.variant.staleAfterMs) v.guard.staleAfterMs = *row.variant.staleAfterMs;
        v.sendHeld = row.variant.sendHeld;
        const Result r = runStrategy(row.variant.strategy, trace, schedule, human, v);
        const double ratio = static_cast<double>(r.link.bytesSent) / base0;
        row.approvals += r.approvals;
        row.drifted += r.driftedApprovals;
        row.inOutage += r.driftedInOutage;
        row.actedOn += r.actedOnDrift;
        row.driftSteps += r.driftSteps;
        row.maxRatio = std::max(row.maxRatio, ratio);
        row.sumRatio += ratio;
        row.over += ratio > 1.1 ? 1 : 0;
        ++row.runs;
      }
    }
  }
  return sw;
}

struct Goal {
  std::string text;
  bool pass = false;
};

inline std::vector<Goal> goals(const Study& st, const Sweep* sweep = nullptr) {
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

inline std::string withCommas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

inline std::string blockedText(const Result& r) {
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
inline std::string ratioSummary(const SweepSum& t) {
  return "mean " + agui_sim::fmt("%.3f", t.runs ? t.sumRatio / static_cast<double>(t.runs) : 0) + "×, max " +
         agui_sim::fmt("%.3f", t.maxRatio) + "×, " + std::to_string(t.over) + " of " + std::to_string(t.runs) +
         " seeds above 1.1×";
}

// The gap tuning table's paragraph: what the numbers of its rows say.
inline std::string gapTuningText(const Study& st) {
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

inline std::string heldFinding(const Study& st, const Sweep* sweep) {
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

inline std::string guardFinding(const Study& st, const Sweep* sweep) {
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

inline std::string adaptiveFinding(const Study& st, const Result& mobileAdaptive) {
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
inline std::string findings(const Study& st, const Sweep* sweep) {
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

inline std::string report(const Study& st, const std::string& command, const Sweep* sweep = nullptr) {
  const StudyConfig& c = st.config;
  std::ostringstream o;
  o << "# Snapshot-tax study\n\n"
    << "Generated by `" << command << "` (`make study`; bench/tax_study.cpp, link simulator bench/link_sim.h). "
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
       "(which flatters snapshots).\n\n"
    << "### Strategies\n\n"
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

  o << "## Link profiles\n\n" << LinkProfile::markdownHeader() << "\n";
  for (const auto& r : st.runs) o << r.profile.markdownRow() << "\n";
  o << "\nOne step = one update = " << c.stepMs << " ms. Realized on this seed's schedules:\n\n"
    << "| profile | bad steps | drops | outage steps | frame loss (1 frame/step) |\n|---|---|---|---|---|\n";
  for (const auto& r : st.runs)
    o << "| `" << r.profile.name << "` | " << r.schedule.badSteps() << " | " << r.schedule.drops() << " | "
      << r.schedule.downSteps() << " | " << agui_sim::fmt("%.2f%%", 100 * r.schedule.lossRate()) << " |\n";

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

  o << "\n## Goals\n\n";
  for (const Goal& g : goals(st, sweep)) o << "- **" << (g.pass ? "PASS" : "FAIL") << "** " << g.text << "\n";

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
  if (sweep && sweep->seeds > 0) {
    o << "\n## Other seeds (" << sweep->seeds << " seeds, " << sweep->firstSeed << "–"
      << sweep->firstSeed + sweep->seeds - 1
      << "): each a new trace, human and fault schedule, same options\n\n"
      << "| profile | strategy | approvals | drifted approvals (in outage) | acted on | drifted steps | mean × base | "
         "max × base | seeds > 1.1 × base |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& row : sweep->rows)
      o << "| `" << row.profile << "` | " << row.variant.label << " | " << row.approvals << " | " << row.drifted
        << " (" << row.inOutage << ") | " << row.actedOn << " | " << row.driftSteps << " | "
        << agui_sim::fmt("%.3f", row.runs ? row.sumRatio / static_cast<double>(row.runs) : 0) << " | "
        << agui_sim::fmt("%.3f", row.maxRatio) << " | " << row.over << " |\n";
  }
  o << findings(st, sweep);
  o << "\n![bytes and drifted approvals](tax-study.svg)\n";
  return o.str();
}

// Grouped bars: bytes relative to the zero-loss delta bytes (log scale) and
// drifted approvals, per profile and strategy.
inline std::string svg(const Study& st) {
  const char* colors[] = {"#d62728", "#ff7f0e", "#9467bd", "#2ca02c", "#17becf"};
  const double W = 900, H = 620, left = 70, right = 20, plotW = W - left - right;
  const double top1 = 78, h1 = 250, top2 = 400, h2 = 150;
  const size_t groups = st.runs.size(), bars = std::size(kStrategies);
  const double groupW = plotW / static_cast<double>(groups), barW = groupW * 0.8 / static_cast<double>(bars);
  std::ostringstream o;
  auto num = [](double v) { return agui_sim::fmt("%.1f", v); };
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">Snapshot tax: wire bytes "
    << "relative to zero-loss delta bytes (log scale)</text>\n";
  // Panel 1: log10 scale from 0.5 to the largest ratio.
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
  // Legend.
  o << "<line x1=\"" << left << "\" x2=\"" << left + 24 << "\" y1=\"58\" y2=\"58\" stroke=\"#333\" "
       "stroke-dasharray=\"5,4\"/><text x=\""
    << left + 28 << "\" y=\"62\">goal: ours ≤ 1.1× the zero-loss delta bytes on mobile-train</text>\n";
  for (size_t b = 0; b < bars; ++b) {
    const double x = left + static_cast<double>(b) * 165;
    o << "<rect x=\"" << num(x) << "\" y=\"34\" width=\"12\" height=\"12\" fill=\"" << colors[b] << "\"/>"
      << "<text x=\"" << num(x + 16) << "\" y=\"45\">" << strategyName(kStrategies[b]) << "</text>\n";
  }
  // Panel 2: drifted approvals.
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
  o << "<text x=\"" << left << "\" y=\"" << H - 12 << "\" fill=\"#555\">seed " << st.config.seed << ", "
    << st.config.updates << " updates of a " << withCommas(st.trace.stateBytes)
    << "-byte state; base = zero-loss delta bytes " << withCommas(st.baselineBytes) << "</text>\n</svg>\n";
  return o.str();
}

}  // namespace tax_study

#ifndef AGUI_TAX_STUDY_NO_MAIN
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
#endif
