// UpstreamCursor / CursorFacade: how an upstream agent's state events go on
// top of its thread's emitter. A seeded property test drives a real
// EmitterFacade the way every binding does (each try in order, a not-applicable
// patch moves on, settle()), with another writer moving the thread meanwhile:
//  - while nobody else writes, the emitter holds exactly the agent's state;
//  - the other writer's keys survive the agent's writes wherever the agent did
//    not write (the agent owns /a, the other /o);
//  - a delta that does not fit the agent's own state is dropped with every
//    later one until the agent's next snapshot, which heals it.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"
#include "emit/rebase_fit.h"

#include "cursor_support.h"

using agui_sync::CursorFacade;
using agui_sync::EmitterFacade;
using nlohmann::json;

namespace {

// Carries out a plan as a binding does; returns the events sent (null when dropped).
json carryOut(CursorFacade& cursor, EmitterFacade& emitter, const json& event) {
  const json r = cursor_support::twoCalls(cursor, emitter, event);
  REQUIRE(!r.contains("failed"));
  if (r.contains("kind")) return r["kind"] == "pass" ? json::array({event}) : json(nullptr);
  if (r["landed"] != -1) return r["events"];
  // No try landed: only patches the emitter refuses as not applicable (an update always lands).
  const std::string code = r["code"];
  REQUIRE((code == "patch-failed" || code == "precondition-failed" || code == "invalid-patch"));
  return nullptr;
}

json snapshotEvent(const json& state) { return {{"type", "STATE_SNAPSHOT"}, {"snapshot", state}}; }
json deltaEvent(const json& ops) { return {{"type", "STATE_DELTA"}, {"delta", ops}}; }
json stateOf(EmitterFacade& emitter) { return json::parse(emitter.stateJson()); }

// A random write of the agent under /a: a delta (usually) or a whole snapshot.
json agentEvent(std::mt19937& rng, json& agent) {
  const std::string key = std::to_string(rng() % 6);
  if (rng() % 5 == 0) {
    agent["a"] = json::object();
    for (int i = 0; i < 3; ++i) agent["a"][std::to_string(rng() % 6)] = static_cast<int>(rng() % 100);
    return snapshotEvent(agent);
  }
  json op;
  if (agent["a"].contains(key) && rng() % 3 == 0) {
    op = {{"op", "remove"}, {"path", "/a/" + key}};
    agent["a"].erase(key);
  } else {
    const int value = static_cast<int>(rng() % 100);
    op = {{"op", "add"}, {"path", "/a/" + key}, {"value", value}};
    agent["a"][key] = value;
  }
  return deltaEvent(json::array({op}));
}

}  // namespace

TEST_CASE("cursor: in step, the emitter holds exactly the agent's state", "[cursor][property]") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    EmitterFacade emitter(R"({"epoch":"e"})");
    CursorFacade cursor("{}");
    json agent = {{"a", json::object()}};
    REQUIRE(json::parse(emitter.update(agent.dump()))["ok"] == true);
    REQUIRE(json::parse(cursor.begin(agent.dump(), true, emitter.seq()))["ok"] == true);
    for (int step = 0; step < 40; ++step) {
      REQUIRE(!carryOut(cursor, emitter, agentEvent(rng, agent)).is_null());
      REQUIRE(stateOf(emitter) == agent);
    }
  }
}

TEST_CASE("cursor: another writer's keys survive the agent's writes", "[cursor][property]") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    EmitterFacade emitter(R"({"epoch":"e"})");
    CursorFacade cursor("{}");
    json agent = {{"a", json::object()}};
    json other = json::object();
    REQUIRE(json::parse(emitter.update(agent.dump()))["ok"] == true);
    REQUIRE(json::parse(cursor.begin(agent.dump(), false, emitter.seq()))["ok"] == true);
    for (int step = 0; step < 40; ++step) {
      if (rng() % 3 == 0) {  // the other writer: a client edit or another run, under /o
        other[std::to_string(rng() % 4)] = static_cast<int>(rng() % 100);
        const json ops = json::array({{{"op", "add"}, {"path", "/o"}, {"value", other}}});
        REQUIRE(json::parse(emitter.patch(ops.dump()))["ok"] == true);
      }
      REQUIRE(!carryOut(cursor, emitter, agentEvent(rng, agent)).is_null());
      const json state = stateOf(emitter);
      REQUIRE(state["a"] == agent["a"]);
      if (!other.empty()) REQUIRE(state["o"] == other);
    }
  }
}

