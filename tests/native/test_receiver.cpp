// The receiver state machine: one test per row of the sequencing table, plus
// limits, metrics and the AG-UI client conformance cases.
#include <catch2/catch.hpp>

#include "random_state.h"
#include <agui_sync/sync_engine.h>
#include "test_support.h"

using namespace agui_sync;
using agui_test::deltaEvent;
using agui_test::snapshotEvent;
using agui_test::sseFrame;
using nlohmann::json;

namespace {

struct Harness {
  explicit Harness(Options o = Options{}) : engine(o) {}
  std::vector<Outcome> send(const json& event) { return sendRaw(sseFrame(event)); }
  std::vector<Outcome> sendRaw(const std::string& bytes) {
    std::vector<Outcome> out;
    engine.feed(bytes, out);
    return out;
  }
  std::vector<Outcome> end() {
    std::vector<Outcome> out;
    engine.end(out);
    return out;
  }
  SyncEngine engine;
};

json op(const char* path, json value) { return json::array({json{{"op", "replace"}, {"path", path}, {"value", value}}}); }

// By value: callers pass temporaries, so a reference would dangle.
Outcome only(const std::vector<Outcome>& v) {
  REQUIRE(v.size() == 1);
  return v[0];
}

}  // namespace

TEST_CASE("sequenced snapshot then in-order deltas", "[receiver]") {
  Harness h;
  auto o = only(h.send(snapshotEvent({{"n", 0}}, 1)));
  CHECK(o.kind == OutcomeKind::Applied);
  CHECK(o.type == "STATE_SNAPSHOT");
  CHECK(h.engine.status() == SyncStatus::Synced);
  CHECK(h.engine.lastSeq() == 1u);
  auto d = only(h.send(deltaEvent(op("/n", 1), 1, 2)));
  CHECK(d.kind == OutcomeKind::Applied);
  CHECK(d.changedPaths == std::vector<std::string>{"/n"});
  CHECK(h.engine.state() == json{{"n", 1}});
  CHECK(h.engine.lastSeq() == 2u);
}

TEST_CASE("unsequenced snapshot and delta leave the state unverified", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, std::nullopt));
  CHECK(h.engine.status() == SyncStatus::Unverified);
  CHECK_FALSE(h.engine.lastSeq());
  CHECK(only(h.send(deltaEvent(op("/n", 1), std::nullopt, std::nullopt))).kind == OutcomeKind::Applied);
  CHECK(h.engine.status() == SyncStatus::Unverified);
  // A failing unsequenced delta is a resync, never a silent drop.
  auto r = only(h.send(deltaEvent(op("/missing", 1), std::nullopt, std::nullopt)));
  CHECK(r.kind == OutcomeKind::Resync);
  CHECK(r.reason == agui_sync::Code::PatchFailed);
  CHECK(h.engine.state() == json{{"n", 1}});
}

TEST_CASE("a sequenced delta after an unsequenced one keeps the state unverified", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, 5));
  h.send(deltaEvent(op("/n", 1), std::nullopt, std::nullopt));
  CHECK(h.engine.status() == SyncStatus::Unverified);
  h.send(deltaEvent(op("/n", 2), 5, 6));
  CHECK(h.engine.status() == SyncStatus::Unverified);
  h.send(snapshotEvent({{"n", 2}}, 6));
  CHECK(h.engine.status() == SyncStatus::Synced);
}

