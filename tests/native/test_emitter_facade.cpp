// EmitterFacade: the JSON protocol the JS package's createStateEmitter uses,
// round-tripped into the receiver facade.
#include <catch2/catch.hpp>

#include "wire/wire.h"
#include "facade/emitter_facade.h"
#include "facade/prompt_facade.h"
#include "facade/sync_facade.h"
#include "random_state.h"

#include <nlohmann/json.hpp>

using agui_sync::EmitterFacade;
using agui_sync::kWireKey;
using agui_sync::renderPromptParts;
using agui_sync::SyncFacade;
using nlohmann::json;

namespace {
std::string frames(const json& events) {
  std::string out;
  for (const auto& e : events) out += "id: " + std::to_string(e["metadata"][kWireKey]["seq"].get<uint64_t>()) + "\ndata: " + e.dump() + "\n\n";
  return out;
}
}  // namespace

TEST_CASE("emitter facade: update, patch, replay and errors", "[emitter][facade]") {
  EmitterFacade em(R"({"epoch":"e1","digestEvery":2,"snapshotRatio":100,"guardedPaths":["/proposal"],"initialState":{"proposal":{"to":"a"}}})");
  REQUIRE(!em.initFailure());
  SyncFacade client("");
  client.feed(frames(json::array({json::parse(em.snapshot())})));
  json r = json::parse(em.update(R"({"proposal":{"to":"b"},"n":1})"));
  REQUIRE(r["ok"] == true);
  REQUIRE(r["events"].size() == 1);
  CHECK(r["events"][0]["delta"][0]["op"] == "test");  // guarded path gets a precondition
  json lost = r["events"];                             // pretend this one is lost
  r = json::parse(em.patch(R"([{"op":"replace","path":"/n","value":2}])"));
  REQUIRE(r["ok"] == true);
  CHECK(r["events"][0]["metadata"][kWireKey].contains("digest"));  // every 2nd seq
  json res = json::parse(client.feed(frames(r["events"])));
  CHECK(res["outcomes"][0]["reason"] == "reordered");
  json replay = json::parse(em.replay(R"({"seq":0,"epoch":"e1"})"));
  REQUIRE(replay["events"].size() == 2);
  res = json::parse(client.feed(frames(replay["events"])));
  CHECK(res["status"] == "synced");
  CHECK(json::parse(client.stateJson()) == json::parse(em.stateJson()));
  CHECK(em.seq() == 2);
  CHECK(json::parse(em.replay(R"({"seq":0,"epoch":"other"})"))["events"][0]["type"] == "STATE_SNAPSHOT");
  CHECK(em.heartbeat() == ": hb 2\n\n");
  json bad = json::parse(em.patch(R"([{"op":"remove","path":"/missing"}])"));
  CHECK(bad["ok"] == false);
  CHECK(bad["code"] == "patch-failed");
  CHECK(json::parse(em.update("{"))["ok"] == false);
  CHECK(json::parse(em.update(std::string(100000, '[')))["ok"] == false);
  CHECK(em.seq() == 2);
}

TEST_CASE("emitter facade: replay request, epoch null vs empty, skip held seqs", "[emitter][facade]") {
  EmitterFacade em(R"({"epoch":"e1","snapshotRatio":100})");
  REQUIRE(!em.initFailure());
  for (int i = 1; i <= 5; ++i) REQUIRE(json::parse(em.patch(json::array({{{"op", "add"}, {"path", "/k" + std::to_string(i)}, {"value", i}}}).dump()))["ok"] == true);
  auto seqs = [](const json& r) {
    std::vector<uint64_t> out;
    for (const auto& e : r["events"]) out.push_back(e["metadata"][kWireKey]["seq"].get<uint64_t>());
    return out;
  };
  // epoch absent or null: not checked; "" is an epoch like any other (not ours).
  CHECK(seqs(json::parse(em.replay(R"({"seq":2})"))) == std::vector<uint64_t>{3, 4, 5});
  CHECK(seqs(json::parse(em.replay(R"({"seq":2,"epoch":null})"))) == std::vector<uint64_t>{3, 4, 5});
  json empty = json::parse(em.replay(R"({"seq":2,"epoch":""})"));
  REQUIRE(empty["events"].size() == 1);
  CHECK(empty["events"][0]["type"] == "STATE_SNAPSHOT");
  CHECK(json::parse(em.replay(R"({"seq":5,"epoch":"e1"})"))["events"].empty());
  // skip: held seqs are left out; the first missed delta never is.
  CHECK(seqs(json::parse(em.replay(R"({"seq":1,"epoch":"e1","skip":[3,5]})"))) == std::vector<uint64_t>{2, 4});
  CHECK(seqs(json::parse(em.replay(R"({"seq":1,"epoch":"e1","skip":[2,3,4,5]})"))) == std::vector<uint64_t>{2});
  CHECK(seqs(json::parse(em.replay(R"({"seq":1,"skip":[1,99]})"))) == std::vector<uint64_t>{2, 3, 4, 5});
  // Bad requests: an error, never a guess.
  for (const char* bad : {"", "{", "[]", R"({"epoch":"e1"})", R"({"seq":-1})", R"({"seq":1.5})", R"({"seq":9007199254740992})",
                          R"({"seq":1,"epoch":7})", R"({"seq":1,"skip":"3"})", R"({"seq":1,"skip":[3,"4"]})",
                          R"({"seq":1,"skip":[-3]})"}) {
    INFO(bad);
    json r = json::parse(em.replay(bad));
    CHECK(r["ok"] == false);
    CHECK(r["code"] == "invalid-request");
    CHECK_FALSE(r.contains("events"));
  }
  CHECK(json::parse(em.replay(R"({"seq":1,"skip":[)" + std::string(100000, '[') + "]}"))["code"] == "invalid-request");
}