TEST_CASE("cursor: a delta that does not fit the agent's state is dropped until its snapshot", "[cursor]") {
  EmitterFacade emitter(R"({"epoch":"e"})");
  CursorFacade cursor("{}");
  REQUIRE(json::parse(emitter.update(R"({"a":{"x":1}})"))["ok"] == true);
  REQUIRE(json::parse(cursor.begin(R"({"a":{"x":1}})", false, emitter.seq()))["ok"] == true);
  const double before = emitter.seq();
  // The agent removes what it never had: its own state and the emitter both refuse.
  CHECK(carryOut(cursor, emitter, deltaEvent(json::parse(R"([{"op":"remove","path":"/a/nope"}])"))).is_null());
  CHECK(cursor.suspended());
  CHECK(carryOut(cursor, emitter, deltaEvent(json::parse(R"([{"op":"add","path":"/a/y","value":2}])"))).is_null());
  CHECK(emitter.seq() == before);  // nothing went out for either
  const json healed = carryOut(cursor, emitter, snapshotEvent(json::parse(R"({"a":{"x":1,"z":3}})")));
  REQUIRE(!healed.is_null());
  CHECK(!cursor.suspended());
  CHECK(stateOf(emitter) == json::parse(R"({"a":{"x":1,"z":3}})"));
  CHECK(carryOut(cursor, emitter, deltaEvent(json::parse(R"([{"op":"add","path":"/a/w","value":4}])"))).size() == 1);
}

TEST_CASE("cursor: out of step, a write inside what another writer removed takes the agent's whole state", "[cursor]") {
  EmitterFacade emitter(R"({"epoch":"e"})");
  CursorFacade cursor("{}");
  REQUIRE(json::parse(emitter.update(R"({"a":{"list":{"k":1}},"o":1})"))["ok"] == true);
  REQUIRE(json::parse(cursor.begin(R"({"a":{"list":{"k":1}},"o":1})", false, emitter.seq()))["ok"] == true);
  REQUIRE(json::parse(emitter.patch(R"([{"op":"remove","path":"/a"}])"))["ok"] == true);  // another writer
  const json out = carryOut(cursor, emitter, deltaEvent(json::parse(R"([{"op":"add","path":"/a/list/j","value":2}])")));
  REQUIRE(!out.is_null());
  CHECK(stateOf(emitter) == json::parse(R"({"a":{"list":{"k":1,"j":2}},"o":1})"));
}

TEST_CASE("cursor: the client's input state is not the thread's: out of step only the diff goes on", "[cursor]") {
  EmitterFacade emitter(R"({"epoch":"e"})");
  CursorFacade cursor("{}");
  REQUIRE(json::parse(emitter.update(R"({"a":0,"o":"thread"})"))["ok"] == true);
  // The run starts from the client's state, which holds an edit the thread refused.
  REQUIRE(json::parse(cursor.begin(R"({"a":0,"o":"client"})", true, emitter.seq() + 1))["ok"] == true);
  const json out = carryOut(cursor, emitter, deltaEvent(json::parse(R"([{"op":"replace","path":"/a","value":1}])")));
  REQUIRE(!out.is_null());
  CHECK(stateOf(emitter) == json::parse(R"({"a":1,"o":"thread"})"));
}

TEST_CASE("cursor: beginApart: out of step from the start, whatever seq the emitter reaches", "[cursor]") {
  // The proxy forwards a client's state without writing it to the thread: the
  // run is out of step even when another writer brings the emitter to any seq.
  for (int writes = 0; writes <= 2; ++writes) {
    EmitterFacade emitter(R"({"epoch":"e"})");
    REQUIRE(json::parse(emitter.update(R"({"a":0,"o":"thread"})"))["ok"] == true);
    CursorFacade cursor("{}");
    REQUIRE(json::parse(cursor.beginApart(R"({"a":0,"o":"client"})"))["ok"] == true);
    for (int i = 0; i < writes; ++i) {
      REQUIRE(json::parse(emitter.patch(R"([{"op":"replace","path":"/o","value":"other)" + std::to_string(i) + R"("}])"))["ok"] == true);
    }
    const json o = writes == 0 ? json("thread") : json("other" + std::to_string(writes - 1));
    // The agent's snapshot echoes the client's /o: only its own change (/a) goes on.
    REQUIRE(!carryOut(cursor, emitter, snapshotEvent(json::parse(R"({"a":1,"o":"client"})"))).is_null());
    CHECK(stateOf(emitter) == json({{"a", 1}, {"o", o}}));
    // A rebase leaves the run out of step: its next delta goes on top as well.
    REQUIRE(!carryOut(cursor, emitter, deltaEvent(json::parse(R"([{"op":"replace","path":"/a","value":2}])"))).is_null());
    CHECK(stateOf(emitter) == json({{"a", 2}, {"o", o}}));
  }
  CursorFacade cursor("{}");
  CHECK(json::parse(cursor.beginApart("{not json"))["code"] == "invalid-json");
}

