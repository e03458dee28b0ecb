// Activity wire vectors (tests/vectors/activity_vectors.json; docs/wire.md
// section 11), regenerated here and checked against the file so it cannot go
// stale (AGUI_UPDATE_VECTORS=1 rewrites it). Two halves, replayed by the JS
// (tests/js/activity-vectors.test.mjs) and Python
// (tests/python/test_activity_vectors.py) suites with identical outcomes and bytes:
//  - send: an emitter's activities (options given) written an agent's events
//    (write) and asked catch-ups: the SSE bytes each gives, what it dropped,
//    each activity's catch-up mode;
//  - receive: SSE text fed to a fresh receiver with { activities: true }: the
//    outcomes and every activity (status, lastSeq, epoch, content) after each step.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>

#include <agui_sync/state_emitter.h>
#include <agui_sync/sync_engine.h>
#include "facade/activity_facade.h"
#include "test_support.h"
#include "wire/wire.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

json snap(const std::string& id, json content) {
  return {{"type", "ACTIVITY_SNAPSHOT"}, {"messageId", id}, {"activityType", "checkout"}, {"content", std::move(content)}};
}

json delta(const std::string& id, json ops) {
  return {{"type", "ACTIVITY_DELTA"}, {"messageId", id}, {"activityType", "checkout"}, {"patch", std::move(ops)}};
}

json op(const char* kind, const char* path, json value) { return {{"op", kind}, {"path", path}, {"value", std::move(value)}}; }

json form(int amount, json items) { return {{"fields", {{"amount", amount}, {"name", "Ada"}}}, {"items", std::move(items)}}; }

std::string sse(const json& events) {
  std::string out;
  for (const json& e : events) out += StateEmitter::encode(e, false);
  return out;
}

// A send scenario: the facade's answers become each step's `expect`.
struct Sender {
  json vector;
  std::unique_ptr<ActivityFacade> facade;
  json outputs = json::array();  // every event written, in order (for the receive half)
  Sender(const std::string& name, const std::string& description, const json& options)
      : vector({{"name", name}, {"description", description}, {"options", options}, {"steps", json::array()}}),
        facade(std::make_unique<ActivityFacade>(options.dump())) {}

  json write(const json& event) {
    json r = json::parse(facade->write(event.dump(), false));
    json events = r.value("events", json::array());
    const json dropped = r["kind"] == "drop" ? r["reason"] : json(nullptr);
    vector["steps"].push_back({{"write", event}, {"expect", {{"sse", sse(events)}, {"dropped", dropped}}}});
    for (const json& e : events) outputs.push_back(e);
    return events;
  }
  json catchUp(const json& position) {
    json r = json::parse(facade->catchUp(position.dump()));
    vector["steps"].push_back({{"catchUp", position}, {"expect", {{"sse", sse(r["events"])}, {"modes", r["activities"]}}}});
    return r["events"];
  }
};

const json kOptions = {{"epoch", "epoch-1"}, {"digestEvery", 2}, {"snapshotRatio", 100}};

json position(const std::string& id, json lastSeq, json reason = nullptr) {
  return {{"messageId", id}, {"lastSeq", std::move(lastSeq)}, {"epoch", "epoch-1"}, {"reason", std::move(reason)}};
}

// The agent's stream: snapshots become deltas, its own deltas go on, one that
// fails suspends its activity until its next snapshot; its other members ride along.
Sender agentStream() {
  Sender s("agent-stream", "an agent's activity events through emitter.activities.write()", kOptions);
  json first = snap("m1", form(10, json::array()));
  first["timestamp"] = 1;
  first["metadata"] = {{"trace", "t-1"}};
  s.write(first);
  s.write(snap("m1", form(12, json::array())));
  s.write(delta("m1", json::array({op("add", "/items/-", "a")})));
  s.write(snap("m2", {{"step", 1}}));
  s.write(delta("m1", json::array({op("test", "/fields/amount", 99), op("replace", "/fields/amount", 1)})));
  s.write(delta("m1", json::array({op("replace", "/fields/amount", 2)})));
  s.write(snap("m1", form(15, json::array({"a", "b"}))));
  s.write(delta("m1", json::array({op("replace", "/fields/name", "Bo")})));
  return s;
}

Sender catchUps() {
  Sender s("catch-up", "catch-ups per activity: replay, current, snapshot; by array or header", kOptions);
  s.write(snap("m1", form(1, json::array())));
  s.write(snap("m2", {{"step", 1}}));
  for (int i = 2; i <= 4; ++i) s.write(snap("m1", form(i, json::array())));
  s.write(snap("m3", {{"step", 1}}));
  json listed = json::array({position("m1", 1), position("m2", 0), position("m9", 3)});
  s.catchUp({{"activities", listed}});
  s.catchUp({{"activities", "%5B%7B%22messageId%22%3A%22m1%22%2C%22lastSeq%22%3A2%2C%22epoch%22%3A%22epoch-1%22%7D%5D"}});
  s.catchUp({{"activities", json::array({position("m1", 3, "patch-failed"), position("m2", 0), position("m3", 0)})}});
  s.catchUp({{"activities", json::array({{{"messageId", "m1"}, {"lastSeq", 3}, {"epoch", "epoch-0"}}})}});
  s.catchUp(json::object());
  return s;
}

Sender forgotten() {
  json options = kOptions;
  options["maxActivities"] = 1;
  Sender s("forgotten", "maxActivities 1: an activity created after one was forgotten counts in an epoch of its own", options);
  s.write(snap("m1", {{"v", 1}}));
  s.write(snap("m1", {{"v", 2}}));
  s.write(snap("m2", {{"v", 1}}));
  s.write(snap("m1", {{"v", 9}}));
  return s;
}

