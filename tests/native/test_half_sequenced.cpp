// Half-sequenced streams (docs/wire.md section 6): what real backends send
// when they number only part of their state events. The seed article's shape
// is the main one: an unstamped STATE_SNAPSHOT, then deltas with top-level
// seq/base_seq starting at base_seq 0.
#include <catch2/catch.hpp>

#include <random>

#include <agui_sync/canonical_json.h>
#include <agui_sync/sync_engine.h>

#include "json/json_patch.h"
#include "random_state.h"

using namespace agui_sync;
using agui_test::sseFrame;
using nlohmann::json;

namespace {

// The seed article's wire shape: top-level seq / base_seq, no metadata.
json topLevelDelta(const json& ops, uint64_t base, uint64_t seq) {
  return {{"type", "STATE_DELTA"}, {"delta", ops}, {"seq", seq}, {"base_seq", base}};
}

json unstampedSnapshot(const json& state) { return {{"type", "STATE_SNAPSHOT"}, {"snapshot", state}}; }

json runStarted(const std::string& runId) {
  return {{"type", "RUN_STARTED"}, {"threadId", "t"}, {"runId", runId}};
}

struct Feeder {
  SyncEngine engine;
  std::vector<Outcome> all;
  std::vector<Outcome> send(const json& event) {
    std::vector<Outcome> out;
    engine.feed(sseFrame(event), out);
    all.insert(all.end(), out.begin(), out.end());
    return out;
  }
  size_t count(OutcomeKind kind) const {
    size_t n = 0;
    for (const Outcome& o : all) n += o.kind == kind;
    return n;
  }
};

json replaceCount(int n) { return json::array({{{"op", "replace"}, {"path", "/count"}, {"value", n}}}); }

}  // namespace

TEST_CASE("half-sequenced: the seed article's stream applies every delta and never resyncs", "[receiver][half]") {
  Feeder f;
  agui_test::RandomState rs(7);
  json agent = rs.agentState(6);
  f.send(unstampedSnapshot(agent));
  for (uint64_t seq = 1; seq <= 2000; ++seq) {
    json ops = rs.delta(agent, rs.uniform(1, 4));  // also applies them to `agent`
    auto out = f.send(topLevelDelta(ops, seq - 1, seq));
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].kind == OutcomeKind::Applied);
  }
  CHECK(f.engine.state() == agent);
  CHECK(f.engine.lastSeq() == 2000u);
  // The engine cannot prove the snapshot was taken at seq 0: unverified, never synced.
  CHECK(f.engine.status() == SyncStatus::Unverified);
  CHECK(f.count(OutcomeKind::Resync) == 0);
  CHECK(f.count(OutcomeKind::Ignored) == 0);
  CHECK(f.engine.metrics().anchors == 1);
  std::vector<Outcome> end;
  f.engine.end(end);
  CHECK(end.empty());
}

TEST_CASE("half-sequenced: after anchoring, gaps, duplicates and reordering work as for any sequenced stream",
          "[receiver][half]") {
  Feeder f;
  f.send(unstampedSnapshot({{"count", 0}}));
  f.send(topLevelDelta(replaceCount(1), 0, 1));
  auto dup = f.send(topLevelDelta(replaceCount(1), 0, 1));
  REQUIRE(dup.size() == 1);
  CHECK(dup[0].kind == OutcomeKind::Ignored);
  CHECK(dup[0].reason == Code::Duplicate);
  auto held = f.send(topLevelDelta(replaceCount(3), 2, 3));
  CHECK(held[0].reason == Code::Reordered);
  auto healed = f.send(topLevelDelta(replaceCount(2), 1, 2));
  REQUIRE(healed.size() == 2);
  CHECK(f.engine.state() == json{{"count", 3}});
  CHECK(f.engine.lastSeq() == 3u);
  // A lost delta that never arrives is a gap at the end of the stream.
  f.send(topLevelDelta(replaceCount(5), 4, 5));
  std::vector<Outcome> end;
  f.engine.end(end);
  REQUIRE(end.size() == 1);
  CHECK(end[0].reason == Code::Gap);
  CHECK(f.engine.status() == SyncStatus::Resyncing);
}

