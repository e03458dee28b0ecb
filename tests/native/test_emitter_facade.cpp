// EmitterFacade: the JSON protocol the JS package's createStateEmitter uses,
// round-tripped into the receiver facade.
#include <catch2/catch.hpp>

#include "emitter_facade.h"
#include "facade.h"

#include <nlohmann/json.hpp>

using agui_sync::EmitterFacade;
using agui_sync::Facade;
using nlohmann::json;

namespace {
std::string frames(const json& events) {
  std::string out;
  for (const auto& e : events) out += "id: " + std::to_string(e["metadata"]["seq"].get<uint64_t>()) + "\ndata: " + e.dump() + "\n\n";
  return out;
}
}  // namespace

TEST_CASE("emitter facade: update, patch, replay and errors", "[emitter][facade]") {
  EmitterFacade em(R"({"epoch":"e1","digestEvery":2,"snapshotRatio":100,"guardedPaths":["/proposal"],"initialState":{"proposal":{"to":"a"}}})");
  REQUIRE(em.initError().empty());
  Facade client("");
  client.feed(frames(json::array({json::parse(em.snapshot())})));
  json r = json::parse(em.update(R"({"proposal":{"to":"b"},"n":1})"));
  REQUIRE(r["ok"] == true);
  REQUIRE(r["events"].size() == 1);
  CHECK(r["events"][0]["delta"][0]["op"] == "test");  // guarded path gets a precondition
  json lost = r["events"];                             // pretend this one is lost
  r = json::parse(em.patch(R"([{"op":"replace","path":"/n","value":2}])"));
  REQUIRE(r["ok"] == true);
  CHECK(r["events"][0]["metadata"].contains("digest"));  // every 2nd seq
  json res = json::parse(client.feed(frames(r["events"])));
  CHECK(res["outcomes"][0]["reason"] == "reordered");
  json replay = json::parse(em.replaySince(0, "e1"));
  REQUIRE(replay["events"].size() == 2);
  res = json::parse(client.feed(frames(replay["events"])));
  CHECK(res["status"] == "synced");
  CHECK(json::parse(client.stateJson()) == json::parse(em.stateJson()));
  CHECK(em.seq() == 2);
  CHECK(json::parse(em.replaySince(0, "other"))["events"][0]["type"] == "STATE_SNAPSHOT");
  CHECK(em.heartbeat() == ": hb 2\n\n");
  json bad = json::parse(em.patch(R"([{"op":"remove","path":"/missing"}])"));
  CHECK(bad["ok"] == false);
  CHECK(bad["code"] == "patch-failed");
  CHECK(json::parse(em.update("{"))["ok"] == false);
  CHECK(json::parse(em.update(std::string(100000, '[')))["ok"] == false);
  CHECK(em.seq() == 2);
}
