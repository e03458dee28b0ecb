// Seeded property test of activity documents under network faults (issue 25,
// docs/wire.md section 11), in the shape of test_property.cpp.
//
// For each schedule an agent keeps 1-4 activities (each its own line of seqs,
// created at random points, patched through random valid deltas or sent whole
// again, stamped by the real ActivityEmitter with a digest every 4th seq) and
// a state beside them. The wire drops, duplicates
// and swaps events and truncates mid-event with a reconnect; bytes arrive in
// random chunks. Properties:
//  (1) an activity whose status is `synced` holds exactly the agent's content
//      at its lastSeq (never a half-applied or stale one shown as verified);
//  (2) every activity resync, answered by that activity's snapshot, converges;
//  (3) a stream that ends with an activity's gap pending asks for its resync.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include <agui_sync/sync_engine.h>
#include "activity_events.h"
#include "emit/activity_emitter.h"
#include "wire/wire_meta.h"
#include "random_state.h"

using namespace agui_sync;
using agui_test::RandomState;
using nlohmann::json;

namespace {

struct WireEvent {
  std::string frame;
  std::string id;  // the activity ("" = a state event)
  uint64_t seq = 0;
  bool truncate = false;
};

struct Totals {
  uint64_t schedules = 0, applied = 0, resyncs = 0, duplicates = 0, verifiedChecks = 0, wrongVerified = 0;
  uint64_t reordered = 0, dropped = 0;
};

// Activity content stays an object (AG-UI's `content`): deltas write inside /form.
json formDelta(RandomState& r, json& content) {
  json ops = r.delta(content["form"], r.uniform(1, 3));
  for (json& op : ops) {
    op["path"] = "/form" + op["path"].get<std::string>();
    if (op.contains("from")) op["from"] = "/form" + op["from"].get<std::string>();
  }
  return ops;
}

struct Agent {
  std::map<std::string, std::map<uint64_t, json>> history;  // id -> seq -> content
  std::map<std::string, uint64_t> now;                      // id -> current seq
};

// The agent's activities, stamped by the real sender (emit/activity_emitter.h).
std::vector<WireEvent> script(RandomState& r, Agent& agent) {
  EmitterOptions eo;
  eo.epoch = "e";
  eo.digestEvery = 4;
  // Small contents make a snapshot the cheaper event (which heals any gap by
  // itself); most schedules keep deltas so that gaps must be caught.
  eo.snapshotRatio = r.chance(0.8) ? 100 : 0.8;
  ActivityEmitter emitter(eo);
  std::vector<WireEvent> events;
  std::map<std::string, json> content;
  const int activities = r.uniform(1, 4), steps = r.uniform(8, 40);
  json state = json::object({{"n", 0}});
  events.push_back({agui_test::sseFrame(agui_test::snapshotEvent(state, 0)), "", 0, false});
  uint64_t stateSeq = 0;
  auto send = [&](const std::string& id, const std::vector<json>& out) {
    for (const json& e : out) {
      const uint64_t seq = *wireSeq(e);
      agent.history[id][seq] = *emitter.content(id);
      agent.now[id] = seq;
      events.push_back({agui_test::sseFrame(e), id, seq, false});
    }
  };
  for (int step = 0; step < steps; ++step) {
    const std::string id = "act-" + std::to_string(r.uniform(1, activities));
    if (r.chance(0.15)) {  // a state event between activity events
      json ops = json::array({{{"op", "replace"}, {"path", "/n"}, {"value", ++stateSeq}}});
      events.push_back({agui_test::sseFrame(agui_test::deltaEvent(ops, stateSeq - 1, stateSeq)), "", stateSeq, false});
      continue;
    }
    if (!content.count(id) || r.chance(0.05)) {  // created, or sent whole again (a delta or a snapshot goes out)
      content[id] = json::object({{"form", r.value(3)}, {"step", step}});
      send(id, emitter.snapshot(id, "form", content[id]));
      continue;
    }
    json ops = formDelta(r, content[id]);
    PatchOutcome patched = emitter.patch(id, "form", ops);
    REQUIRE(patched.ok());
    send(id, patched.events);
  }
  return events;
}

std::vector<WireEvent> faulty(RandomState& r, std::vector<WireEvent> events) {
  const double pDrop = r.uniform(0, 15) / 100.0, pDup = r.uniform(0, 15) / 100.0, pSwap = r.uniform(0, 15) / 100.0,
               pTrunc = r.uniform(0, 8) / 100.0;
  std::vector<WireEvent> wire;
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0 && r.chance(pDrop)) continue;
    if (i + 1 < events.size() && r.chance(pSwap)) std::swap(events[i], events[i + 1]);
    WireEvent e = events[i];
    e.truncate = i > 0 && r.chance(pTrunc);
    wire.push_back(e);
    if (r.chance(pDup)) wire.push_back(WireEvent{e.frame, e.id, e.seq, false});
  }
  return wire;
}

