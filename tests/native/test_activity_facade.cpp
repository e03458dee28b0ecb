// The senders' activity decisions (src/emit/activity_cursor.h) through the
// bindings' facade (src/facade/activity_facade.h, docs/wire.md section 11):
// an agent's activity events stamped with its other members kept, a delta that
// does not apply suspending its activity until the next snapshot (or, for the
// proxy, asking for the verified content), and catch-ups per activity.
#include <catch2/catch.hpp>

#include <agui_sync/sync_engine.h>
#include "activity_events.h"
#include "facade/activity_facade.h"
#include "wire/wire.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

json call(const std::string& text) {
  json out = json::parse(text);
  REQUIRE(out.is_object());
  return out;
}

json snap(const std::string& id, json content) {
  return {{"type", "ACTIVITY_SNAPSHOT"}, {"messageId", id}, {"activityType", "form"}, {"content", std::move(content)}};
}

json delta(const std::string& id, json ops) {
  return {{"type", "ACTIVITY_DELTA"}, {"messageId", id}, {"activityType", "form"}, {"patch", std::move(ops)}};
}

json replaceOp(const std::string& path, json value) {
  return json::array({{{"op", "replace"}, {"path", path}, {"value", std::move(value)}}});
}

const std::string kOptions = R"({"epoch":"e","digestEvery":2,"snapshotRatio":100})";

// Feeds `events` (an answer's) to a receiving engine.
void feed(SyncEngine& engine, const json& events) { agui_test::feedActivities(engine, events.get<std::vector<json>>()); }

using agui_test::findActivity;
using agui_test::receivingActivities;

}  // namespace

TEST_CASE("activity facade: an agent's snapshots become the activity's snapshot, then deltas; its own members ride along",
          "[activity][facade]") {
  ActivityFacade f(kOptions);
  REQUIRE(call(f.initResult())["ok"] == true);
  json first = snap("m1", {{"total", 1}});
  first["timestamp"] = 7;
  first["metadata"] = {{"trace", "t1"}, {kWireKey, {{"seq", 99}}}};
  json r = call(f.write(first.dump(), false));
  CHECK(r["kind"] == "write");
  CHECK(r["messageId"] == "m1");
  REQUIRE(r["events"].size() == 1);
  const json& e = r["events"][0];
  CHECK(e["type"] == "ACTIVITY_SNAPSHOT");
  CHECK(e["timestamp"] == 7);
  CHECK(e["metadata"]["trace"] == "t1");
  CHECK(e["metadata"][kWireKey]["seq"] == 0);  // ours, not the agent's
  CHECK(e["metadata"][kWireKey]["epoch"] == "e");
  r = call(f.write(snap("m1", {{"total", 2}}).dump(), false));
  REQUIRE(r["events"].size() == 1);
  CHECK(r["events"][0]["type"] == "ACTIVITY_DELTA");
  CHECK(r["events"][0]["patch"] == replaceOp("/total", 2));
  CHECK(call(f.write(snap("m1", {{"total", 2}}).dump(), false))["events"].empty());  // nothing changed
  json odd = snap("m1", {{"total", 3}});
  odd["timestamp"] = 1.5;  // AG-UI 1.0 ends a run on these: not carried
  odd["rawEvent"] = nullptr;
  json carried = call(f.write(odd.dump(), false))["events"][0];
  CHECK_FALSE(carried.contains("timestamp"));
  CHECK_FALSE(carried.contains("rawEvent"));
  CHECK(call(f.write(R"({"type":"TEXT_MESSAGE_START","messageId":"x"})", false))["kind"] == "pass");
  CHECK(call(f.write("[1", false)).value("code", "") == "invalid-json");
  CHECK(f.seq("m1") == 2);
  CHECK(json::parse(f.contentJson("m1")) == json{{"total", 3}});
  CHECK(f.contentJson("nobody") == "null");
}

TEST_CASE("activity facade: a delta that does not apply suspends its activity until the agent's next snapshot",
          "[activity][facade]") {
  ActivityFacade f(kOptions);
  call(f.write(snap("m1", {{"n", 0}}).dump(), false));
  call(f.write(snap("m2", {{"n", 0}}).dump(), false));
  json r = call(f.write(delta("m1", replaceOp("/n", 1)).dump(), false));
  CHECK(r["kind"] == "write");
  r = call(f.write(delta("m1", replaceOp("/missing", 1)).dump(), false));
  CHECK(r["kind"] == "drop");
  CHECK(r["reason"] == "patch-failed");
  CHECK(r["failure"]["code"] == "patch-failed");
  r = call(f.write(delta("m1", replaceOp("/n", 2)).dump(), false));  // applies, but nobody vouches for its base
  CHECK(r["kind"] == "drop");
  CHECK_FALSE(r.contains("failure"));
  CHECK(call(f.write(delta("m2", replaceOp("/n", 5)).dump(), false))["kind"] == "write");  // the others go on
  CHECK(call(f.write(delta("ghost", replaceOp("/n", 5)).dump(), false))["kind"] == "drop");
  CHECK(call(f.write(R"({"type":"ACTIVITY_DELTA","patch":[]})", false))["reason"] == "invalid-event");
  r = call(f.write(snap("m1", {{"n", 3}}).dump(), false));
  CHECK(r["kind"] == "write");
  CHECK(r["events"][0]["patch"] == replaceOp("/n", 3));
  CHECK(call(f.write(delta("m1", replaceOp("/n", 4)).dump(), false))["kind"] == "write");
}