json outcomeSummary(const Outcome& o) {
  json j = {{"kind", outcomeKindName(o.kind)}};
  if (!o.type.empty()) j["type"] = o.type;
  if (!o.messageId.empty()) j["messageId"] = o.messageId;
  if (o.kind == OutcomeKind::Resync || o.kind == OutcomeKind::Ignored || o.kind == OutcomeKind::Error)
    j[o.kind == OutcomeKind::Error ? "code" : "reason"] = codeName(o.reason);
  if (o.seq) j["seq"] = *o.seq;
  return j;
}

json activitiesOf(const SyncEngine& engine) {
  json out = json::array();
  for (const ActivityView& a : engine.activities()) {
    out.push_back({{"messageId", *a.messageId},
                   {"status", statusName(a.status)},
                   {"lastSeq", a.lastSeq ? json(*a.lastSeq) : json(nullptr)},
                   {"epoch", *a.epoch ? json(**a.epoch) : json(nullptr)},
                   {"content", *a.content}});
  }
  return out;
}

json receive(const std::string& name, const std::string& description, const std::vector<json>& steps) {
  Options options;
  options.activities = true;
  SyncEngine engine(options);
  json out = json::array();
  for (const json& step : steps) {
    std::vector<Outcome> outcomes;
    if (step.contains("feed")) engine.feed(step["feed"].get<std::string>(), outcomes);
    else engine.end(outcomes);
    json summary = json::array();
    for (const Outcome& o : outcomes) summary.push_back(outcomeSummary(o));
    json withExpect = step;
    withExpect["expect"] = {{"outcomes", summary}, {"activities", activitiesOf(engine)}};
    out.push_back(withExpect);
  }
  return {{"name", name}, {"description", description}, {"steps", out}};
}

json feed(const json& events) { return {{"feed", sse(events)}}; }

json receiveVectors(const Sender& stream, const Sender& forgot) {
  const json& o = stream.outputs;  // m1 s0, m1 d1, m1 d2, m2 s0, m1 d3 (the re-snapshot), m1 d4
  json all = json::array();
  std::vector<json> inOrder;
  for (const json& e : o) inOrder.push_back(feed(json::array({e})));
  all.push_back(receive("in-order", "the agent-stream sender's events, each applied", inOrder));
  all.push_back(receive("unknown-then-snapshot", "a delta before its activity's snapshot waits (gap); the snapshot heals",
                        {feed(json::array({o[1]})), feed(json::array({o[0]})), {{"end", true}}}));
  all.push_back(receive("duplicate-and-reorder", "a duplicate is ignored; a swapped pair is held, then applied",
                        {feed(json::array({o[0], o[1]})), feed(json::array({o[1]})), feed(json::array({o[4]})),
                         feed(json::array({o[2]})), feed(json::array({o[5]}))}));
  json drifted = o[0];
  drifted["content"] = {{"items", json::array()}};
  drifted["metadata"][kWireKey].erase("digest");
  all.push_back(receive("patch-failed", "the client's content is not the agent's: the delta fails, resync, the snapshot heals",
                        {feed(json::array({drifted})), feed(json::array({o[1]})), feed(json::array({o[0]}))}));
  all.push_back(receive("gap-at-end", "a lost delta, then the stream ends: the activity resyncs (gap)",
                        {feed(json::array({o[0], o[1]})), feed(json::array({o[4]})), {{"end", true}}}));
  std::vector<json> forgottenSteps;
  for (const json& e : forgot.outputs) forgottenSteps.push_back(feed(json::array({e})));
  all.push_back(receive("forgotten-epoch", "the forgotten sender's events: m1 again in an epoch of its own is taken", forgottenSteps));
  return all;
}

}  // namespace

TEST_CASE("activity vectors: regenerated output equals tests/vectors/activity_vectors.json", "[vectors][activity]") {
  Sender stream = agentStream();
  Sender caught = catchUps();
  Sender forgot = forgotten();
  json doc = {{"format", "agui-state-sync activity vectors (docs/wire.md section 11). send: for each vector, an emitter "
                         "created with `options`, whose activities are written each step's `write` event "
                         "(emitter.activities.write: the encoded events as `sse`, `dropped` the reason or null) or asked "
                         "each `catchUp` position (its activities' events as `sse`, `modes` per activity; the state is "
                         "current). receive: each step's SSE text (or the end of the stream) fed to a fresh receiver "
                         "with activities on; the outcomes (kind/type/messageId/reason|code/seq) and every activity "
                         "(messageId/status/lastSeq/epoch/content) after it"},
              {"send", json::array({stream.vector, caught.vector, forgot.vector})},
              {"receive", receiveVectors(stream, forgot)}};
  const std::string path = std::string(AGUI_SOURCE_DIR) + "/tests/vectors/activity_vectors.json";
  if (std::getenv("AGUI_UPDATE_VECTORS")) {
    std::ofstream(path) << doc.dump(1) << "\n";
    WARN("rewrote " << path);
  }
  json onDisk = agui_test::readJson(path);
  CHECK(onDisk == doc);
  // The vectors exercise what they claim.
  const std::string all = doc.dump();
  for (const char* needle : {"\"replay\"", "\"current\"", "\"snapshot\"", "\"precondition-failed\"", "\"patch-failed\"",
                             "\"duplicate\"", "\"reordered\"", "\"gap\"", "epoch-1.2", "\"timestamp\":1"})
    CHECK(all.find(needle) != std::string::npos);
}