void runSchedule(uint32_t seed, Totals& totals) {
  RandomState r(seed);
  Agent agent;
  const std::vector<WireEvent> wire = faulty(r, script(r, agent));
  Options o;
  o.activities = true;
  o.reorderWindow = static_cast<size_t>(r.uniform(1, 8));
  o.maxGapEvents = static_cast<size_t>(r.uniform(1, 6));
  SyncEngine engine(o);
  std::map<std::string, uint64_t> sent;  // id -> the agent's seq once the events so far existed
  std::vector<Outcome> out;

  auto checkVerified = [&] {
    for (const ActivityView& a : engine.activities()) {
      if (a.status != SyncStatus::Synced) continue;
      INFO("seed " << seed << " activity " << *a.messageId << " lastSeq " << (a.lastSeq ? *a.lastSeq : 0));
      REQUIRE(a.lastSeq);
      ++totals.verifiedChecks;
      if (*a.content != agent.history.at(*a.messageId).at(*a.lastSeq)) ++totals.wrongVerified;
      REQUIRE(*a.content == agent.history.at(*a.messageId).at(*a.lastSeq));
    }
  };
  // The app's reaction to an activity resync: that activity's snapshot of now.
  auto answer = [&](const std::set<std::string>& ids) {
    for (const std::string& id : ids) {
      if (!sent.count(id)) continue;  // the agent has not created it yet as far as this wire goes
      ++totals.resyncs;
      const uint64_t seq = sent[id];  // the newest of its events the wire carried so far
      out.clear();
      engine.feed(agui_test::sseFrame(agui_test::activitySnapshot(id, agent.history.at(id).at(seq), seq, true)), out);
      const ActivityView* a = nullptr;
      auto all = engine.activities();
      for (const ActivityView& v : all)
        if (*v.messageId == id) a = &v;
      INFO("seed " << seed << " activity " << id);
      REQUIRE(a);
      REQUIRE(a->status == SyncStatus::Synced);
      REQUIRE(*a->content == agent.history.at(id).at(seq));
    }
  };
  auto scan = [&](std::set<std::string>& resync) {
    for (const Outcome& x : out) {
      if (x.kind == OutcomeKind::Applied && !x.messageId.empty()) ++totals.applied;
      if (x.kind == OutcomeKind::Resync && !x.messageId.empty()) resync.insert(x.messageId);
      if (x.kind == OutcomeKind::Ignored && x.reason == Code::Duplicate) ++totals.duplicates;
      if (x.kind == OutcomeKind::Ignored && x.reason == Code::Reordered) ++totals.reordered;
    }
  };
  auto resyncing = [&](std::set<std::string>& ids) {
    for (const ActivityView& a : engine.activities())
      if (a.status == SyncStatus::Resyncing) ids.insert(*a.messageId);
  };

  for (const WireEvent& e : wire) {
    if (!e.id.empty()) sent[e.id] = std::max(sent.count(e.id) ? sent[e.id] : 0, e.seq);
    const std::string bytes =
        e.truncate ? e.frame.substr(0, static_cast<size_t>(r.uniform(1, static_cast<int>(e.frame.size()) - 2))) : e.frame;
    std::set<std::string> resync;
    for (size_t pos = 0; pos < bytes.size();) {
      const size_t n = std::min(bytes.size() - pos, static_cast<size_t>(r.uniform(1, 64)));
      out.clear();
      engine.feed(reinterpret_cast<const uint8_t*>(bytes.data() + pos), n, out);
      pos += n;
      scan(resync);
      checkVerified();
    }
    if (e.truncate) {
      out.clear();
      engine.end(out);
      scan(resync);
      engine.reset();
    }
    resyncing(resync);
    answer(resync);
    checkVerified();
  }
  out.clear();
  engine.end(out);
  std::set<std::string> resync;
  scan(resync);
  for (const ActivityView& a : engine.activities()) {
    INFO("seed " << seed << " activity " << *a.messageId);
    if (a.held > 0) REQUIRE(resync.count(*a.messageId));
  }
  resyncing(resync);
  answer(resync);
  checkVerified();
  ++totals.schedules;
}

}  // namespace

TEST_CASE("activity property: a verified activity is the agent's content; resyncs converge (10,000 schedules)",
          "[property][activity]") {
  Totals totals;
  for (uint32_t seed = 1; seed <= 10000; ++seed) runSchedule(seed, totals);
  CHECK(totals.schedules == 10000);
  CHECK(totals.wrongVerified == 0);
  // Not vacuous: the faults happened and were handled.
  CHECK(totals.applied > 50000);
  CHECK(totals.resyncs > 1000);
  CHECK(totals.duplicates > 1000);
  CHECK(totals.reordered > 1000);
  CHECK(totals.verifiedChecks > 100000);
  WARN("activity schedules " << totals.schedules << ", verified checks " << totals.verifiedChecks << ", applied "
                             << totals.applied << ", held " << totals.reordered << ", duplicates " << totals.duplicates
                             << ", resyncs answered " << totals.resyncs << ", wrong-verified " << totals.wrongVerified);
}
