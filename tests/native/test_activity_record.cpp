// A thread's activities as a fleet keeps them (src/emit/activity_record.h,
// docs/wire.md section 11): writers on several instances, each with its own
// ActivityFacade, commit their events' record ops to one stored record; a
// write that lost a race adopts the record and writes again, as the Node and
// Python drivers do. Whatever the interleaving, every committed event, fed in
// commit order to one receiver, gives each activity the record's content,
// synced: no activity line forks, and the record is what clients hold.
#include <catch2/catch.hpp>

#include <map>

#include <agui_sync/sync_engine.h>
#include "activity_events.h"
#include "emit/activity_record.h"
#include "facade/activity_facade.h"
#include "json/json_patch.h"
#include "random_state.h"
#include "wire/wire.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

struct Fleet {
  json record = json::object();
  std::vector<json> committed;  // every committed event, in commit order
  size_t conflicts = 0;

  // One write of an instance, as a driver does it: commit its record ops, or adopt the record and write again.
  json write(ActivityFacade& f, const json& event) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      json answer = json::parse(f.write(event.dump(), false));
      json ops = json::parse(f.takeRecordOps());
      if (answer.value("kind", "") != "write") return answer;
      PatchTransaction tx(record);
      if (tx.apply(ops).ok()) {
        tx.commit();
        REQUIRE(json::parse(f.settleRecord(""))["next"] == "done");
        for (const json& e : answer["events"]) committed.push_back(e);
        return answer;
      }
      ++conflicts;
      REQUIRE(json::parse(f.settleRecord("precondition-failed"))["next"] == "adopt");
      REQUIRE(f.recordStale());
      REQUIRE(json::parse(f.adoptRecord(record.dump()))["ok"] == true);
      REQUIRE_FALSE(f.recordStale());
    }
    FAIL("a write lost four races in a row");
    return json();
  }
};

json snap(const std::string& id, json content) {
  return {{"type", "ACTIVITY_SNAPSHOT"}, {"messageId", id}, {"activityType", "form"}, {"content", std::move(content)}};
}

json delta(const std::string& id, json ops) {
  return {{"type", "ACTIVITY_DELTA"}, {"messageId", id}, {"activityType", "form"}, {"patch", std::move(ops)}};
}

std::unique_ptr<ActivityFacade> instance(int i, int maxActivities = 3) {
  return std::make_unique<ActivityFacade>(R"({"record":true,"digestEvery":2,"snapshotRatio":100,"maxActivities":)" +
                                          std::to_string(maxActivities) + R"(,"epoch":"i)" + std::to_string(i) + "\"}");
}

}  // namespace

TEST_CASE("activity record: interleaved writers on three instances never fork a line, and clients hold the record",
          "[activity][record]") {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    agui_test::RandomState rnd(seed);
    Fleet fleet;
    std::vector<std::unique_ptr<ActivityFacade>> instances;
    for (int i = 0; i < 3; ++i) instances.push_back(instance(i));
    SyncEngine client(agui_test::receivingActivities());
    for (int step = 0; step < 40; ++step) {
      ActivityFacade& f = *instances[rnd.uniform(0, 2)];
      const std::string id = "m" + std::to_string(rnd.uniform(0, 3));
      if (rnd.chance(0.3)) f.adoptRecord(fleet.record.dump());  // a catch-up on that instance
      json event = rnd.chance(0.4) ? snap(id, {{"n", step}, {"v", rnd.value(2)}})
                                   : delta(id, json::array({{{"op", "add"}, {"path", "/n"}, {"value", step}}}));
      json answer = fleet.write(f, event);
      if (answer.value("kind", "") == "write" && !answer["events"].empty()) {
        REQUIRE(json::parse(f.contentJson(id)) == fleet.record[id]["content"]);
        REQUIRE(f.seq(id) == fleet.record[id]["seq"].get<double>());
      }
    }
    agui_test::feedActivities(client, fleet.committed);
    const std::vector<ActivityView> views = client.activities();
    for (const auto& [id, entry] : fleet.record.items()) {
      CAPTURE(id);
      const ActivityView* view = agui_test::findActivity(views, id);
      REQUIRE(view != nullptr);
      REQUIRE(view->status == SyncStatus::Synced);
      REQUIRE(*view->content == entry["content"]);
      REQUIRE(view->lastSeq == entry["seq"].get<uint64_t>());
    }
    REQUIRE(fleet.record.size() <= 4);
  }
}