TEST_CASE("cursor: a stateful agent's first snapshot goes on only by what it changed from every start", "[cursor]") {
  // Two writers on one thread, each an agent that keeps its own state between
  // runs (issue 40): A owns /a, B owns /b. B wrote since A's last run; A's run
  // starts from the thread's state, but A's agent snapshots from its own view.
  EmitterFacade emitter(R"({"epoch":"e"})");
  CursorFacade cursor("{}");
  REQUIRE(json::parse(emitter.update(R"({"a":1,"b":7})"))["ok"] == true);
  REQUIRE(json::parse(cursor.begin(R"({"a":1,"b":7})", false, emitter.seq()))["ok"] == true);
  REQUIRE(json::parse(cursor.addStart(R"({"a":1,"b":0})"))["ok"] == true);  // A's own last state
  const json out = carryOut(cursor, emitter, snapshotEvent(json::parse(R"({"a":2,"b":0})")));
  REQUIRE(!out.is_null());
  CHECK(stateOf(emitter) == json::parse(R"({"a":2,"b":7})"));  // B's write stands
  CHECK(json::parse(cursor.agentView()) == json::parse(R"({"a":2,"b":0})"));
  // Later snapshots of the run are measured from the agent's previous one, as before.
  REQUIRE(!carryOut(cursor, emitter, snapshotEvent(json::parse(R"({"a":3,"b":0})"))).is_null());
  CHECK(stateOf(emitter) == json::parse(R"({"a":3,"b":7})"));
  CHECK(json::parse(cursor.addStart("{"))["ok"] == false);
}

TEST_CASE("cursor: a start's carried members fill only what the thread lacks", "[cursor]") {
  // A fresh thread that two runs begin at once (issue 40): each agent started
  // from the client's state {a:0,b:0}. Whichever lands second must keep the
  // first's change; whichever lands first must still give the thread every member.
  for (const bool otherFirst : {false, true}) {
    EmitterFacade emitter(R"({"epoch":"e"})");
    if (otherFirst) REQUIRE(json::parse(emitter.update(R"({"a":5,"b":0})"))["ok"] == true);
    CursorFacade cursor("{}");
    REQUIRE(json::parse(cursor.beginApart("{}"))["ok"] == true);   // nothing stored when the run began
    REQUIRE(json::parse(cursor.addStart(R"({"a":0,"b":0})"))["ok"] == true);
    REQUIRE(!carryOut(cursor, emitter, snapshotEvent(json::parse(R"({"a":0,"b":1})"))).is_null());
    CHECK(stateOf(emitter) == (otherFirst ? json::parse(R"({"a":5,"b":1})") : json::parse(R"({"a":0,"b":1})")));
  }
}