TEST_CASE("facade result: the resync request lists the held seqs; a replay skipping them converges", "[emitter][facade]") {
  EmitterFacade em(R"({"epoch":"e1","snapshotRatio":100})");
  SyncFacade client(R"({"maxGapEvents":100})");
  client.feed(frames(json::array({json::parse(em.snapshot())})));
  std::vector<json> sent;
  for (int i = 1; i <= 6; ++i) {
    json r = json::parse(em.patch(json::array({{{"op", "add"}, {"path", "/k" + std::to_string(i)}, {"value", i}}}).dump()));
    sent.push_back(r["events"][0]);
  }
  client.feed(frames(json::array({sent[0], sent[3], sent[5]})));  // seqs 2, 3, 5 lost
  json status = json::parse(client.statusJson());
  CHECK(status["resync"].is_null());
  CHECK(status["pending"] == 2);
  json ended = json::parse(client.end());
  REQUIRE(ended["resync"].is_object());
  CHECK(ended["resync"]["reason"] == "gap");
  CHECK(ended["resync"]["lastSeq"] == 1);
  CHECK(ended["resync"]["held"] == json::array({4, 6}));
  client.reset();
  json request = {{"seq", ended["resync"]["lastSeq"]}, {"epoch", "e1"}, {"skip", ended["resync"]["held"]}};
  json replay = json::parse(em.replay(request.dump()));
  REQUIRE(replay["events"].size() == 3);  // 2, 3 and 5; 4 and 6 are held by the client
  CHECK(replay["events"][0]["metadata"][kWireKey]["seq"] == 2);
  CHECK(replay["events"][1]["metadata"][kWireKey]["seq"] == 3);
  CHECK(replay["events"][2]["metadata"][kWireKey]["seq"] == 5);
  json res = json::parse(client.feed(frames(replay["events"])));
  CHECK(res["status"] == "synced");
  CHECK(res["lastSeq"] == 6);
  CHECK(res["resync"].is_null());
  CHECK(json::parse(client.stateJson()) == json::parse(em.stateJson()));

  // A resync with nothing held lists an empty array.
  SyncFacade fresh("");
  fresh.feed(frames(json::array({json::parse(em.snapshot())})));
  json bad = json::parse(fresh.feed("id: 9\ndata: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"remove\",\"path\":\"/nope\"}],\"metadata\":{\"seq\":7,\"baseSeq\":6,\"epoch\":\"e1\"}}\n\n"));
  REQUIRE(bad["resync"].is_object());
  CHECK(bad["resync"]["held"] == json::array());
}

TEST_CASE("emitter facade: options of the wrong type are refused, not ignored", "[emitter][facade]") {
  // Every binding (WASM, Python) gets the verdict from here; before, a bad
  // value was silently replaced by the default.
  for (const char* options : {R"({"digestEvery":-1})", R"({"startSeq":1.5})", R"({"maxDepth":0})",
                              R"({"snapshotRatio":"x"})", R"({"replayMaxEvents":"10"})", R"({"epoch":5})",
                              R"({"testAll":1})", R"({"guardedPaths":"/a"})", R"({"guardedPaths":["/a",2]})",
                              R"({"editHistory":true})"}) {
    INFO(options);
    EmitterFacade em(options);
    REQUIRE(em.initFailure());
    CHECK(em.initFailure()->code == agui_sync::Code::InvalidOptions);
    CHECK(json::parse(em.initResult())["code"] == "invalid-options");
  }
  // Absent or null keeps the default; the valid forms the JS package sends still pass.
  for (const char* options : {R"({})", R"({"digestEvery":null,"epoch":null,"guardedPaths":null})",
                              R"({"startSeq":0,"digestEvery":0,"maxDepth":1,"snapshotRatio":-0.5,"epoch":"",)"
                              R"("testAll":false,"guardedPaths":[],"replayMaxEvents":3,"editHistory":0})"}) {
    INFO(options);
    CHECK(!EmitterFacade(options).initFailure());
  }
}

