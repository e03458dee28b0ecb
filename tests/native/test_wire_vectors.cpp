// Wire conformance vectors (tests/vectors/wire_vectors.json): event sequences
// produced by the reference emitter, with the outcomes, status and state a
// receiver must end up with after each step. This test regenerates them and
// checks them against the checked-in file, so the file can't go stale; other
// implementations (a Python or Go backend's receiver tests, our JS suite) replay
// the file. Regenerate deliberately with AGUI_UPDATE_VECTORS=1.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include <agui_sync/state_emitter.h>
#include <agui_sync/sync_engine.h>
#include "test_support.h"
#include "wire/wire.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

struct Scenario {
  std::string name, description;
  json steps = json::array();  // {"feed": sse} | {"end": true} | {"reset": true}
};

std::string frames(const std::vector<json>& events) {
  std::string s;
  for (const auto& e : events) s += StateEmitter::encode(e);
  return s;
}

EmitterOptions emitterOptions() {
  EmitterOptions o;
  o.epoch = "epoch-1";
  o.digestEvery = 4;
  o.snapshotRatio = 100;  // always deltas, so the vectors exercise the delta paths
  o.guardedPaths = {"/proposal"};
  return o;
}

json baseState() { return json::parse(R"({"proposal":{"recipient":"alice","amount":100},"todos":["draft"]})"); }

