// UpstreamCursor::plan(json&&): the facades hand the cursor the event they just
// parsed, and a snapshot moves into the agent's view instead of being copied
// (the copy of a 50 KB state cost more than its parse; bench_sequence_parts.py).
// The move must change nothing the cursor decides: two cursors, one given each
// event by reference and one by rvalue, over seeded runs of snapshots and
// deltas, in step and out of step (another writer moving the emitter's seq),
// plan the same tries, with the same rebase diffs, every time.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emit/upstream_cursor.h"

using agui_sync::CursorPlan;
using agui_sync::UpstreamCursor;
using nlohmann::json;

namespace {

json planJson(const CursorPlan& plan) {
  json tries = json::array();
  for (const auto& t : plan.tries) tries.push_back({{"update", t.update}, {"fromEvent", t.fromEvent}, {"value", t.value}});
  return {{"kind", static_cast<int>(plan.kind)}, {"snapshot", plan.snapshot}, {"reason", plan.reason}, {"tries", tries}};
}

// An agent event: a snapshot of a few keys, or a delta on them (sometimes one
// that does not apply: removing a key it may not have).
json agentEvent(std::mt19937& rnd, int step) {
  const std::string key = "k" + std::to_string(rnd() % 5);
  if (rnd() % 3 == 0) {
    json state = {{"step", step}, {"rows", json::array({step, step + 1})}};
    for (int i = 0; i < 4; ++i) state["k" + std::to_string(rnd() % 5)] = {{"v", static_cast<int>(rnd() % 100)}};
    return {{"type", "STATE_SNAPSHOT"}, {"snapshot", state}};
  }
  const char* op = rnd() % 4 == 0 ? "remove" : "add";
  json ops = json::array({{{"op", op}, {"path", "/" + key}}});
  if (std::string(op) == "add") ops[0]["value"] = static_cast<int>(rnd() % 100);
  return {{"type", "STATE_DELTA"}, {"delta", ops}};
}

}  // namespace

TEST_CASE("cursor: a moved event plans exactly as a referenced one", "[cursor][property]") {
  for (unsigned seed = 1; seed <= 50; ++seed) {
    std::mt19937 rnd(seed);
    UpstreamCursor byRef, byMove;
    const json start = {{"k0", 1}};
    byRef.begin(start, seed % 2 == 0, 0);
    byMove.begin(start, seed % 2 == 0, 0);
    uint64_t seq = 0;
    for (int step = 0; step < 40; ++step) {
      if (rnd() % 4 == 0) ++seq;  // another writer moved the emitter: out of step
      const json event = agentEvent(rnd, step);
      const CursorPlan a = byRef.plan(event, seq);
      const CursorPlan b = byMove.plan(json(event), seq);
      INFO("seed " << seed << " step " << step << " event " << event.dump());
      REQUIRE(planJson(a) == planJson(b));
      if (a.kind != CursorPlan::Kind::Write) continue;
      const int landed = static_cast<int>(rnd() % (a.tries.size() + 1)) - (rnd() % 5 == 0 ? 1 : 0);
      seq += landed >= 0 ? 1 : 0;
      byRef.settle(landed, seq);
      byMove.settle(landed, seq);
      REQUIRE(byRef.suspended() == byMove.suspended());
      REQUIRE(byRef.viewKnown() == byMove.viewKnown());
    }
  }
}

TEST_CASE("cursor: the moved snapshot is the agent's view the next rebase diffs from", "[cursor]") {
  UpstreamCursor cursor;
  cursor.begin(json::object(), false, 0);
  json first = {{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", 1}, {"big", std::string(1000, 'x')}}}};
  cursor.plan(std::move(first), 0);
  cursor.settle(0, 1);
  // Another writer moved the emitter (seq 2): the next snapshot is rebased on the view.
  const CursorPlan plan = cursor.plan(json{{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", 2}, {"big", std::string(1000, 'x')}}}}, 2);
  REQUIRE(plan.tries.size() == 2);
  REQUIRE(plan.tries[0].value == json::parse(R"([{"op":"replace","path":"/a","value":2}])"));
  REQUIRE(plan.tries[1].update);
  REQUIRE(plan.tries[1].fromEvent);
}