TEST_CASE("cursor: a rebase goes on member by member, whatever another writer removed", "[cursor]") {
  // The agent changed /x/n; meanwhile another writer removed /x/n and /y, and
  // added /z. Only the agent's own members move: /x/n is set again, the
  // removal of /y already happened, /z stands (no whole-state fallback).
  EmitterFacade emitter(R"({"epoch":"e"})");
  REQUIRE(json::parse(emitter.update(R"({"x":{"n":1,"m":1},"y":1})"))["ok"] == true);
  CursorFacade cursor("{}");
  REQUIRE(json::parse(cursor.begin(R"({"x":{"n":1,"m":1},"y":1})", false, emitter.seq()))["ok"] == true);
  REQUIRE(json::parse(emitter.update(R"({"x":{"m":2},"z":3})"))["ok"] == true);
  REQUIRE(!carryOut(cursor, emitter, snapshotEvent(json::parse(R"({"x":{"n":2,"m":1}})"))).is_null());
  CHECK(stateOf(emitter) == json::parse(R"({"x":{"n":2,"m":2},"z":3})"));
  // The agent changed /x/n and /x/k/v; another writer removed /x whole and set /y: /x comes back as
  // the agent holds it (once), /y stands.
  REQUIRE(json::parse(emitter.update(R"({"x":{"n":2,"m":2,"k":{"v":0}},"y":0})"))["ok"] == true);
  CursorFacade other("{}");
  REQUIRE(json::parse(other.begin(R"({"x":{"n":2,"m":2,"k":{"v":0}},"y":0})", false, emitter.seq()))["ok"] == true);
  REQUIRE(json::parse(emitter.update(R"({"y":1})"))["ok"] == true);
  REQUIRE(!carryOut(other, emitter, snapshotEvent(json::parse(R"({"x":{"n":3,"m":2,"k":{"v":1}},"y":0})"))).is_null());
  CHECK(stateOf(emitter) == json::parse(R"({"x":{"n":3,"m":2,"k":{"v":1}},"y":1})"));
  // fitRebase itself: a carried op never replaces a member, nor goes where its parent is gone.
  const json carried = json::parse(R"([{"op":"add","path":"/a","value":0},{"op":"replace","path":"/b","value":0},
                                                                {"op":"add","path":"/q/r","value":0},{"op":"add","path":"/l/0","value":0},
                                                                {"op":"remove","path":"/c"}])");
  const json fitted = agui_sync::fitRebase(json::parse(R"({"a":1,"l":[1]})"), json::parse(R"([{"op":"remove","path":"/gone"}])"),
                                           &carried, json::object());
  CHECK(fitted == json::parse(R"([{"op":"add","path":"/b","value":0}])"));
}

TEST_CASE("emitter facade: updateRebased goes on by the writer's change only", "[cursor][facade]") {
  // The writer last gave {a:1,o:{n:1},l:[1]} and now gives {a:2,o:{n:2},l:[1]}; meanwhile another
  // writer set b and removed o: a and o (as the writer holds it) go on, b stands.
  EmitterFacade emitter(R"({"epoch":"e"})");
  REQUIRE(json::parse(emitter.update(R"({"a":1,"b":0,"l":[1]})"))["ok"] == true);
  const json out = json::parse(emitter.updateRebased(R"({"a":1,"o":{"n":1},"l":[1]})", R"({"a":2,"o":{"n":2},"l":[1]})"));
  REQUIRE(out["ok"] == true);
  CHECK(stateOf(emitter) == json::parse(R"({"a":2,"b":0,"o":{"n":2},"l":[1]})"));
  // Where the change cannot fit (the thread holds a list where the writer wrote a member), its whole state.
  REQUIRE(json::parse(emitter.update(R"({"o":[0]})"))["ok"] == true);
  REQUIRE(json::parse(emitter.updateRebased(R"({"o":{"n":2}})", R"({"o":{"n":3}})"))["ok"] == true);
  CHECK(stateOf(emitter) == json::parse(R"({"o":{"n":3}})"));
  CHECK(json::parse(emitter.updateRebased("{", "{}"))["code"] == "invalid-json");
}

TEST_CASE("cursor facade: pass-through, bad input and options", "[cursor][facade]") {
  CursorFacade cursor("{}");
  CHECK(json::parse(cursor.initResult())["ok"] == true);
  CHECK(json::parse(cursor.plan(R"({"type":"TEXT_MESSAGE_CONTENT","delta":"hi"})", 0))["kind"] == "pass");
  CHECK(json::parse(cursor.plan("{not json", 0))["code"] == "invalid-json");
  CHECK(json::parse(cursor.begin(std::string(300, '[') + std::string(300, ']'), false, 0))["code"] == "limit-exceeded");
  CHECK(json::parse(CursorFacade(R"({"alwaysRebase":1})").initResult())["code"] == "invalid-options");
  CHECK(json::parse(CursorFacade(R"({"maxDepth":0})").initResult())["code"] == "invalid-options");
  // A delta that is not an array is dropped as invalid-patch, and suspends.
  CursorFacade other("{}");
  REQUIRE(json::parse(other.begin("{}", false, 1))["ok"] == true);
  const json plan = json::parse(other.plan(R"({"type":"STATE_DELTA","delta":{"op":"add"}})", 1));
  CHECK(plan["kind"] == "drop");
  CHECK(plan["reason"] == "invalid-patch");
  CHECK(other.suspended());
}