TEST_CASE("stale snapshots are ignored, epochs restart the count", "[receiver]") {
  Harness h;
  json s1 = snapshotEvent({{"n", 1}}, 10);
  s1["metadata"]["epoch"] = "a";
  h.send(s1);
  auto st = only(h.send(snapshotEvent({{"n", 0}}, 3)));
  CHECK(st.kind == OutcomeKind::Ignored);
  CHECK(st.reason == agui_sync::Code::StaleSnapshot);
  CHECK(h.engine.state() == json{{"n", 1}});
  json s2 = snapshotEvent({{"n", 7}}, 1);
  s2["metadata"]["epoch"] = "b";
  CHECK(only(h.send(s2)).kind == OutcomeKind::Applied);
  CHECK(h.engine.lastSeq() == 1u);
  CHECK(h.engine.state() == json{{"n", 7}});
  // A late delta or snapshot from the old epoch is stale, never applied on top of the new one.
  json d = deltaEvent(op("/n", 9), 1, 2);
  d["metadata"]["epoch"] = "a";
  CHECK(only(h.send(d)).reason == agui_sync::Code::StaleEpoch);
  CHECK(only(h.send(s1)).reason == agui_sync::Code::StaleSnapshot);
  // A delta from an epoch we have not seen means the sender restarted again: resync.
  d["metadata"]["epoch"] = "c";
  CHECK(only(h.send(d)).reason == agui_sync::Code::EpochChanged);
  CHECK(h.engine.state() == json{{"n", 7}});
}

TEST_CASE("duplicates are ignored idempotently", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, 1));
  json d = deltaEvent(op("/n", 1), 1, 2);
  h.send(d);
  auto dup = only(h.send(d));
  CHECK(dup.kind == OutcomeKind::Ignored);
  CHECK(dup.reason == agui_sync::Code::Duplicate);
  CHECK(h.engine.metrics().duplicates == 1);
  CHECK(h.engine.state() == json{{"n", 1}});
  // Same seq, different content: the histories disagree.
  auto c = only(h.send(deltaEvent(op("/n", 5), 1, 2)));
  CHECK(c.kind == OutcomeKind::Resync);
  CHECK(c.reason == agui_sync::Code::SeqConflict);
}

TEST_CASE("out-of-order deltas are held and healed in order", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"list", json::array()}}, 0));
  auto add = [](int v) { return json::array({json{{"op", "add"}, {"path", "/list/-"}, {"value", v}}}); };
  auto held = only(h.send(deltaEvent(add(3), 2, 3)));
  CHECK(held.kind == OutcomeKind::Ignored);
  CHECK(held.reason == agui_sync::Code::Reordered);
  CHECK(only(h.send(deltaEvent(add(2), 1, 2))).reason == agui_sync::Code::Reordered);
  auto healed = h.send(deltaEvent(add(1), 0, 1));
  REQUIRE(healed.size() == 3);
  for (auto o : healed) CHECK(o.kind == OutcomeKind::Applied);
  CHECK(healed[2].seq == 3u);
  CHECK(h.engine.state()["list"] == json::array({1, 2, 3}));
  CHECK(h.engine.metrics().reordersHealed == 2);
  CHECK(h.engine.pendingCount() == 0);
}

TEST_CASE("a gap becomes a resync: window overflow, age, end of stream", "[receiver]") {
  Options o;
  o.reorderWindow = 2;
  o.maxGapEvents = 3;
  SECTION("overflow") {
    Harness h(o);
    h.send(snapshotEvent({{"n", 0}}, 0));
    h.send(deltaEvent(op("/n", 2), 1, 2));
    h.send(deltaEvent(op("/n", 3), 2, 3));
    auto r = only(h.send(deltaEvent(op("/n", 4), 3, 4)));
    CHECK(r.kind == OutcomeKind::Resync);
    CHECK(r.reason == agui_sync::Code::Gap);
    CHECK(r.lastSeq == 0u);
    CHECK(h.engine.status() == SyncStatus::Resyncing);
    CHECK(h.engine.state() == json{{"n", 0}});
  }
  SECTION("age") {
    Harness h(o);
    h.send(snapshotEvent({{"n", 0}}, 0));
    json dup = deltaEvent(op("/n", 1), 0, 1);
    h.send(dup);
    h.send(deltaEvent(op("/n", 3), 2, 3));  // opens a gap at seq 2
    // state events that do not fill the gap: re-sent copies of delta 1
    std::vector<Outcome> last;
    for (int i = 0; i < 3; ++i) last = h.send(dup);
    CHECK(h.engine.status() == SyncStatus::Synced);
    last = h.send(dup);
    REQUIRE(last.size() == 2);
    CHECK(last[1].kind == OutcomeKind::Resync);
    CHECK(last[1].reason == agui_sync::Code::Gap);
  }
  SECTION("end of stream") {
    Harness h(o);
    h.send(snapshotEvent({{"n", 0}}, 0));
    h.send(deltaEvent(op("/n", 2), 1, 2));
    auto r = only(h.end());
    CHECK(r.reason == agui_sync::Code::Gap);
  }
}

