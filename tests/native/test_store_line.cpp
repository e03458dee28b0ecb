// The durable line's rules (emit/store_line.h) through StoreLineFacade: the
// state at a stored line's head, and when a store write carries the state,
// driven by a real EmitterFacade's events as a store-bound emitter logs them.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "facade/emitter_facade.h"
#include "facade/store_line_facade.h"

using agui_sync::EmitterFacade;
using agui_sync::StoreLineFacade;
using nlohmann::json;

namespace {

json lineOf(const std::string& state, uint64_t stateSeq, const json& eventTexts) {
  return json{{"state", state}, {"stateSeq", stateSeq}, {"events", eventTexts}};
}

}  // namespace

TEST_CASE("store line: the head is the stored state with the log after stateSeq applied", "[store][facade]") {
  EmitterFacade em(R"({"epoch":"e","snapshotRatio":100,"initialState":{"n":0,"list":[]}})");
  const std::string base = em.stateJson();
  json texts = json::array();
  std::mt19937 rng(23);
  for (int i = 0; i < 40; i++) {
    json next = json::parse(em.stateJson());
    next["n"] = static_cast<int>(rng() % 1000);
    if (rng() % 3 == 0) next["list"].push_back(i);
    json r = json::parse(em.update(next.dump()));
    REQUIRE(r["ok"] == true);
    for (const auto& e : r["events"]) texts.push_back(e.dump());
  }
  StoreLineFacade line("{}");
  REQUIRE(line.initResult() == R"({"ok":true})");
  json opened = json::parse(line.open(lineOf(base, 0, texts).dump()));
  REQUIRE(opened["ok"] == true);
  CHECK(opened["events"] == texts.size());
  CHECK(json::parse(line.headStateJson()) == json::parse(em.stateJson()));
  CHECK(line.headStateJson().empty());  // handed over once

  SECTION("events at or before stateSeq are history, not state") {
    json mid = json::array();
    for (size_t i = 20; i < texts.size(); i++) mid.push_back(texts[i]);
    // The state at seq 40 with the last 20 events logged: nothing to apply.
    opened = json::parse(line.open(lineOf(em.stateJson(), 40, mid).dump()));
    REQUIRE(opened["ok"] == true);
    CHECK(opened["events"] == 0);
    CHECK(json::parse(line.headStateJson()) == json::parse(em.stateJson()));
  }
  SECTION("a log that does not apply is store-conflict, and nothing is handed over") {
    json r = json::parse(line.open(lineOf(R"({"other":true})", 0, texts).dump()));
    CHECK(r["ok"] == false);
    CHECK(r["code"] == "store-conflict");
    CHECK(line.headStateJson().empty());
  }
  SECTION("a malformed line is invalid-json") {
    CHECK(json::parse(line.open(R"({"state":{},"stateSeq":0})"))["code"] == "invalid-json");
    CHECK(json::parse(line.open(R"({"state":"{","stateSeq":0})"))["code"] == "invalid-json");
    CHECK(json::parse(line.open(R"({"state":"{}","stateSeq":-1})"))["code"] == "invalid-json");
    CHECK(json::parse(line.open(R"({"state":"{}","stateSeq":0,"events":[7]})"))["code"] == "invalid-json");
  }
}

TEST_CASE("store line: the state goes with snapshots and before half the log's caps", "[store][facade]") {
  StoreLineFacade line(R"({"replayMaxEvents":5,"replayMaxBytes":1000})");
  REQUIRE(line.maxEvents() == 5);
  REQUIRE(line.maxBytes() == 1000);
  CHECK(line.needsState(1, 10, true));   // a snapshot empties the log
  CHECK(!line.needsState(2, 10, false));  // 2 <= 2.5
  CHECK(line.needsState(3, 10, false));   // 3 > 2.5, as JS's maxEvents / 2
  line.committed(false, 2, 10);
  CHECK(line.needsState(1, 10, false));   // 3 since the stored state
  line.committed(true, 1, 10);
  CHECK(!line.needsState(2, 500, false));  // 500 <= 1000 / 2
  CHECK(line.needsState(2, 501, false));
  line.committed(false, 2, 400);
  CHECK(line.needsState(0, 101, false));
  line.restart();
  CHECK(!line.needsState(2, 500, false));

  StoreLineFacade whole(R"({"incremental":false})");
  CHECK(whole.needsState(1, 1, false));  // a store that cannot take a write without it
  CHECK(whole.maxEvents() == 1024);
  CHECK(whole.maxBytes() == (4u << 20));
  CHECK(json::parse(StoreLineFacade(R"({"incremental":1})").initResult())["code"] == "invalid-options");
  CHECK(json::parse(StoreLineFacade(R"({"replayMaxEvents":-1})").initResult())["code"] == "invalid-options");
  CHECK(json::parse(StoreLineFacade(R"({"maxDepth":0})").initResult())["code"] == "invalid-options");
  // Caps of 0, as an emitter takes them: every write carries the state.
  StoreLineFacade none(R"({"replayMaxEvents":0,"replayMaxBytes":0})");
  REQUIRE(json::parse(none.initResult())["ok"] == true);
  CHECK(none.maxEvents() == 0);
  CHECK(none.needsState(1, 1, false));
}

TEST_CASE("store line: a reopened line counts what is logged after its stored state", "[store][facade]") {
  EmitterFacade em(R"({"epoch":"e","snapshotRatio":100,"initialState":{"n":0}})");
  json texts = json::array();
  size_t bytes = 0;
  for (int i = 1; i <= 3; i++) {
    json r = json::parse(em.patch(R"([{"op":"replace","path":"/n","value":)" + std::to_string(i) + "}]"));
    texts.push_back(r["events"][0].dump());
    bytes += texts.back().get<std::string>().size();
  }
  StoreLineFacade line(R"({"replayMaxEvents":8})");
  json opened = json::parse(line.open(lineOf(R"({"n":0})", 0, texts).dump()));
  CHECK(opened["events"] == 3);
  CHECK(opened["bytes"] == bytes);
  CHECK(!line.needsState(1, 1, false));  // 4 <= 8 / 2
  CHECK(line.needsState(2, 1, false));   // 5 > 4
}

TEST_CASE("store line: the committed state follows committed batches", "[store][facade]") {
  EmitterFacade em(R"({"epoch":"e","snapshotRatio":0.5,"guardedPaths":["/p"],"initialState":{"p":{"to":"a"},"n":0}})");
  StoreLineFacade line("{}");
  CHECK(line.committedStateJson().empty());  // nothing known before a seed or an open
  REQUIRE(json::parse(line.seed(em.stateJson()))["ok"] == true);
  std::mt19937 rng(7);
  for (int i = 0; i < 60; i++) {
    json next = json::parse(em.stateJson());
    next["n"] = i;
    if (rng() % 4 == 0) next["p"]["to"] = std::string(1 + rng() % 40, 'x');  // guarded: a test op goes first
    if (rng() % 9 == 0) next = json{{"p", {{"to", "b"}}}, {"n", i}, {"big", std::string(300, 'y')}};  // maybe a snapshot
    json r = json::parse(em.update(next.dump()));
    REQUIRE(r["ok"] == true);
    REQUIRE(line.advance(r["events"].dump()));
    CHECK(json::parse(line.committedStateJson()) == json::parse(em.stateJson()));
  }
  // A batch that does not apply leaves the committed state unknown until the next seed.
  CHECK(!line.advance(R"([{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/nothing"}],"metadata":{"seq":99}}])"));
  CHECK(line.committedStateJson().empty());
  CHECK(!line.advance("[]"));
  REQUIRE(json::parse(line.seed(R"({"k":1})"))["ok"] == true);
  CHECK(line.committedStateJson() == R"({"k":1})");
  CHECK(json::parse(line.seed("{"))["code"] == "invalid-json");
}