TEST_CASE("half-sequenced: a matching digest or a sequenced snapshot proves the anchored position",
          "[receiver][half]") {
  SECTION("a digest") {
    Feeder f;
    f.send(unstampedSnapshot({{"count", 0}}));
    f.send(topLevelDelta(replaceCount(1), 0, 1));
    json stamped = topLevelDelta(replaceCount(2), 1, 2);
    stamped["metadata"] = {{"digest", stateDigest(json{{"count", 2}})}};
    f.send(stamped);
    CHECK(f.engine.status() == SyncStatus::Synced);
  }
  SECTION("a sequenced snapshot, even below the adopted lastSeq") {
    Feeder f;
    f.send(unstampedSnapshot({{"count", 0}}));
    f.send(topLevelDelta(replaceCount(1), 40, 41));
    auto out = f.send(agui_test::snapshotEvent({{"count", 9}}, 7));
    REQUIRE(out.size() == 1);
    CHECK(out[0].kind == OutcomeKind::Applied);
    CHECK(f.engine.status() == SyncStatus::Synced);
    CHECK(f.engine.lastSeq() == 7u);
    // Proven now: an older sequenced snapshot is stale again.
    auto stale = f.send(agui_test::snapshotEvent({{"count", 3}}, 5));
    CHECK(stale[0].reason == Code::StaleSnapshot);
  }
  SECTION("a digest that does not match is a resync, and the delta is rolled back") {
    Feeder f;
    f.send(unstampedSnapshot({{"count", 0}}));
    json stamped = topLevelDelta(replaceCount(2), 0, 1);
    stamped["metadata"] = {{"digest", stateDigest(json{{"count", 99}})}};
    auto out = f.send(stamped);
    CHECK(out.back().reason == Code::DigestMismatch);
    CHECK(f.engine.state() == json{{"count", 0}});
  }
}

TEST_CASE("half-sequenced: a reordered first delta is caught when the earlier one arrives", "[receiver][half]") {
  Feeder f;
  f.send(unstampedSnapshot({{"count", 0}, {"log", json::array()}}));
  // seq 2 overtook seq 1: its base_seq 1 is adopted, and it happens to apply.
  auto first = f.send(topLevelDelta(json::array({{{"op", "add"}, {"path", "/log/-"}, {"value", 2}}}), 1, 2));
  REQUIRE(first[0].kind == OutcomeKind::Applied);
  auto late = f.send(topLevelDelta(json::array({{{"op", "add"}, {"path", "/log/-"}, {"value", 1}}}), 0, 1));
  REQUIRE(late.size() == 1);
  CHECK(late[0].kind == OutcomeKind::Resync);
  CHECK(late[0].reason == Code::AnchorMismatch);
  CHECK(f.engine.status() == SyncStatus::Resyncing);
  // The snapshot of the next run heals it.
  f.send(runStarted("r2"));
  f.send(unstampedSnapshot({{"count", 0}, {"log", json::array({1, 2})}}));
  CHECK(f.engine.status() == SyncStatus::Unverified);
  CHECK(f.engine.state()["log"] == json::array({1, 2}));
}

TEST_CASE("half-sequenced: each run numbers afresh; a new run re-anchors instead of looping", "[receiver][half]") {
  Feeder f;
  f.send(unstampedSnapshot({{"count", 0}}));
  f.send(runStarted("r1"));
  for (int i = 1; i <= 5; ++i) f.send(topLevelDelta(replaceCount(i), i - 1, i));
  // A backend that starts the next run from the state the client sent it
  // (RunAgentInput.state) numbers from 0 again, with no snapshot.
  f.send(runStarted("r2"));
  for (int i = 1; i <= 3; ++i) f.send(topLevelDelta(replaceCount(10 + i), i - 1, i));
  CHECK(f.engine.state() == json{{"count", 13}});
  CHECK(f.engine.lastSeq() == 3u);
  CHECK(f.count(OutcomeKind::Resync) == 0);
  CHECK(f.engine.metrics().anchors == 2);
}

TEST_CASE("half-sequenced: a gap's resync ends with the run; a proven position survives a new run",
          "[receiver][half]") {
  Feeder f;
  f.send(unstampedSnapshot({{"count", 0}}));
  f.send(topLevelDelta(replaceCount(1), 0, 1));
  f.send(topLevelDelta(replaceCount(3), 2, 3));  // seq 2 lost
  std::vector<Outcome> end;
  f.engine.end(end);
  REQUIRE(f.engine.status() == SyncStatus::Resyncing);
  f.send(runStarted("r2"));  // the reconnect starts a new run: the old numbering is gone
  CHECK(f.engine.status() == SyncStatus::Unverified);
  CHECK(f.engine.pendingCount() == 0);
  f.send(unstampedSnapshot({{"count", 7}}));
  f.send(topLevelDelta(replaceCount(8), 0, 1));
  CHECK(f.engine.state() == json{{"count", 8}});

  Feeder proven;  // our own emitter's stream: RUN_STARTED never touches the position
  proven.send(agui_test::snapshotEvent({{"count", 0}}, 4));
  proven.send(runStarted("r2"));
  auto out = proven.send(agui_test::deltaEvent(replaceCount(1), 4, 5));
  CHECK(out[0].kind == OutcomeKind::Applied);
  CHECK(proven.engine.status() == SyncStatus::Synced);
}

