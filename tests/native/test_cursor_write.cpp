// CursorFacade::planWrite: the one-call route for a plain emitter must send
// exactly what the two-call route sends (plan(), the tries carried out as a
// binding does, settle()). Two threads are driven side by side over seeded
// runs: the same agent events (snapshots, deltas, deltas that do not apply,
// a snapshot without a snapshot) and the same other writer moving the
// emitter meanwhile (so the cursor goes out of step and rebases). Every event
// gives the same answer, and the two emitters stay at the same state and seq.
#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"
#include "json/json_diff_impl.h"

#include "cursor_support.h"

using agui_sync::CursorFacade;
using agui_sync::EmitterFacade;
using nlohmann::json;

namespace {

using cursor_support::twoCalls;

// The same answer, read from planWrite().
json oneCall(CursorFacade& cursor, EmitterFacade& emitter, const json& event) {
  const json r = json::parse(cursor.planWrite(event.dump(), emitter));
  if (r["ok"] != true) return {{"failed", r["code"]}};
  if (r["kind"] != "write") return {{"kind", r["kind"]}};
  if (r["landed"] == -1) return {{"landed", -1}, {"code", r["failure"]["code"]}};
  return {{"landed", r["landed"]}, {"events", r["events"]}};
}

// An agent event under /a (a snapshot of the agent's whole state, or a delta that
// may not apply: it removes keys the agent may not hold), now and then a broken one.
json agentEvent(std::mt19937& rng, int step) {
  const std::string key = "/a/" + std::to_string(rng() % 5);
  switch (rng() % 8) {
    case 0:
    case 1: {
      json a = json::object();
      for (int i = 0; i < 3; ++i) a[std::to_string(rng() % 5)] = static_cast<int>(rng() % 100);
      return {{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", a}, {"step", step}, {"pad", std::string(200, 'p')}}}};
    }
    case 2: return {{"type", "STATE_DELTA"}, {"delta", json::array({{{"op", "remove"}, {"path", key}}})}};
    case 3: return {{"type", "STATE_SNAPSHOT"}};  // no snapshot: dropped, later deltas suspended
    case 4: return {{"type", "TEXT_MESSAGE_CONTENT"}, {"delta", "hi"}};
    default:
      return {{"type", "STATE_DELTA"},
              {"delta", json::array({{{"op", "add"}, {"path", key}, {"value", static_cast<int>(rng() % 100)}}})}};
  }
}

}  // namespace

TEST_CASE("cursor: planWrite sends what plan + tries + settle send", "[cursor][property]") {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    EmitterFacade e1(R"({"epoch":"e"})"), e2(R"({"epoch":"e"})");
    CursorFacade c1(""), c2("");
    const std::string start = R"({"a":{"0":1},"o":{}})";
    REQUIRE(json::parse(e1.update(start))["ok"] == true);
    REQUIRE(json::parse(e2.update(start))["ok"] == true);
    REQUIRE(c1.begin(start, seed % 2 == 0, e1.seq()) == c2.begin(start, seed % 2 == 0, e2.seq()));
    for (int step = 0; step < 60; ++step) {
      if (rng() % 5 == 0) {  // another writer: its own key, on both threads
        const std::string ops = R"([{"op":"add","path":"/o/)" + std::to_string(rng() % 3) + R"(","value":)" +
                                std::to_string(step) + "}]";
        REQUIRE(e1.patch(ops) == e2.patch(ops));
      }
      const json event = agentEvent(rng, step);
      INFO("seed " << seed << " step " << step << " event " << event.dump());
      REQUIRE(twoCalls(c1, e1, event) == oneCall(c2, e2, event));
      REQUIRE(e1.stateJson() == e2.stateJson());
      REQUIRE(e1.seq() == e2.seq());
      REQUIRE(c1.suspended() == c2.suspended());
    }
  }
}

TEST_CASE("cursor: planWrite refuses bad JSON and a too-deep snapshot, the thread unchanged", "[cursor][facade]") {
  EmitterFacade emitter(R"({"epoch":"e","maxDepth":4})");
  CursorFacade cursor(R"({"maxDepth":4})");
  REQUIRE(json::parse(cursor.begin("{}", false, emitter.seq()))["ok"] == true);
  REQUIRE(json::parse(cursor.planWrite("{not json", emitter))["code"] == "invalid-json");
  const json deep = json::parse(cursor.planWrite(R"({"type":"STATE_SNAPSHOT","snapshot":{"a":{"b":{"c":{"d":{"e":1}}}}}})", emitter));
  REQUIRE(deep["ok"] == true);
  REQUIRE(deep["landed"] == -1);
  REQUIRE(deep["failure"]["code"] == "limit-exceeded");
  REQUIRE(emitter.stateJson() == "{}");
  REQUIRE(emitter.seq() == 0);
}

// writeSnapshotInStep, driven as the Python binding drives it (with the
// differ's JSON node standing in for a Python value): a snapshot in step is
// written by the caller's diff, anything else declines untouched and takes
// planWrite. Every answer is planWrite's own, byte for byte; out of step
// (another writer moved the emitter) it always declines.
TEST_CASE("cursor: writeSnapshotInStep answers what planWrite answers", "[cursor][property]") {
  size_t taken = 0, declined = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    EmitterFacade e1(R"({"epoch":"e","guardedPaths":["/a/1"]})"), e2(R"({"epoch":"e","guardedPaths":["/a/1"]})");
    CursorFacade c1(""), c2("");
    const std::string start = R"({"a":{"0":1},"o":{}})";
    REQUIRE(json::parse(e1.update(start))["ok"] == true);
    REQUIRE(json::parse(e2.update(start))["ok"] == true);
    REQUIRE(c1.begin(start, false, e1.seq()) == c2.begin(start, false, e2.seq()));
    for (int step = 0; step < 60; ++step) {
      bool moved = false;
      if (rng() % 5 == 0) {  // another writer: the run goes out of step
        const std::string ops = R"([{"op":"add","path":"/o/)" + std::to_string(rng() % 3) + R"(","value":)" +
                                std::to_string(step) + "}]";
        const std::string landed = e1.patch(ops);
        REQUIRE(landed == e2.patch(ops));
        moved = json::parse(landed)["ok"] == true;  // not once a snapshot dropped /o
      }
      const json event = agentEvent(rng, step);
      INFO("seed " << seed << " step " << step << " event " << event.dump());
      const std::string expected = c1.planWrite(event.dump(), e1);
      std::optional<std::string> answer;
      if (event["type"] == "STATE_SNAPSHOT" && event.contains("snapshot")) {
        const json& snapshot = event["snapshot"];
        answer = c2.writeSnapshotInStep(e2, [&](const json& state, const agui_sync::DiffOptions& o, json::array_t& ops) {
          return agui_sync::appendDiffOf(state, agui_sync::JsonNode{&snapshot}, o, ops);
        });
        if (moved) REQUIRE_FALSE(answer.has_value());
        (answer ? taken : declined)++;
      }
      if (!answer) answer = c2.planWrite(event.dump(), e2);
      REQUIRE(*answer == expected);
      REQUIRE(e1.stateJson() == e2.stateJson());
      REQUIRE(c1.suspended() == c2.suspended());
    }
  }
  REQUIRE(taken > 100);  // the in-step route was really exercised
  REQUIRE(declined > 10);
}