TEST_CASE("stale base, failed patch and failed precondition resync without touching state", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}, {"s", "a"}}, 4));
  SECTION("stale-base") {
    CHECK(only(h.send(deltaEvent(op("/n", 1), 3, 5))).reason == agui_sync::Code::StaleBase);
  }
  SECTION("patch-failed") {
    json ops = json::parse(R"([{"op":"replace","path":"/n","value":1},{"op":"remove","path":"/zz"}])");
    CHECK(only(h.send(deltaEvent(ops, 4, 5))).reason == agui_sync::Code::PatchFailed);
  }
  SECTION("precondition-failed") {
    json ops = json::parse(R"([{"op":"test","path":"/s","value":"b"},{"op":"replace","path":"/s","value":"c"}])");
    CHECK(only(h.send(deltaEvent(ops, 4, 5))).reason == agui_sync::Code::PreconditionFailed);
  }
  CHECK(h.engine.state() == json{{"n", 0}, {"s", "a"}});
  CHECK(h.engine.status() == SyncStatus::Resyncing);
  CHECK(h.engine.lastSeq() == 4u);
  // While resyncing nothing applies until a snapshot; later deltas are held for after it.
  CHECK(only(h.send(deltaEvent(op("/n", 9), 5, 6))).reason == agui_sync::Code::AwaitingSnapshot);
  CHECK(h.engine.state()["n"] == 0);
  auto healed = h.send(snapshotEvent({{"n", 1}, {"s", "a"}}, 5));
  REQUIRE(healed.size() == 2);
  CHECK(h.engine.status() == SyncStatus::Synced);
  CHECK(h.engine.state()["n"] == 9);
  CHECK(h.engine.metrics().resyncSnapshots == 1);
  CHECK_FALSE(h.engine.resyncRequest());
}

TEST_CASE("malformed input: error outcome, state untouched, resync when a state event was lost", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, 1));
  SECTION("invalid JSON of a state event") {
    auto out = h.sendRaw("data: {\"type\":\"STATE_DELTA\",\"delta\":[\n\n");
    REQUIRE(out.size() == 2);
    CHECK(out[0].kind == OutcomeKind::Error);
    CHECK(out[0].reason == agui_sync::Code::InvalidJson);
    CHECK(out[1].kind == OutcomeKind::Resync);
  }
  SECTION("invalid JSON of another event: just an error") {
    auto e = only(h.sendRaw("data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\n\n"));
    CHECK(e.reason == agui_sync::Code::InvalidJson);
    CHECK(h.engine.status() == SyncStatus::Synced);
  }
  SECTION("bad seq values") {
    for (const char* meta : {R"({"seq":-1,"baseSeq":1})", R"({"seq":1.5,"baseSeq":1})", R"({"seq":"2","baseSeq":1})",
                             R"({"seq":9007199254740992,"baseSeq":1})", R"({"seq":2})", R"({"seq":1,"baseSeq":1})"}) {
      json e = {{"type", "STATE_DELTA"}, {"delta", op("/n", 5)}, {"metadata", json::parse(meta)}};
      auto out = h.send(e);
      INFO(meta);
      REQUIRE(!out.empty());
      CHECK(out[0].kind == OutcomeKind::Error);
      CHECK(out[0].reason == agui_sync::Code::InvalidSeq);
    }
  }
  SECTION("missing fields") {
    auto out = h.send(json{{"type", "STATE_DELTA"}, {"delta", "nope"}});
    CHECK(out[0].reason == agui_sync::Code::InvalidEvent);
    out = h.send(json{{"snapshot", 1}});
    CHECK(out[0].reason == agui_sync::Code::InvalidEvent);
  }
  CHECK(h.engine.state() == json{{"n", 0}});
}