TEST_CASE("emitter facade: catchUp decides current, replay or snapshot from the client's position", "[emitter][facade]") {
  EmitterFacade em(R"({"epoch":"e1","snapshotRatio":100})");
  REQUIRE(!em.initFailure());
  for (int i = 1; i <= 3; ++i) REQUIRE(json::parse(em.update(json{{"n", i}}.dump()))["ok"] == true);
  auto answer = [&](const json& position) { return json::parse(em.catchUp(position.dump())); };
  CHECK(answer({{"lastSeq", 3}, {"epoch", "e1"}})["mode"] == "current");
  const json replay = answer({{"lastSeq", 1}, {"epoch", "e1"}, {"held", {3}}});
  CHECK(replay["mode"] == "replay");
  REQUIRE(replay["events"].size() == 1);  // seq 3 is held: only seq 2 goes
  CHECK(replay["events"][0]["metadata"][kWireKey]["seq"] == 2);
  CHECK(answer({{"lastSeq", nullptr}, {"epoch", "e1"}})["mode"] == "snapshot");
  CHECK(answer({{"lastSeq", 1}, {"epoch", "other"}})["mode"] == "snapshot");
  CHECK(answer({{"lastSeq", 1}, {"epoch", nullptr}})["mode"] == "snapshot");  // null is "", not ours
  CHECK(answer({{"lastSeq", 1}, {"epoch", "e1"}, {"reason", "digest-mismatch"}})["mode"] == "snapshot");
  CHECK(answer({{"lastSeq", 1}, {"epoch", "e1"}, {"reason", "gap"}})["mode"] == "replay");  // a gap heals by replay
  CHECK(answer({{"lastSeq", 1}, {"epoch", "e1"}, {"reason", "not-a-code"}})["mode"] == "replay");
  CHECK(answer({{"lastSeq", -1}, {"epoch", "e1"}})["code"] == "invalid-request");
  CHECK(answer({{"lastSeq", 1}, {"held", "x"}})["code"] == "invalid-request");
  CHECK(json::parse(em.catchUp("[1]"))["code"] == "invalid-request");
  EmitterFacade bare(R"({"epoch":""})");
  CHECK(json::parse(bare.catchUp(R"({"lastSeq":0,"epoch":null})"))["mode"] == "current");
}

TEST_CASE("emitter facade: renderPrompt renders the emitter's own state, byte for byte as from its JSON", "[emitter][facade][prompt]") {
  const char* optionSets[] = {"", R"({"datamark":"^","maxBytes":400})", R"({"untrusted":["/a"],"tag":"s"})",
                              R"({"include":["/b"],"maxStringBytes":16,"maxArrayItems":2})"};
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    agui_test::RandomState rnd(seed);
    json state = json::object();
    for (const char* key : {"a", "b", "c"}) state[key] = rnd.value(4);
    EmitterFacade f(json{{"initialState", state}}.dump());
    for (const char* options : optionSets) {
      INFO("seed " << seed << " options " << options);
      CHECK(f.renderPrompt(options) == renderPromptParts(state.dump(), options));
    }
  }
  EmitterFacade f("{}");
  CHECK(json::parse(f.renderPrompt(R"({"maxDepth":0})"))["code"] == "invalid-options");
}

TEST_CASE("emitter facade: renderPrompt marks what client edits wrote under untrusted auto", "[emitter][facade][prompt]") {
  EmitterFacade f(R"({"initialState":{"form":{"note":"hi"},"plan":"p"}})");
  const std::string edit = R"([{"editId":"tab:1","baseSeq":0,"ops":[{"op":"replace","path":"/form/note","value":"mine"}]}])";
  REQUIRE(json::parse(f.applyEdits(edit, "{}", ""))["results"][0]["status"] == "applied");
  const json state = json::parse(f.stateJson());
  // The emitter's provenance stands in for userWritten; given ones win.
  CHECK(f.renderPrompt(R"({"untrusted":"auto"})") ==
        renderPromptParts(state.dump(), R"({"untrusted":"auto","userWritten":["/form/note"]})"));
  CHECK(f.renderPrompt(R"({"untrusted":"auto","userWritten":["/plan"]})") ==
        renderPromptParts(state.dump(), R"({"untrusted":"auto","userWritten":["/plan"]})"));
  CHECK(f.renderPrompt(R"({"untrusted":"auto"})") != renderPromptParts(state.dump(), R"({"untrusted":"auto"})"));
}
