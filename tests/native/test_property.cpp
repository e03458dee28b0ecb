// Seeded property test of the whole engine under network faults.
//
// For each schedule a sender evolves a random state through random valid deltas
// (with `test` preconditions), the wire drops / duplicates / swaps events and
// truncates mid-event with a reconnect, and the bytes arrive in random chunks.
// Properties:
//  (1) whenever the status is `synced`, the state equals the sender's state at lastSeq;
//  (2) every resync, answered by a snapshot, converges to the sender's state;
//  (3) a stream that ends with a gap pending asks for a resync (never silent);
//  (4) the approval guard never approves a digest that differs from the sender's
//      value at the approval's seq.
#include <catch2/catch.hpp>

#include <map>

#include <agui_sync/approval_guard.h>
#include "random_state.h"
#include <agui_sync/sync_engine.h>

using namespace agui_sync;
using agui_test::RandomState;
using nlohmann::json;

namespace {

struct WireEvent {
  std::string frame;
  uint64_t seq;       // the sender's seq once this event exists
  bool truncate;      // cut mid-event, then the connection breaks and reopens
};

struct Totals {
  uint64_t schedules = 0, applied = 0, resyncs = 0, healed = 0, duplicates = 0, syncedChecks = 0;
  uint64_t approvals = 0, refusals = 0, changedRefusals = 0;
};

void runSchedule(uint32_t seed, Totals& totals) {
  RandomState r(seed);
  std::map<uint64_t, json> history;
  json sender = r.chance(0.5) ? r.agentState(r.uniform(0, 3)) : json::object({{"x", r.value(3)}});
  history[0] = sender;
  const int updates = r.uniform(5, 25);
  std::vector<WireEvent> events;
  events.push_back({agui_test::sseFrame(agui_test::snapshotEvent(sender, 0)), 0, false});
  for (uint64_t s = 1; s <= static_cast<uint64_t>(updates); ++s) {
    json ops = r.delta(sender, r.uniform(1, 4));
    history[s] = sender;
    events.push_back({agui_test::sseFrame(agui_test::deltaEvent(ops, s - 1, s)), s, false});
  }
  // Faults.
  const double pDrop = r.uniform(0, 15) / 100.0, pDup = r.uniform(0, 15) / 100.0, pSwap = r.uniform(0, 15) / 100.0,
               pTrunc = r.uniform(0, 8) / 100.0;
  std::vector<WireEvent> wire;
  for (size_t i = 0; i < events.size(); ++i) {
    WireEvent e = events[i];
    if (i > 0 && r.chance(pDrop)) continue;
    if (i + 1 < events.size() && r.chance(pSwap)) {
      std::swap(events[i], events[i + 1]);
      e = events[i];
    }
    e.truncate = i > 0 && r.chance(pTrunc);
    wire.push_back(e);
    if (r.chance(pDup)) wire.push_back(WireEvent{e.frame, e.seq, false});
  }

  Options o;
  o.reorderWindow = static_cast<size_t>(r.uniform(1, 8));
  o.maxGapEvents = static_cast<size_t>(r.uniform(1, 6));
  SyncEngine engine(o);
  ApprovalGuard guard(engine, GuardOptions{});
  uint64_t nowMs = 0;
  std::optional<ViewToken> token;
  const std::string guardedPath = sender.contains("proposal") ? "/proposal" : "";
  uint64_t senderNow = 0;
  std::vector<Outcome> out;

  auto checkSynced = [&] {
    if (engine.status() == SyncStatus::Synced) {
      REQUIRE(engine.lastSeq());
      INFO("seed " << seed << " lastSeq " << *engine.lastSeq());
      REQUIRE(engine.state() == history.at(*engine.lastSeq()));
      ++totals.syncedChecks;
    }
  };
  // The app's reaction to a resync: reconnect and receive a snapshot of now.
  auto answerResync = [&] {
    ++totals.resyncs;
    out.clear();
    engine.end(out);
    engine.reset();
    out.clear();
    engine.feed(agui_test::sseFrame(agui_test::snapshotEvent(history.at(senderNow), senderNow)), out);
    INFO("seed " << seed);
    REQUIRE(engine.status() == SyncStatus::Synced);
    REQUIRE(engine.lastSeq() == senderNow);
    REQUIRE(engine.state() == history.at(senderNow));
  };
  auto scan = [&](const std::vector<Outcome>& outs) {
    bool resync = false;
    for (const auto& x : outs) {
      if (x.kind == OutcomeKind::Applied) ++totals.applied;
      if (x.kind == OutcomeKind::Resync) resync = true;
      if (x.kind == OutcomeKind::Ignored && x.reason == agui_sync::Code::Duplicate) ++totals.duplicates;
      REQUIRE(x.kind != OutcomeKind::Error);  // faults never corrupt a complete frame
    }
    return resync;
  };

  for (size_t i = 0; i < wire.size(); ++i) {
    const WireEvent& e = wire[i];
    senderNow = std::max(senderNow, e.seq);
    const std::string bytes = e.truncate ? e.frame.substr(0, static_cast<size_t>(r.uniform(1, static_cast<int>(e.frame.size()) - 2))) : e.frame;
    bool resync = false;
    for (size_t pos = 0; pos < bytes.size();) {
      size_t n = std::min(bytes.size() - pos, static_cast<size_t>(r.uniform(1, 64)));
      out.clear();
      engine.feed(reinterpret_cast<const uint8_t*>(bytes.data() + pos), n, out);
      guard.noteActivity(nowMs += 10);
      pos += n;
      resync = scan(out) || resync;
      checkSynced();
    }
    if (e.truncate) {
      out.clear();
      engine.end(out);  // the connection broke mid-event
      resync = scan(out) || resync;
      engine.reset();
    }
    if (resync || engine.status() == SyncStatus::Resyncing) answerResync();
    totals.healed = engine.metrics().reordersHealed;
    // A person looks at the proposal now and clicks Approve a little later.
    if (r.chance(0.4)) {
      ViewToken t;
      if (guard.view(guardedPath, nullptr, &t).ok) token = t;
    }
    if (token && r.chance(0.4)) {
      Approval a;
      GuardResult g = guard.approve(*token, nowMs, &a);
      if (g.ok) {
        ++totals.approvals;
        INFO("seed " << seed << " approval at seq " << (a.seq ? *a.seq : 0));
        REQUIRE(a.seq);
        REQUIRE(a.digest == digestAt(history.at(*a.seq), guardedPath));
        REQUIRE(verifyApproval(a, history.at(*a.seq)));
      } else {
        ++totals.refusals;
        totals.changedRefusals += g.reason == agui_sync::Code::Changed;
      }
      token.reset();
    }
  }
  out.clear();
  engine.end(out);
  bool endResync = scan(out);
  if (engine.pendingCount() > 0 && !endResync) FAIL("a gap was pending at end of stream without a resync");
  if (endResync) answerResync();
  checkSynced();
  ++totals.schedules;
}

}  // namespace