std::vector<Scenario> scenarios() {
  std::vector<Scenario> all;
  auto feed = [](Scenario& s, const std::string& sse) { s.steps.push_back({{"feed", sse}}); };
  {
    Scenario s{"in-order", "snapshot then deltas, each applied; a digest every 4th seq", json::array()};
    StateEmitter em(emitterOptions(), baseState());
    feed(s, frames({em.snapshot()}));
    json st = baseState();
    for (int i = 1; i <= 5; ++i) {
      st["todos"].push_back("item " + std::to_string(i));
      if (i == 3) st["proposal"]["amount"] = 150;
      feed(s, frames(em.update(st)));
    }
    all.push_back(s);
  }
  {
    Scenario s{"duplicate-and-reorder", "a duplicate is ignored; a swapped pair is held then healed", json::array()};
    StateEmitter em(emitterOptions(), baseState());
    feed(s, frames({em.snapshot()}));
    json st = baseState();
    st["todos"].push_back("a");
    auto d1 = em.update(st);
    st["todos"].push_back("b");
    auto d2 = em.update(st);
    st["proposal"]["recipient"] = "bob";
    auto d3 = em.update(st);
    feed(s, frames(d1));
    feed(s, frames(d1));
    feed(s, frames(d3));
    feed(s, frames(d2));
    all.push_back(s);
  }
  {
    Scenario s{"gap-then-replay", "a lost delta, the stream ends (resync gap), replaySince(lastSeq) heals it", json::array()};
    StateEmitter em(emitterOptions(), baseState());
    feed(s, frames({em.snapshot()}));
    json st = baseState();
    st["todos"].push_back("a");
    feed(s, frames(em.update(st)));
    st["todos"].push_back("lost");
    em.update(st);
    st["proposal"]["amount"] = 1;
    feed(s, frames(em.update(st)));
    s.steps.push_back({{"end", true}});
    s.steps.push_back({{"reset", true}});
    feed(s, frames(em.replaySince(1, "epoch-1")));
    all.push_back(s);
  }
  {
    Scenario s{"precondition-failed", "the UI's proposal differs from the agent's: the test op fails, resync, snapshot heals",
               json::array()};
    StateEmitter em(emitterOptions(), baseState());
    json drifted = baseState();
    drifted["proposal"]["recipient"] = "mallory";
    json snap = em.snapshot();
    snap["snapshot"] = drifted;  // a receiver that started from the wrong proposal
    snap["metadata"][kWireKey].erase("digest");
    feed(s, frames({snap}));
    json st = baseState();
    st["proposal"]["recipient"] = "carol";
    feed(s, frames(em.update(st)));
    feed(s, frames({em.snapshot()}));
    all.push_back(s);
  }
  {
    Scenario s{"digest-mismatch", "every patch applies, but the digest reveals drift", json::array()};
    EmitterOptions o = emitterOptions();
    o.digestEvery = 1;
    StateEmitter em(o, baseState());
    json snap = em.snapshot();
    snap["snapshot"]["todos"].push_back("only-on-the-client");
    snap["metadata"][kWireKey].erase("digest");
    feed(s, frames({snap}));
    json st = baseState();
    st["proposal"]["amount"] = 7;
    feed(s, frames(em.update(st)));
    all.push_back(s);
  }
  {
    Scenario s{"epoch-restart",
               "the sender restarts (new epoch): its first delta forces a resync, its snapshot heals, and late events "
               "from the old epoch are ignored as stale",
               json::array()};
    StateEmitter a(emitterOptions(), baseState());
    feed(s, frames({a.snapshot()}));
    json st = baseState();
    for (int i = 0; i < 3; ++i) {
      st["todos"].push_back(i);
      feed(s, frames(a.update(st)));
    }
    EmitterOptions o = emitterOptions();
    o.epoch = "epoch-2";
    StateEmitter b(o, baseState());
    json st2 = baseState();
    st2["proposal"]["amount"] = 5;
    feed(s, frames(b.update(st2)));
    feed(s, frames({b.snapshot()}));
    st["todos"].push_back("late");
    feed(s, frames(a.update(st)));
    feed(s, frames({a.snapshot()}));
    all.push_back(s);
  }
  {
    Scenario s{"unsequenced", "a plain AG-UI backend: applied but unverified; a failed patch is a resync, not a warning",
               json::array()};
    feed(s, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"count\":0}}\n\n");
    feed(s, "data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"replace\",\"path\":\"/count\",\"value\":1}]}\n\n");
    feed(s, "data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"replace\",\"path\":\"/missing\",\"value\":1}]}\n\n");
    all.push_back(s);
  }
  {
    Scenario s{"seed-article",
               "an unstamped snapshot, then deltas with top-level seq/base_seq from base_seq 0: the first delta's "
               "base_seq is adopted as the snapshot's seq, every delta applies, a duplicate is caught, and the state "
               "stays unverified (nothing proves the snapshot was taken at seq 0)",
               json::array()};
    feed(s, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"count\":0,\"items\":[]}}\n\n");
    for (int i = 1; i <= 3; ++i)
      feed(s, "data: {\"type\":\"STATE_DELTA\",\"seq\":" + std::to_string(i) + ",\"base_seq\":" +
                  std::to_string(i - 1) + ",\"delta\":[{\"op\":\"replace\",\"path\":\"/count\",\"value\":" +
                  std::to_string(i) + "},{\"op\":\"add\",\"path\":\"/items/-\",\"value\":" + std::to_string(i) +
                  "}]}\n\n");
    feed(s, "data: {\"type\":\"STATE_DELTA\",\"seq\":3,\"base_seq\":2,\"delta\":[{\"op\":\"replace\",\"path\":"
            "\"/count\",\"value\":3},{\"op\":\"add\",\"path\":\"/items/-\",\"value\":3}]}\n\n");
    s.steps.push_back({{"end", true}});
    all.push_back(s);
  }
  {
    Scenario s{"new-run-renumbers",
               "a plain backend numbers each run from 0 and starts the next run from the client's state without a "
               "snapshot: RUN_STARTED drops the adopted position and the new run's first delta anchors again",
               json::array()};
    feed(s, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r1\"}\n\n");
    feed(s, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"count\":0}}\n\n");
    for (int i = 1; i <= 2; ++i)
      feed(s, "data: {\"type\":\"STATE_DELTA\",\"seq\":" + std::to_string(i) + ",\"base_seq\":" +
                  std::to_string(i - 1) + ",\"delta\":[{\"op\":\"replace\",\"path\":\"/count\",\"value\":" +
                  std::to_string(i) + "}]}\n\n");
    feed(s, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r1\"}\n\n");
    feed(s, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r2\"}\n\n");
    feed(s, "data: {\"type\":\"STATE_DELTA\",\"seq\":1,\"base_seq\":0,\"delta\":[{\"op\":\"replace\",\"path\":"
            "\"/count\",\"value\":10}]}\n\n");
    all.push_back(s);
  }
  {
    Scenario s{"version-1-metadata",
               "a backend writing version 1 by hand (seq, baseSeq, epoch, digest at the top of metadata) is read as "
               "before: its snapshot is a proven position and its deltas are sequenced",
               json::array()};
    StateEmitter em(emitterOptions(), baseState());
    auto v1 = [](json event) {  // our fields moved to the top of metadata
      json fields = event["metadata"][kWireKey];
      event["metadata"] = fields;
      return event;
    };
    feed(s, frames({v1(em.snapshot())}));
    json st = baseState();
    for (int i = 1; i <= 4; ++i) {
      st["todos"].push_back(i);
      std::vector<json> events;
      for (const json& e : em.update(st)) events.push_back(v1(e));
      feed(s, frames(events));
    }
    all.push_back(s);
  }
  {
    Scenario s{"version-2-key-wins",
               "when metadata carries our key, it alone says where the event stands: another middleware's seq at the "
               "top of metadata and a top-level seq/base_seq are not ours",
               json::array()};
    StateEmitter em(emitterOptions(), baseState());
    json snap = em.snapshot();
    snap["metadata"]["seq"] = 41;  // someone else's
    feed(s, frames({snap}));
    json st = baseState();
    st["todos"].push_back("ours");
    for (json e : em.update(st)) {
      e["metadata"]["seq"] = 99;
      e["metadata"]["baseSeq"] = 98;
      e["seq"] = 7;
      e["base_seq"] = 6;
      feed(s, frames({e}));
    }
    all.push_back(s);
  }
  {
    Scenario s{"heartbeat-gap", "an idle stream's heartbeat shows the client missed the last delta", json::array()};
    StateEmitter em(emitterOptions(), baseState());
    feed(s, frames({em.snapshot()}));
    json st = baseState();
    st["todos"].push_back("x");
    em.update(st);  // lost
    feed(s, em.heartbeat());
    all.push_back(s);
  }
  return all;
}