TEST_CASE("other AG-UI events and unknown types pass through unchanged", "[receiver]") {
  Harness h;
  for (const char* e : {R"({"type":"RUN_STARTED","threadId":"t","runId":"r"})",
                        R"({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"})",
                        R"({"type":"SOMETHING_NEW","x":[1,2]})"}) {
    auto o = only(h.sendRaw(std::string("event: whatever\ndata: ") + e + "\n\n"));
    CHECK(o.kind == OutcomeKind::Event);
    CHECK(o.raw == e);
  }
}

TEST_CASE("top-level seq/base_seq are accepted", "[receiver]") {
  Harness h;
  h.send(json{{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"n", 0}}}, {"seq", 3}});
  CHECK(h.engine.lastSeq() == 3u);
  h.send(json{{"type", "STATE_DELTA"}, {"delta", op("/n", 1)}, {"seq", 4}, {"base_seq", 3}});
  CHECK(h.engine.lastSeq() == 4u);
  CHECK(h.engine.status() == SyncStatus::Synced);
}

TEST_CASE("a hostile seq cannot make the engine ignore the stream forever", "[receiver]") {
  Options o;
  o.maxGapEvents = 4;
  Harness h(o);
  h.send(snapshotEvent({{"n", 0}}, 1));
  h.send(deltaEvent(op("/n", 1), 1, 9007199254740991ull));  // a bogus jump to 2^53-1
  std::vector<Outcome> out;
  for (uint64_t s = 2; s < 10 && h.engine.status() != SyncStatus::Resyncing; ++s) out = h.send(deltaEvent(op("/n", s), s - 1, s));
  CHECK(h.engine.status() == SyncStatus::Resyncing);
  CHECK(out.back().reason == agui_sync::Code::SeqRegression);
  // The resync snapshot is accepted even though its seq is below lastSeq.
  CHECK(only(h.send(snapshotEvent({{"n", 10}}, 10))).kind == OutcomeKind::Applied);
  CHECK(h.engine.lastSeq() == 10u);
  CHECK(h.engine.status() == SyncStatus::Synced);
}

TEST_CASE("limits: event bytes, depth and state bytes", "[receiver][limits]") {
  Options o;
  o.maxEventBytes = 4096;
  o.maxDepth = 16;
  o.maxStateBytes = 2000;
  Harness h(o);
  h.send(snapshotEvent({{"n", 0}}, 1));
  SECTION("oversized event") {
    auto out = h.send(deltaEvent(op("/n", std::string(5000, 'x')), 1, 2));
    REQUIRE(out.size() == 2);
    CHECK(out[0].reason == agui_sync::Code::LimitExceeded);
    CHECK(out[1].reason == agui_sync::Code::LimitExceeded);
  }
  SECTION("depth bomb of a million '['") {
    std::string bomb = "data: {\"type\":\"STATE_DELTA\",\"delta\":" + std::string(1000000, '[') + "\n\n";
    Options big = o;
    big.maxEventBytes = 2 << 20;
    Harness hb(big);
    hb.send(snapshotEvent({{"n", 0}}, 1));
    auto out = hb.sendRaw(bomb);
    REQUIRE(!out.empty());
    CHECK(out[0].reason == agui_sync::Code::LimitExceeded);
    CHECK(hb.engine.state() == json{{"n", 0}});
  }
  SECTION("state growth") {
    auto out = h.send(deltaEvent(op("/n", std::string(3000, 'y')), 1, 2));
    REQUIRE(out.size() == 2);
    CHECK(out[0].kind == OutcomeKind::Error);
    CHECK(out[0].reason == agui_sync::Code::LimitExceeded);
  }
  CHECK(h.engine.state() == json{{"n", 0}});
}