TEST_CASE("activity facade: a verified cursor asks for the content when a delta does not fit the thread's",
          "[activity][facade]") {
  ActivityFacade f(R"({"epoch":"e"})");
  call(f.write(snap("m1", {{"a", 1}, {"b", 1}}).dump(), true));
  json other = delta("m1", replaceOp("/c", 1));
  other["timestamp"] = 3;
  json r = call(f.write(other.dump(), true));
  CHECK(r["kind"] == "content");
  CHECK(r["messageId"] == "m1");
  r = call(f.writeContent(other.dump(), R"({"a":1,"b":2,"c":1})"));
  CHECK(r["kind"] == "write");
  REQUIRE(r["events"].size() == 1);
  CHECK(r["events"][0]["timestamp"] == 3);
  CHECK(json::parse(f.contentJson("m1")) == json{{"a", 1}, {"b", 2}, {"c", 1}});
  CHECK(call(f.write(delta("m1", replaceOp("/a", 5)).dump(), true))["kind"] == "write");  // not suspended
}

TEST_CASE("activity facade: catch-ups per activity: replay, snapshot, current, by array or header", "[activity][facade]") {
  ActivityFacade f(kOptions);
  SyncEngine engine(receivingActivities());
  feed(engine, call(f.write(snap("a", {{"n", 0}}).dump(), false))["events"]);
  feed(engine, call(f.write(snap("b", {{"n", 0}}).dump(), false))["events"]);
  for (int i = 1; i <= 3; ++i) f.write(snap("a", {{"n", i}}).dump(), false);  // all lost
  call(f.write(snap("c", {{"n", 0}}).dump(), false));                           // never seen

  CHECK(call(f.catchUp("{}"))["events"].empty());  // a client that keeps no activities
  json position = {{"activities", json::array({{{"messageId", "a"}, {"lastSeq", 0}, {"epoch", "e"}},
                                               {{"messageId", "b"}, {"lastSeq", 0}, {"epoch", "e"}},
                                               {{"messageId", "z"}, {"lastSeq", 4}, {"epoch", "e"}}})}};
  json r = call(f.catchUp(position.dump()));
  CHECK(r["activities"] == json::array({{{"messageId", "a"}, {"mode", "replay"}},
                                        {{"messageId", "b"}, {"mode", "current"}},
                                        {{"messageId", "c"}, {"mode", "snapshot"}}}));
  REQUIRE(r["events"].size() == 4);
  feed(engine, r["events"]);
  std::vector<ActivityView> views = engine.activities();
  for (const char* id : {"a", "b", "c"}) {
    const ActivityView* v = findActivity(views, id);
    REQUIRE(v);
    CHECK(v->status == SyncStatus::Synced);
    CHECK(*v->content == json::parse(f.contentJson(id)));
    REQUIRE(*v->epoch);
    CHECK(**v->epoch == "e");
  }
  // The same position as the header's value (encodeURIComponent of its JSON).
  const std::string header = "%5B%7B%22messageId%22%3A%22a%22%2C%22lastSeq%22%3A0%2C%22epoch%22%3A%22e%22%7D%5D";
  json byHeader = call(f.catchUp(json{{"activities", header}}.dump()));
  CHECK(byHeader["activities"][0] == json{{"messageId", "a"}, {"mode", "replay"}});
  CHECK(byHeader["activities"][1]["mode"] == "snapshot");
  CHECK(call(f.catchUp(json{{"activities", "%5B%7"}}.dump()))["events"].empty());  // a bad header: as absent
  // A reason whose cure is a snapshot, another epoch, no seq: the snapshot.
  for (const json& entry : {json{{"messageId", "a"}, {"lastSeq", 3}, {"epoch", "e"}, {"reason", "patch-failed"}},
                            json{{"messageId", "a"}, {"lastSeq", 3}, {"epoch", "old"}},
                            json{{"messageId", "a"}, {"lastSeq", nullptr}, {"epoch", "e"}},
                            json{{"messageId", "a"}, {"lastSeq", 3}}}) {
    json answer = call(f.catchUp(json{{"activities", json::array({entry})}}.dump()));
    CHECK(answer["activities"][0]["mode"] == "snapshot");
  }
  // A bad entry is ignored (its activity is then sent as if unlisted).
  json bad = call(f.catchUp(json{{"activities", json::array({{{"messageId", "a"}, {"lastSeq", -1}}})}}.dump()));
  CHECK(bad["activities"][0]["mode"] == "snapshot");
}