json outcomeSummary(const Outcome& o) {
  json j = {{"kind", outcomeKindName(o.kind)}};
  if (!o.type.empty()) j["type"] = o.type;
  if (o.kind == OutcomeKind::Resync || o.kind == OutcomeKind::Ignored || o.kind == OutcomeKind::Error)
    j[o.kind == OutcomeKind::Error ? "code" : "reason"] = codeName(o.reason);
  if (o.seq) j["seq"] = *o.seq;
  if (o.kind == OutcomeKind::Applied) j["changedPaths"] = o.changedPaths;
  if (o.kind == OutcomeKind::Resync) j["lastSeq"] = o.lastSeq ? json(*o.lastSeq) : json(nullptr);
  return j;
}

json run(const Scenario& s) {
  SyncEngine engine;
  json steps = json::array();
  for (const auto& step : s.steps) {
    std::vector<Outcome> out;
    if (step.contains("feed")) engine.feed(step["feed"].get<std::string>(), out);
    else if (step.contains("end")) engine.end(out);
    else engine.reset();
    json outs = json::array();
    for (const auto& o : out) outs.push_back(outcomeSummary(o));
    json expect = {{"outcomes", outs},
                   {"status", statusName(engine.status())},
                   {"lastSeq", engine.lastSeq() ? json(*engine.lastSeq()) : json(nullptr)},
                   {"state", engine.state()}};
    json withExpect = step;
    withExpect["expect"] = expect;
    steps.push_back(withExpect);
  }
  return {{"name", s.name}, {"description", s.description}, {"steps", steps}};
}

}  // namespace

TEST_CASE("wire vectors: regenerated output equals tests/vectors/wire_vectors.json", "[vectors][emitter]") {
  json doc = {{"format", "agui-state-sync wire vectors (wire version 2): feed each step's SSE text (or end/reset the stream) into a "
                         "fresh receiver with default options and compare outcomes (kind/type/reason|code/seq/"
                         "changedPaths/lastSeq), status, lastSeq and state after each step"},
              {"vectors", json::array()}};
  for (const auto& s : scenarios()) doc["vectors"].push_back(run(s));
  const std::string path = std::string(AGUI_SOURCE_DIR) + "/tests/vectors/wire_vectors.json";
  if (std::getenv("AGUI_UPDATE_VECTORS")) {
    std::ofstream(path) << doc.dump(1) << "\n";
    WARN("rewrote " << path);
  }
  json onDisk = agui_test::readJson(path);
  REQUIRE(onDisk["vectors"].size() == doc["vectors"].size());
  for (size_t i = 0; i < doc["vectors"].size(); ++i) {
    INFO(doc["vectors"][i]["name"].get<std::string>());
    CHECK(onDisk["vectors"][i] == doc["vectors"][i]);
  }
  // The scenarios really exercise what they claim.
  std::string all = doc.dump();
  for (const char* reason : {"\"duplicate\"", "\"reordered\"", "\"gap\"", "\"precondition-failed\"", "\"digest-mismatch\"",
                             "\"epoch-changed\"", "\"patch-failed\"", "\"stale-snapshot\"", "\"stale-epoch\""})
    CHECK(all.find(reason) != std::string::npos);
}