TEST_CASE("metrics: counts, bytes and tax rate", "[receiver][metrics]") {
  Harness h;
  json big = {{"doc", std::string(1000, 'z')}, {"n", 0}};
  h.send(snapshotEvent(big, 1));
  for (uint64_t s = 2; s <= 5; ++s) h.send(deltaEvent(op("/n", s), s - 1, s));
  h.send(deltaEvent(op("/n", 99), 9, 10));  // held
  h.end();                                 // -> resync gap
  h.send(snapshotEvent(big, 10));
  const Metrics& m = h.engine.metrics();
  CHECK(m.snapshots == 2);
  CHECK(m.resyncSnapshots == 1);
  CHECK(m.deltasApplied == 4);
  CHECK(m.resyncs == 1);
  CHECK(m.resyncsByReason.at("gap") == 1);
  CHECK(m.taxRate() == Approx(0.25));
  CHECK(m.deltaSavedBytes > 3 * 1000);
  CHECK(m.resyncSnapshotBytes > 1000);
  CHECK(m.netSavedBytes() == static_cast<int64_t>(m.deltaSavedBytes) - static_cast<int64_t>(m.resyncSnapshotBytes));
}

TEST_CASE("AG-UI client conformance: state_cases.json", "[conformance][agui]") {
  AGUI_NEEDS_CONFORMANCE();
  json suite = agui_test::readJson(agui_test::conformancePath("agui-apply/state_cases.json"));
  int cases = 0, checkpoints = 0;
  for (const auto& c : suite["cases"]) {
    ++cases;
    INFO(c["name"].get<std::string>());
    Options o;
    SyncEngine engine(o);
    if (c.contains("initial_state")) engine.setInitialState(c["initial_state"]);
    std::vector<std::vector<Outcome>> perEvent;
    for (const auto& e : c["events"]) {
      std::vector<Outcome> out;
      engine.feed(sseFrame(e), out);
      perEvent.push_back(out);
      if (e["type"] == "STATE_DELTA") {
        // Where the reference logs and drops a failed patch, we must say so.
        REQUIRE(!out.empty());
      }
    }
    // Replay to each checkpoint: feed events up to after_event and compare.
    for (const auto& cp : c["expected"]) {
      ++checkpoints;
      SyncEngine replay(o);
      if (c.contains("initial_state")) replay.setInitialState(c["initial_state"]);
      size_t upto = cp["after_event"].get<size_t>();
      std::vector<Outcome> out;
      for (size_t i = 0; i <= upto; ++i) {
        out.clear();
        replay.feed(sseFrame(c["events"][i]), out);
      }
      CHECK(replay.state() == cp["state"]);
      if (cp.contains("patch_error")) {
        REQUIRE(!out.empty());
        CHECK(out.back().kind == OutcomeKind::Resync);
      }
    }
  }
  CHECK(cases == suite["case_count"].get<int>());
  CHECK(checkpoints > 0);
}

TEST_CASE("a heartbeat carrying a seq ahead of lastSeq reveals lost trailing events", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, 1));
  CHECK(h.sendRaw(": hb 1\n\n").empty());
  CHECK(h.sendRaw(": keepalive\n\n").empty());
  auto r = only(h.sendRaw(": hb 3\n\n"));
  CHECK(r.kind == OutcomeKind::Resync);
  CHECK(r.reason == agui_sync::Code::Gap);
  CHECK(h.engine.metrics().heartbeats == 3);
}