TEST_CASE("activity record: an instance that never saw an activity continues its stored line", "[activity][record]") {
  Fleet fleet;
  auto a = instance(1), b = instance(2);
  fleet.write(*a, snap("m7", {{"total", 0}}));
  fleet.write(*a, delta("m7", json::array({{{"op", "replace"}, {"path", "/total"}, {"value", 40}}})));
  REQUIRE(json::parse(b->adoptRecord(fleet.record.dump())) == json({{"ok", true}, {"changed", 1}}));
  CHECK(b->seq("m7") == 1);
  CHECK(json::parse(b->contentJson("m7")) == json({{"total", 40}}));
  // A client behind it gets its snapshot at the stored seq, in the stored epoch.
  json caught = json::parse(b->catchUp(R"({"activities":[{"messageId":"m7","lastSeq":0,"epoch":"i1"}]})"));
  REQUIRE(caught["events"].size() == 1);
  CHECK(caught["events"][0]["type"] == "ACTIVITY_SNAPSHOT");
  CHECK(caught["events"][0]["metadata"][kWireKey]["epoch"] == "i1");
  CHECK(caught["events"][0]["metadata"][kWireKey]["seq"] == 1);
  // Its next write continues the line: a delta on seq 1 of epoch i1.
  json out = fleet.write(*b, delta("m7", json::array({{{"op", "replace"}, {"path", "/total"}, {"value", 41}}})));
  CHECK(out["events"][0]["metadata"][kWireKey]["baseSeq"] == 1);
  CHECK(fleet.record["m7"]["seq"] == 2);
  CHECK(fleet.conflicts == 0);
  // A stale instance's write is refused by the record's tests, adopts, and goes on top.
  fleet.write(*a, delta("m7", json::array({{{"op", "add"}, {"path", "/note"}, {"value", "a"}}})));
  CHECK(fleet.conflicts == 1);
  CHECK(fleet.record["m7"]["content"] == json({{"total", 41}, {"note", "a"}}));
}

TEST_CASE("activity record: forgotten activities leave the record; a malformed record is refused whole",
          "[activity][record]") {
  Fleet fleet;
  auto a = instance(1, 2);
  for (const char* id : {"m1", "m2", "m3"}) fleet.write(*a, snap(id, {{"id", id}}));
  CHECK(fleet.record.size() == 2);
  CHECK_FALSE(fleet.record.contains("m1"));
  json before = fleet.record;
  CHECK(json::parse(a->adoptRecord("[1,2]"))["code"] == "invalid-json");
  CHECK(json::parse(a->adoptRecord("{\"m2\":"))["ok"] == false);
  CHECK(a->size() == 2);
  // A malformed entry counts as not held; the others stay.
  json broken = fleet.record;
  broken["m2"] = {{"seq", "x"}};
  CHECK(json::parse(a->adoptRecord(broken.dump()))["changed"] == 1);
  CHECK(a->seq("m2") == -1);
  CHECK(a->seq("m3") == 0);
  CHECK(activityRecordKey("t1") == std::string("\0activities:t1", 14));
}

TEST_CASE("activity record: what follows the record's answer is decided once (RecordCommits)", "[activity][record]") {
  RecordCommits commits;
  commits.taken(true);
  CHECK(commits.stale());
  CHECK(commits.settle("store-unavailable") == RecordCommits::Next::Raise);  // not a race: the failure stands
  CHECK(commits.stale());                                                   // and the next write adopts first
  commits.adopted();
  CHECK_FALSE(commits.stale());
  commits.taken(true);
  for (unsigned i = 1; i < RecordCommits::kMaxRecordTries; ++i) CHECK(commits.settle("precondition-failed") == RecordCommits::Next::Adopt);
  CHECK(commits.settle("patch-failed") == RecordCommits::Next::Fail);
  commits.taken(true);
  CHECK(commits.settle("precondition-failed") == RecordCommits::Next::Adopt);  // a new count per write
  CHECK(commits.settle(nullptr) == RecordCommits::Next::Done);
  CHECK_FALSE(commits.stale());
  commits.taken(false);
  CHECK_FALSE(commits.stale());
}
