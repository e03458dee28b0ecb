// The snapshot-tax study's model: see study.h. The report and the SVG are
// bench/tax_study.cpp's.
#include "sim/study.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <agui_sync/approval_guard.h>
#include <agui_sync/canonical_json.h>
#include <agui_sync/codes.h>
#include <agui_sync/metrics.h>
#include <agui_sync/outcome.h>
#include <agui_sync/state_emitter.h>
#include <agui_sync/sync_engine.h>

#include "json/json_patch.h"
#include "receive/sse_framer.h"
#include "workload.h"

namespace tax_study {

using nlohmann::json;

// ---------------------------------------------------------------- configuration

// The engine defaults wait maxGapEvents = 32 events before calling a gap
// (built for reordering relays). This study's links reorder by at most 3
// frames, so the client waits 2 more events (tolerates distance 3): every
// event it waits is an event the replay sends again.
agui_sync::Options StudyConfig::tunedEngineOptions() {
  agui_sync::Options o;
  o.maxGapEvents = 2;
  o.reorderWindow = 16;
  return o;
}

agui_sync::EmitterOptions StudyConfig::defaultEmitterOptions() {
  agui_sync::EmitterOptions o;
  o.epoch = "tax-study";
  return o;
}

// ---------------------------------------------------------------- the agent's trace

namespace {

const json& proposalOf(const json& state) {
  static const json missing;
  if (!state.is_object()) return missing;
  auto it = state.find("proposal");
  return it == state.end() ? missing : *it;
}

}  // namespace

// The workload's updates, except that /proposal is the thing a human approves:
// it changes only now and then (proposalRate), as a whole {recipient, amount,
// content}, guarded by a `test` of the old value (docs/wire.md, section 1).
Trace makeTrace(const StudyConfig& c) {
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

std::vector<Session> makeHuman(const StudyConfig& c, uint64_t seed) {
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

const char* strategyName(Strategy s) {
  switch (s) {
    case Strategy::Reference: return "1 reference handler";
    case Strategy::DeltaSnapshot: return "2 delta + snapshot resync";
    case Strategy::SnapshotsOnly: return "3 snapshots only";
    case Strategy::DeltaReplay: return "4 delta + replay (ours)";
    case Strategy::Adaptive: return "5 adaptive (ours)";
  }
  return "?";
}
const char* strategyShort(Strategy s) {
  switch (s) {
    case Strategy::Reference: return "reference";
    case Strategy::DeltaSnapshot: return "delta+snapshot";
    case Strategy::SnapshotsOnly: return "snapshots only";
    case Strategy::DeltaReplay: return "delta+replay";
    case Strategy::Adaptive: return "adaptive";
  }
  return "?";
}

// ---------------------------------------------------------------- one run

namespace {

// Why the client asks for a catch-up: the engine's resync reason, or none for a
// plain reconnect (the connection broke; the state is right, only behind).
using CatchUpReason = std::optional<agui_sync::Code>;

// Replay heals a state that is only behind (gap, stale-base, a plain reconnect);
// any other reason says the state is wrong and needs a snapshot (docs/wire.md,
// section 3; the code table's `cure` column).
bool stateWrongReason(const CatchUpReason& reason) { return reason && !agui_sync::healableByReplay(*reason); }

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
          std::fprintf(stderr, "tax_study: emitter refused update %zu: %s\n", step, o.failure->message.c_str());
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

  CatchUpReason reconnectReason() const {
    if (reference()) return std::nullopt;
    const auto& r = engine_.resyncRequest();
    return r ? CatchUpReason(r->reason) : std::nullopt;
  }

  void pushSnapshot(std::vector<std::string>& frames) {
    frames.push_back(agui_sync::StateEmitter::encode(em_.snapshot()));
    ++res_.snapshotsSent;
  }

  // What the server writes at the start of a connection (docs/wire.md, section 3).
  void catchUp(const CatchUpReason& reason, std::vector<std::string>& frames) {
    wantResync_ = false;
    const bool replayable = isOurs(st_) && !(st_ == Strategy::Adaptive && snapshotMode_) &&
                            engine_.lastSeq() && engine_.epoch() && !stateWrongReason(reason);
    if (!replayable) return pushSnapshot(frames);
    // The request carries lastSeq, epoch and the seqs the receiver holds in its
    // reorder window (resync.held, X-AGUI-State-Held); the replay leaves those out.
    std::vector<json> events =
        em_.replaySince(*engine_.lastSeq(), &*engine_.epoch(),
                        c_.sendHeld ? engine_.heldSeqs() : std::vector<uint64_t>{});
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
    ++res_.blockedBy[agui_sync::codeName(r.reason)];
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
  agui_sync::Code viewReason_ = agui_sync::Code::InvalidToken;  // why view() failed
  agui_sync::ViewToken token_;

  std::vector<std::string> chunks_;
  bool everConnected_ = false;
  size_t lastWrite_ = 0;
  Result res_;
};

}  // namespace

Result runStrategy(Strategy s, const Trace& trace, const FaultSchedule& schedule, const std::vector<Session>& human,
                   const StudyConfig& c) {
  return Run(s, trace, schedule, human, c).run();
}

// ---------------------------------------------------------------- the study

const Result& ProfileRun::of(Strategy s) const {
  for (const auto& r : results)
    if (r.strategy == s) return r;
  return results.front();
}

namespace {

// Strategy 4 on mobile-train with other gap waits, and without held seqs.
void runGapTuning(Study& st, const ProfileRun& mobile) {
  const StudyConfig& c = st.config;
  for (size_t gap : {size_t(32), size_t(8), size_t(4), size_t(2), size_t(1)}) {
    StudyConfig t = c;
    t.engine = agui_sync::Options{};
    t.engine.maxGapEvents = gap;
    if (gap < 32) t.engine.reorderWindow = 16;
    std::string label = "maxGapEvents " + std::to_string(gap) + (gap == 32 ? " (engine default)" : "") +
                        (gap == c.engine.maxGapEvents ? " (used above)" : "");
    st.gapTuning.emplace_back(label, runStrategy(Strategy::DeltaReplay, st.trace, mobile.schedule, st.human, t));
  }
  StudyConfig t = c;
  t.sendHeld = false;
  st.gapTuning.emplace_back("maxGapEvents " + std::to_string(c.engine.maxGapEvents) +
                                ", catch-up request without the held seqs (the replay sends them again)",
                            runStrategy(Strategy::DeltaReplay, st.trace, mobile.schedule, st.human, t));
}

// Strategy 4 on mobile-train with and without the guard's disconnect signal.
void runGuardTuning(Study& st, const ProfileRun& mobile) {
  const StudyConfig& c = st.config;
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
    if (v.staleAfterMs == c.guard.staleAfterMs && v.disconnectSignal == c.disconnectSignal) label += " (used above)";
    st.guardTuning.emplace_back(label, runStrategy(Strategy::DeltaReplay, st.trace, mobile.schedule, st.human, t));
  }
}

}  // namespace

Study runStudy(const StudyConfig& c, const std::vector<LinkProfile>& profiles, bool withTuning) {
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
  if (!withTuning) return st;
  const ProfileRun* mobile = nullptr;
  for (const auto& r : st.runs)
    if (r.profile.name == "mobile-train") mobile = &r;
  if (mobile) {
    runGapTuning(st, *mobile);
    runGuardTuning(st, *mobile);
  }
  return st;
}

// ---------------------------------------------------------------- robustness sweep

std::vector<SweepVariant> sweepVariants() {
  return {{strategyName(Strategy::Reference), Strategy::Reference},
          {strategyName(Strategy::DeltaReplay), Strategy::DeltaReplay},
          {strategyName(Strategy::Adaptive), Strategy::Adaptive},
          {"4, guard on staleness only (staleAfterMs 2000, no disconnect signal)", Strategy::DeltaReplay, false, false,
           2000, true},
          {"4, catch-up request without the held seqs", Strategy::DeltaReplay, false, true, std::nullopt, false}};
}

Sweep runSweep(const StudyConfig& base, const std::vector<LinkProfile>& profiles, uint32_t firstSeed, uint32_t seeds) {
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

}  // namespace tax_study
