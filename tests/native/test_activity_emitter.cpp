// The sender's half of activities (src/emit/activity_emitter.h, docs/wire.md
// section 11): stamped activity events a receiver with options.activities
// takes, and catch-ups per activity.
#include <catch2/catch.hpp>

#include <agui_sync/sync_engine.h>
#include "activity_events.h"
#include "emit/activity_emitter.h"
#include "random_state.h"
#include "wire/wire.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

EmitterOptions opts() {
  EmitterOptions o;
  o.epoch = "e";
  o.digestEvery = 2;
  o.snapshotRatio = 100;  // deltas, so the delta path is what is tested
  return o;
}

using agui_test::feedActivities;
using agui_test::findActivity;
using agui_test::receivingActivities;

}  // namespace

TEST_CASE("activity emitter: a snapshot at seq 0, then deltas, shaped as AG-UI activity events", "[activity][emitter]") {
  ActivityEmitter em(opts());
  auto first = em.snapshot("m1", "checkout", json{{"total", 1}, {"items", json::array()}});
  REQUIRE(first.size() == 1);
  CHECK(first[0]["type"] == "ACTIVITY_SNAPSHOT");
  CHECK(first[0]["messageId"] == "m1");
  CHECK(first[0]["activityType"] == "checkout");
  CHECK(first[0]["content"] == json{{"total", 1}, {"items", json::array()}});
  CHECK(first[0]["metadata"][kWireKey]["seq"] == 0);
  CHECK(first[0]["metadata"][kWireKey]["epoch"] == "e");
  CHECK_FALSE(first[0].contains("snapshot"));
  auto next = em.snapshot("m1", "checkout", json{{"total", 2}, {"items", json::array()}});
  REQUIRE(next.size() == 1);
  CHECK(next[0]["type"] == "ACTIVITY_DELTA");
  CHECK(next[0]["patch"] == json::array({{{"op", "replace"}, {"path", "/total"}, {"value", 2}}}));
  CHECK(next[0]["metadata"][kWireKey]["baseSeq"] == 0);
  CHECK(em.snapshot("m1", "checkout", json{{"total", 2}, {"items", json::array()}}).empty());  // no change
  CHECK(em.snapshot("m1", "checkout", json{{"other", true}}, false).empty());                  // replace: false
  PatchOutcome p = em.patch("m1", "checkout", json::array({{{"op", "add"}, {"path", "/items/-"}, {"value", "a"}}}));
  REQUIRE(p.ok());
  CHECK(p.events[0]["metadata"][kWireKey]["seq"] == 2);
  CHECK(p.events[0]["metadata"][kWireKey].contains("digest"));  // every 2nd seq
  CHECK_FALSE(em.patch("ghost", "x", json::array()).ok());
  CHECK_FALSE(em.patch("m1", "checkout", json::array({{{"op", "remove"}, {"path", "/nope"}}})).ok());

  SyncEngine engine(receivingActivities());
  std::vector<json> all = first;
  all.insert(all.end(), next.begin(), next.end());
  all.insert(all.end(), p.events.begin(), p.events.end());
  auto out = feedActivities(engine, all);
  REQUIRE(out.size() == 3);
  for (const Outcome& o : out) CHECK(o.kind == OutcomeKind::Applied);
  auto views = engine.activities();
  const ActivityView* a = findActivity(views, "m1");
  REQUIRE(a);
  CHECK(a->status == SyncStatus::Synced);
  CHECK(*a->content == *em.content("m1"));
  CHECK(a->lastSeq == em.seq("m1"));
}

TEST_CASE("activity emitter: catch-ups per activity heal a receiver that missed events", "[activity][emitter]") {
  ActivityEmitter em(opts());
  SyncEngine engine(receivingActivities());
  feedActivities(engine, em.snapshot("m1", "form", json{{"n", 0}}));
  feedActivities(engine, em.snapshot("m2", "form", json{{"n", 0}}));
  for (int i = 1; i <= 3; ++i) em.snapshot("m1", "form", json{{"n", i}});  // all lost
  auto m2 = em.snapshot("m2", "form", json{{"n", 9}});
  feedActivities(engine, m2);
  CHECK(em.catchUp("m2", 1, nullptr).empty());  // current
  auto replay = em.catchUp("m1", 0, nullptr);
  REQUIRE(replay.size() == 3);
  CHECK(replay[0]["type"] == "ACTIVITY_DELTA");
  feedActivities(engine, replay);
  auto views = engine.activities();
  CHECK(*findActivity(views, "m1")->content == json{{"n", 3}});
  CHECK(findActivity(views, "m1")->status == SyncStatus::Synced);
  // Another epoch, or no position: the activity's snapshot.
  const std::string other = "other";
  auto snap = em.catchUp("m1", 2, &other);
  REQUIRE(snap.size() == 1);
  CHECK(snap[0]["type"] == "ACTIVITY_SNAPSHOT");
  CHECK(em.catchUp("m1", std::nullopt, nullptr)[0]["content"] == json{{"n", 3}});
  CHECK(em.snapshots().size() == 2);
  CHECK(em.catchUp("nobody", 0, nullptr).empty());
}

TEST_CASE("activity emitter: at most maxActivities, the least recently written forgotten", "[activity][emitter]") {
  ActivityEmitter em(opts(), 2);
  em.snapshot("a", "t", json{{"v", 1}});
  em.snapshot("b", "t", json{{"v", 1}});
  em.snapshot("a", "t", json{{"v", 2}});  // a is now the more recent
  em.snapshot("c", "t", json{{"v", 1}});
  CHECK(em.size() == 2);
  CHECK(em.content("a"));
  CHECK_FALSE(em.content("b"));
  CHECK(em.content("c"));
}