TEST_CASE("activity facade: an activity created after one was forgotten counts in an epoch of its own",
          "[activity][facade]") {
  ActivityFacade f(R"({"epoch":"e","maxActivities":1})");
  SyncEngine engine(receivingActivities());
  feed(engine, call(f.write(snap("m1", {{"v", 1}}).dump(), false))["events"]);
  for (int i = 2; i <= 4; ++i) feed(engine, call(f.write(snap("m1", {{"v", i}}).dump(), false))["events"]);
  call(f.write(snap("m2", {{"v", 1}}).dump(), false));  // m1 forgotten
  CHECK(f.size() == 1);
  json again = call(f.write(snap("m1", {{"v", 9}}).dump(), false));
  REQUIRE(again["events"].size() == 1);
  const json& wire = again["events"][0]["metadata"][kWireKey];
  CHECK(wire["seq"] == 0);
  CHECK(wire["epoch"] != "e");  // (e, 0) already named m1's first content
  feed(engine, again["events"]);
  std::vector<ActivityView> views = engine.activities();
  const ActivityView* v = findActivity(views, "m1");
  REQUIRE(v);
  CHECK(*v->content == json{{"v", 9}});
  CHECK(v->status == SyncStatus::Synced);
}

TEST_CASE("activity facade: the app's own snapshot and patch, and refused options", "[activity][facade]") {
  ActivityFacade f(kOptions);
  json r = call(f.snapshot("m1", "card", R"({"p":0})", true));
  REQUIRE(r["events"].size() == 1);
  CHECK(r["events"][0]["activityType"] == "card");
  r = call(f.patch("m1", "card", replaceOp("/p", 1).dump()));
  CHECK(r["events"][0]["type"] == "ACTIVITY_DELTA");
  r = call(f.patch("m1", "card", replaceOp("/nope", 1).dump()));
  CHECK(r["ok"] == false);
  CHECK(r["code"] == "patch-failed");
  CHECK(r["opIndex"] == 0);
  CHECK(call(f.patch("ghost", "card", "[]"))["code"] == "patch-failed");
  CHECK(call(f.snapshot("m1", "card", "{", true))["code"] == "invalid-json");
  CHECK(call(ActivityFacade(R"({"maxActivities":0})").initResult())["code"] == "invalid-options");
  CHECK(call(ActivityFacade(R"({"epoch":3})").initResult())["code"] == "invalid-options");
  CHECK(call(ActivityFacade("[]").initResult())["code"] == "invalid-options");
  CHECK(percentDecode("%4").has_value() == false);
  CHECK(percentDecode("a%2Cb") == std::string("a,b"));
}

TEST_CASE("activity stream: a stream's first event of an activity its client holds no position for is the snapshot",
          "[activity][facade]") {
  ActivityFacade thread(kOptions);
  {
    ActivityStreamFacade first;
    call(first.write(thread, snap("m1", {{"n", 0}, {"note", "x"}}).dump(), false));
    json r = call(first.write(thread, snap("m1", {{"n", 1}, {"note", "x"}}).dump(), false));
    CHECK(r["events"][0]["type"] == "ACTIVITY_DELTA");  // this stream sent m1's snapshot already
  }
  ActivityStreamFacade plain;  // a later run, its client said nothing about activities
  json changed = snap("m1", {{"n", 2}, {"note", "x"}});
  changed["timestamp"] = 9;
  json r = call(plain.write(thread, changed.dump(), false));
  REQUIRE(r["events"].size() == 1);
  CHECK(r["events"][0]["type"] == "ACTIVITY_SNAPSHOT");
  CHECK(r["events"][0]["content"] == json{{"n", 2}, {"note", "x"}});
  CHECK(r["events"][0]["metadata"][kWireKey]["seq"] == 2);
  CHECK(r["events"][0]["timestamp"] == 9);
  CHECK(call(plain.write(thread, snap("m1", {{"n", 3}, {"note", "x"}}).dump(), false))["events"][0]["type"] ==
        "ACTIVITY_DELTA");
  json unchanged = call(ActivityStreamFacade().write(thread, snap("m1", {{"n", 3}, {"note", "x"}}).dump(), false));
  REQUIRE(unchanged["events"].size() == 1);  // nothing changed, but this client has never seen it
  CHECK(unchanged["events"][0]["type"] == "ACTIVITY_SNAPSHOT");

  ActivityStreamFacade sequenced;  // a client whose activity positions its catch-up answered
  json position = {{"activities", json::array({{{"messageId", "m1"}, {"lastSeq", 3}, {"epoch", "e"}}})}};
  CHECK(call(sequenced.catchUp(thread, position.dump()))["activities"][0]["mode"] == "current");
  CHECK(call(sequenced.write(thread, snap("m1", {{"n", 4}, {"note", "x"}}).dump(), false))["events"][0]["type"] ==
        "ACTIVITY_DELTA");
  CHECK(call(sequenced.write(thread, snap("m2", {{"n", 0}}).dump(), false))["events"][0]["type"] == "ACTIVITY_SNAPSHOT");
}
