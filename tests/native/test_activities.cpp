// Activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; docs/wire.md section
// 11): documents kept per messageId beside the state, each its own line of seqs
// with the state's guarantees. test_activities_property.cpp is the seeded fault test.
#include <catch2/catch.hpp>

#include <agui_sync/sync_engine.h>
#include "activity_events.h"
#include "random_state.h"

using namespace agui_sync;
using agui_test::activityDelta;
using agui_test::activitySnapshot;
using agui_test::sseFrame;
using nlohmann::json;

namespace {

Options withActivities() {
  Options o;
  o.activities = true;
  return o;
}

struct Harness {
  SyncEngine engine{withActivities()};
  std::vector<Outcome> send(const json& event) {
    std::vector<Outcome> out;
    engine.feed(sseFrame(event), out);
    return out;
  }
  const ActivityView* find(const std::string& id) {
    views = engine.activities();
    for (const ActivityView& v : views)
      if (*v.messageId == id) return &v;
    return nullptr;
  }
  std::vector<ActivityView> views;
};

json op(const std::string& kind, const std::string& path, json value) {
  return {{"op", kind}, {"path", path}, {"value", std::move(value)}};
}

json form() { return json{{"fields", {{"name", "Ada"}, {"amount", 10}}}}; }

}  // namespace

TEST_CASE("activities: a snapshot and its deltas apply per messageId, beside the state", "[activity]") {
  Harness h;
  h.send(agui_test::snapshotEvent(json{{"n", 1}}, 7));
  auto out = h.send(activitySnapshot("a1", form(), 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Applied);
  CHECK(out[0].type == "ACTIVITY_SNAPSHOT");
  CHECK(out[0].messageId == "a1");
  CHECK(out[0].seq == 0u);
  out = h.send(activityDelta("a1", json::array({op("replace", "/fields/amount", 12)}), 0, 1));
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == "ACTIVITY_DELTA");
  CHECK(out[0].changedPaths == std::vector<std::string>{"/fields/amount"});
  const ActivityView* a = h.find("a1");
  REQUIRE(a);
  CHECK(*a->activityType == "form");
  CHECK((*a->content)["fields"]["amount"] == 12);
  CHECK(a->status == SyncStatus::Synced);
  CHECK(a->lastSeq == 1u);
  // The state's line is its own.
  CHECK(h.engine.lastSeq() == 7u);
  CHECK(h.engine.state() == json{{"n", 1}});
}

TEST_CASE("activities: gaps, duplicates and reorder are handled per activity", "[activity]") {
  Harness h;
  h.send(activitySnapshot("a1", form(), 0));
  h.send(activitySnapshot("b2", form(), 0));
  auto d1 = activityDelta("a1", json::array({op("replace", "/fields/amount", 1)}), 0, 1);
  auto d2 = activityDelta("a1", json::array({op("replace", "/fields/amount", 2)}), 1, 2);
  auto out = h.send(d2);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Ignored);
  CHECK(out[0].reason == Code::Reordered);
  CHECK(out[0].messageId == "a1");
  out = h.send(d1);
  REQUIRE(out.size() == 2);  // d1, then the held d2
  CHECK(h.find("a1")->lastSeq == 2u);
  CHECK((*h.find("a1")->content)["fields"]["amount"] == 2);
  out = h.send(d1);
  REQUIRE(out.size() == 1);
  CHECK(out[0].reason == Code::Duplicate);
  // A lost delta, then the stream ends: that activity (only) asks for a resync.
  h.send(activityDelta("a1", json::array({op("replace", "/fields/amount", 4)}), 3, 4));
  std::vector<Outcome> end;
  h.engine.end(end);
  REQUIRE(end.size() == 1);
  CHECK(end[0].kind == OutcomeKind::Resync);
  CHECK(end[0].reason == Code::Gap);
  CHECK(end[0].messageId == "a1");
  CHECK(end[0].lastSeq == 2u);
  CHECK(h.find("a1")->status == SyncStatus::Resyncing);
  CHECK(h.find("b2")->status == SyncStatus::Synced);
  CHECK(h.engine.status() == SyncStatus::Unverified);  // the state never had a position: untouched
}

TEST_CASE("activities: a failing patch applies nothing and resyncs with the reason; the snapshot heals", "[activity]") {
  Harness h;
  h.send(activitySnapshot("a1", form(), 0));
  json patch = json::array({op("replace", "/fields/amount", 99), json{{"op", "test"}, {"path", "/fields/name"}, {"value", "Bob"}}});
  auto out = h.send(activityDelta("a1", patch, 0, 1));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Resync);
  CHECK(out[0].reason == Code::PreconditionFailed);
  CHECK(out[0].messageId == "a1");
  CHECK(*h.find("a1")->content == form());  // atomic: the first op was rolled back
  json healed = form();
  healed["fields"]["amount"] = 99;
  out = h.send(activitySnapshot("a1", healed, 1, true));
  CHECK(out.at(0).kind == OutcomeKind::Applied);
  CHECK(h.find("a1")->status == SyncStatus::Synced);
  CHECK(*h.find("a1")->content == healed);
}