TEST_CASE("a gap resync heals by replay from lastSeq, without a snapshot", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, 1));
  json d2 = deltaEvent(op("/n", 2), 1, 2), d3 = deltaEvent(op("/n", 3), 2, 3);
  h.send(d3);                       // d2 was lost
  CHECK(only(h.end()).reason == agui_sync::Code::Gap);
  h.engine.reset();                 // reconnect; the server replays from lastSeq 1
  auto out = h.send(d2);
  REQUIRE(out.size() == 2);         // d2 applies, then the held d3 drains
  CHECK(out[0].kind == OutcomeKind::Applied);
  CHECK(out[1].kind == OutcomeKind::Applied);
  CHECK(only(h.send(d3)).reason == agui_sync::Code::Duplicate);
  CHECK(h.engine.status() == SyncStatus::Synced);
  CHECK(h.engine.state() == json{{"n", 3}});
  CHECK_FALSE(h.engine.resyncRequest());
  CHECK(h.engine.metrics().replayHeals == 1);
}

TEST_CASE("a replay that fails escalates the resync to one that needs a snapshot", "[receiver]") {
  Harness h;
  h.send(snapshotEvent({{"n", 0}}, 1));
  h.send(deltaEvent(op("/n", 3), 2, 3));
  h.end();
  auto r = only(h.send(deltaEvent(op("/missing", 2), 1, 2)));
  CHECK(r.kind == OutcomeKind::Resync);
  CHECK(r.reason == agui_sync::Code::PatchFailed);
  CHECK(h.engine.status() == SyncStatus::Resyncing);
  CHECK(h.engine.state() == json{{"n", 0}});
  // Now only a snapshot heals.
  CHECK(only(h.send(deltaEvent(op("/n", 2), 1, 2))).reason == agui_sync::Code::AwaitingSnapshot);
}

TEST_CASE("heldSeqs: the deltas waiting in the reorder window, ascending, bounded", "[receiver]") {
  Options o;
  o.reorderWindow = 3;
  o.maxGapEvents = 100;
  Harness h(o);
  h.send(snapshotEvent({{"n", 1}}, 1));
  CHECK(h.engine.heldSeqs().empty());
  CHECK(only(h.send(deltaEvent(op("/n", 5), 4, 5))).reason == agui_sync::Code::Reordered);
  CHECK(only(h.send(deltaEvent(op("/n", 3), 2, 3))).reason == agui_sync::Code::Reordered);
  CHECK(h.engine.heldSeqs() == std::vector<uint64_t>{3, 5});
  h.send(deltaEvent(op("/n", 5), 4, 5));  // a duplicate of a held one is not listed twice
  h.send(deltaEvent(op("/n", 6), 5, 6));
  CHECK(h.engine.heldSeqs() == std::vector<uint64_t>{3, 5, 6});
  // The window is full: the next one is a gap resync, and the list stays within it.
  CHECK(only(h.send(deltaEvent(op("/n", 7), 6, 7))).kind == OutcomeKind::Resync);
  CHECK(h.engine.heldSeqs() == std::vector<uint64_t>{3, 5, 6});
  CHECK(h.engine.resyncRequest()->reason == agui_sync::Code::Gap);
  // The replay from lastSeq heals: held deltas apply as their bases arrive.
  h.send(deltaEvent(op("/n", 2), 1, 2));
  CHECK(h.engine.lastSeq() == 3u);
  CHECK(h.engine.heldSeqs() == std::vector<uint64_t>{5, 6});
  h.send(deltaEvent(op("/n", 4), 3, 4));
  CHECK(h.engine.lastSeq() == 6u);
  CHECK(h.engine.status() == SyncStatus::Synced);
  CHECK(h.engine.heldSeqs().empty());
  // Held deltas survive a reconnect (reset keeps the reorder window).
  h.send(deltaEvent(op("/n", 9), 8, 9));
  h.end();
  h.engine.reset();
  CHECK(h.engine.heldSeqs() == std::vector<uint64_t>{9});
  CHECK(h.engine.resyncRequest()->reason == agui_sync::Code::Gap);
}