TEST_CASE("half-sequenced: other shapes real backends send", "[receiver][half]") {
  SECTION("deltas with seq but no snapshot at all start from the app's initial state") {
    Feeder f;
    f.engine.setInitialState({{"count", 0}});
    f.send(topLevelDelta(replaceCount(1), 0, 1));
    CHECK(f.engine.state() == json{{"count", 1}});
    CHECK(f.engine.status() == SyncStatus::Unverified);
  }
  SECTION("a delta without seq after sequenced ones applies, keeps the position, and makes the state unverified") {
    Feeder f;
    f.send(agui_test::snapshotEvent({{"count", 0}, {"note", ""}}, 1));
    f.send(agui_test::deltaEvent(replaceCount(1), 1, 2));
    f.send(agui_test::deltaEvent(json::array({{{"op", "replace"}, {"path", "/note"}, {"value", "x"}}}), {}, {}));
    CHECK(f.engine.status() == SyncStatus::Unverified);
    CHECK(f.engine.lastSeq() == 2u);
    auto out = f.send(agui_test::deltaEvent(replaceCount(3), 2, 3));
    CHECK(out[0].kind == OutcomeKind::Applied);
    CHECK(f.engine.state() == json{{"count", 3}, {"note", "x"}});
  }
  SECTION("seq on snapshots only: each snapshot is a position, the deltas between are unverified") {
    Feeder f;
    f.send(agui_test::snapshotEvent({{"count", 0}}, 1));
    f.send(agui_test::deltaEvent(replaceCount(1), {}, {}));
    CHECK(f.engine.status() == SyncStatus::Unverified);
    f.send(agui_test::snapshotEvent({{"count", 5}}, 2));
    CHECK(f.engine.status() == SyncStatus::Synced);
    CHECK(f.count(OutcomeKind::Resync) == 0);
  }
  SECTION("while resyncing nothing anchors: deltas wait for the snapshot") {
    Feeder f;
    f.engine.feed("data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":\n\n", f.all);  // malformed: resync
    REQUIRE(f.engine.status() == SyncStatus::Resyncing);
    auto out = f.send(topLevelDelta(replaceCount(1), 0, 1));
    CHECK(out[0].reason == Code::AwaitingSnapshot);
    CHECK(f.engine.metrics().anchors == 0);
  }
}

// A seed-shaped backend behind a faulty link: every connection is a new run
// (RUN_STARTED, an unstamped snapshot of the agent's state, deltas from
// base_seq 0); the link drops, duplicates and swaps events; the client
// reconnects after a resync or at the end of the stream. Invariants: no run
// leaves more than one resync (never a loop), a lossless run always ends with
// the client equal to the agent, and the engine never claims `synced`.
TEST_CASE("half-sequenced: seeded schedules of a seed-shaped backend over a faulty link", "[receiver][half][property]") {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    agui_test::RandomState rs(seed);
    json agent = rs.agentState(4);
    SyncEngine engine;
    for (int run = 0; run < 6; ++run) {
      const bool faulty = run < 5 && chance(0.7);
      std::vector<json> events = {runStarted("r" + std::to_string(run)), unstampedSnapshot(agent)};
      for (uint64_t seq = 1; seq <= 30; ++seq) events.push_back(topLevelDelta(rs.delta(agent, 2), seq - 1, seq));
      size_t resyncs = 0;
      for (size_t i = 0; i < events.size(); ++i) {
        const bool stateEvent = i >= 2;
        if (faulty && stateEvent && chance(0.05)) continue;  // dropped
        if (faulty && stateEvent && i + 1 < events.size() && chance(0.05)) std::swap(events[i], events[i + 1]);
        std::vector<Outcome> out;
        engine.feed(sseFrame(events[i]), out);
        if (faulty && stateEvent && chance(0.05)) engine.feed(sseFrame(events[i]), out);  // duplicated
        const size_t before = resyncs;
        for (const Outcome& o : out) resyncs += o.kind == OutcomeKind::Resync;
        INFO("seed " << seed << " run " << run);
        REQUIRE(engine.status() != SyncStatus::Synced);
        if (resyncs > before) break;  // the client reconnects: a new run
      }
      std::vector<Outcome> end;
      engine.end(end);
      for (const Outcome& o : end) resyncs += o.kind == OutcomeKind::Resync;
      engine.reset();
      INFO("seed " << seed << " run " << run);
      REQUIRE(resyncs <= 1);
      if (!faulty) REQUIRE(engine.state() == agent);
    }
  }
}