TEST_CASE("activities: a digest that does not match is a resync, nothing applied", "[activity]") {
  Harness h;
  h.send(activitySnapshot("a1", form(), 0));
  json other = form();
  other["fields"]["amount"] = 1234;
  auto out = h.send(activityDelta("a1", json::array({op("replace", "/fields/amount", 11)}), 0, 1, &other));
  REQUIRE(out.size() == 1);
  CHECK(out[0].reason == Code::DigestMismatch);
  CHECK(*h.find("a1")->content == form());
}

TEST_CASE("activities: a delta for an unknown messageId is never dropped silently", "[activity]") {
  Harness h;
  auto out = h.send(activityDelta("ghost", json::array({op("add", "/x", 1)}), 3, 4));
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind == OutcomeKind::Resync);
  CHECK(out[0].messageId == "ghost");
  CHECK(out[1].kind == OutcomeKind::Ignored);
  CHECK(out[1].reason == Code::AwaitingSnapshot);
  // Its snapshot arrives (the catch-up): the held delta applies after it.
  out = h.send(activitySnapshot("ghost", json{{"y", 0}}, 3));
  REQUIRE(out.size() == 2);
  CHECK(*h.find("ghost")->content == json{{"y", 0}, {"x", 1}});
  CHECK(h.find("ghost")->lastSeq == 4u);
}

TEST_CASE("activities: limits on count and size", "[activity]") {
  Options o = withActivities();
  o.maxActivities = 2;
  o.maxActivityBytes = 64;
  SyncEngine engine(o);
  std::vector<Outcome> out;
  engine.feed(sseFrame(activitySnapshot("a", json{{"v", 1}}, 0)), out);
  engine.feed(sseFrame(activitySnapshot("b", json{{"v", 1}}, 0)), out);
  out.clear();
  engine.feed(sseFrame(activitySnapshot("c", json{{"v", 1}}, 0)), out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Error);
  CHECK(out[0].reason == Code::LimitExceeded);
  CHECK(out[0].messageId == "c");
  CHECK(engine.activities().size() == 2);
  out.clear();
  engine.feed(sseFrame(activityDelta("a", json::array({op("add", "/big", std::string(100, 'x'))}), 0, 1)), out);
  CHECK(out.back().kind == OutcomeKind::Resync);
  CHECK(out.back().reason == Code::LimitExceeded);
  CHECK((*engine.activities()[0].content) == json{{"v", 1}});
}

TEST_CASE("activities: malformed activity events resync the activity they name, or all of them", "[activity]") {
  Harness h;
  h.send(activitySnapshot("a1", form(), 0));
  h.send(activitySnapshot("b2", form(), 0));
  std::vector<Outcome> out;
  h.engine.feed("data: {\"type\":\"ACTIVITY_DELTA\",\"messageId\":\"a1\",\"patch\":{}}\n\n", out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind == OutcomeKind::Error);
  CHECK(out[0].messageId == "a1");
  CHECK(out[1].kind == OutcomeKind::Resync);
  CHECK(out[1].messageId == "a1");
  CHECK(h.find("b2")->status == SyncStatus::Synced);
  h.send(activitySnapshot("a1", form(), 0));  // healed
  out.clear();
  h.engine.feed("data: {\"type\":\"ACTIVITY_DELTA\",\"messageId\":\"b2\",\"patch\":[\n\n", out);
  REQUIRE(out.size() == 3);  // the error, then both activities (which one is unknown)
  CHECK(out[0].kind == OutcomeKind::Error);
  CHECK(out[1].kind == OutcomeKind::Resync);
  CHECK(out[2].kind == OutcomeKind::Resync);
  CHECK(h.engine.status() != SyncStatus::Resyncing);  // the state's line lost nothing
}

TEST_CASE("activities: replace false keeps an existing activity; off by default they pass through", "[activity]") {
  Harness h;
  h.send(activitySnapshot("a1", form(), 0));
  json again = activitySnapshot("a1", json{{"other", true}}, std::nullopt);
  again["replace"] = false;
  auto out = h.send(again);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Ignored);
  CHECK(*h.find("a1")->content == form());

  SyncEngine plain;  // options.activities is off: an event like any other
  std::vector<Outcome> passed;
  plain.feed(sseFrame(activitySnapshot("a1", form(), 0)), passed);
  plain.feed("data: {\"type\":\"ACTIVITY_DELTA\",\"messageId\":\"a1\",\"patch\":{}}\n\n", passed);
  REQUIRE(passed.size() == 2);
  CHECK(passed[0].kind == OutcomeKind::Event);
  CHECK(passed[1].kind == OutcomeKind::Event);
  CHECK(plain.activities().empty());
}