TEST_CASE("property: synced implies equal to the sender; resyncs converge (10,000 schedules)", "[property]") {
  Totals totals;
  uint64_t healed = 0;
  for (uint32_t seed = 1; seed <= 10000; ++seed) {
    runSchedule(seed, totals);
    healed += totals.healed;
  }
  CHECK(totals.schedules == 10000);
  // Guard against a vacuous run: the faults really happened and were handled.
  CHECK(totals.applied > 50000);
  CHECK(totals.resyncs > 1000);
  CHECK(healed > 100);
  CHECK(totals.duplicates > 1000);
  CHECK(totals.syncedChecks > 100000);
  CHECK(totals.approvals > 5000);
  CHECK(totals.changedRefusals > 100);
}

TEST_CASE("guard liveness: on a healthy stream every fresh view can be approved", "[property][guard]") {
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    RandomState r(seed);
    json sender = r.agentState(r.uniform(0, 3));
    SyncEngine engine;
    ApprovalGuard guard(engine, GuardOptions{});
    std::vector<Outcome> out;
    engine.feed(agui_test::sseFrame(agui_test::snapshotEvent(sender, 0)), out);
    for (uint64_t s = 1; s <= 20; ++s) {
      json ops = r.delta(sender, r.uniform(1, 3));
      engine.feed(agui_test::sseFrame(agui_test::deltaEvent(ops, s - 1, s)), out);
      guard.noteActivity(s * 1000);
      ViewToken t;
      if (!guard.view("", nullptr, &t).ok) FAIL("root always resolves");
      Approval a;
      GuardResult g = guard.approve(t, s * 1000 + 500, &a);
      INFO("seed " << seed << " reason " << g.reason);
      REQUIRE(g.ok);
      REQUIRE(verifyApproval(a, sender));
    }
    // ... and the clock makes it stale without activity.
    ViewToken t;
    guard.view("", nullptr, &t);
    CHECK(guard.approve(t, 20 * 1000 + 16000, nullptr).reason == agui_sync::Code::Stale);
  }
}
