// The run's life (src/run/run_life.h), through the facade the drivers use:
// framing, resume modes, attach, grace, abort, a stored log's commits, and a
// seeded property over random interleavings of agent events, clients coming
// and going, store answers and timers: every client that stays sees each
// event once, in order, and a client that resumes from any id it received
// ends with exactly the bytes of a client that never left.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "facade/run_facade.h"

using agui_sync::RunFacade;
using nlohmann::json;

namespace {

json step(RunFacade& run, const json& input) {
  json out = json::parse(run.step(input.dump()));
  REQUIRE(out["ok"] == true);
  return out["actions"];
}

json feed(RunFacade& run, const std::string& bytes) {
  json out = json::parse(run.feed(bytes));
  REQUIRE(out["ok"] == true);
  return out["actions"];
}

std::string sse(const json& event) { return "data: " + event.dump() + "\n\n"; }

json stateDelta(int seq) {
  return {{"type", "STATE_DELTA"}, {"delta", json::array()}, {"metadata", {{"agui-state-sync", {{"seq", seq}, {"epoch", "e1"}}}}}};
}

// The bytes each client got, from a list of actions; closed clients and heads noted.
struct Clients {
  std::map<int64_t, std::string> got;
  std::map<int64_t, std::string> mode;
  std::set<int64_t> closed;
  std::vector<std::string> other;
  void take(const json& actions) {
    for (const auto& a : actions) {
      std::string what = a["do"];
      if (what == "send")
        for (auto c : a["to"]) got[c.get<int64_t>()] += a["text"].get<std::string>();
      else if (what == "head") mode[a["to"][0].get<int64_t>()] = a["mode"];
      else if (what == "close")
        for (auto c : a["to"]) closed.insert(c.get<int64_t>());
      else other.push_back(a.dump());
    }
  }
};

// The events in `text`, without heartbeats: "id: k:n" lines and data, as written.
std::string withoutBeats(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find("\n\n", at);
    if (end == std::string::npos) end = text.size();
    std::string frame = text.substr(at, end + 2 - at);
    if (frame.rfind(": hb", 0) != 0) out += frame;
    at = end + 2;
  }
  return out;
}

std::string options(const std::string& extra = "") {
  return "{\"key\":\"K\",\"credentials\":[\"Bearer a\",null],\"graceMs\":1000" + extra + "}";
}

}  // namespace

TEST_CASE("a run frames the agent's events with <key>:<n> and sends them to its starter", "[run]") {
  RunFacade run(options());
  REQUIRE(json::parse(run.initResult())["ok"] == true);
  Clients c;
  c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));
  c.take(feed(run, sse({{"type", "RUN_STARTED"}, {"threadId", "t"}, {"runId", "r"}}) + sse(stateDelta(3)) + ": hb 3\n\n"));
  CHECK(c.got[1] == "id: K:1\ndata: {\"runId\":\"r\",\"threadId\":\"t\",\"type\":\"RUN_STARTED\"}\n\n"
                    "id: K:2\ndata: " + stateDelta(3).dump() + "\n\n: hb 3\n\n");
  json info = json::parse(run.infoJson());
  CHECK(info["lastN"] == 2);
  CHECK(info["startedN"] == 1);
  CHECK(info["sentSeq"] == 3);
}

TEST_CASE("a resume whose position lines up gets the logged events byte for byte; one that does not is caught up", "[run]") {
  RunFacade run(options());
  Clients c;
  c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));
  c.take(feed(run, sse({{"type", "RUN_STARTED"}}) + sse(stateDelta(1)) + sse({{"type", "TEXT_MESSAGE_START"}, {"messageId", "m"}}) +
                       sse(stateDelta(2)) + sse({{"type", "TEXT_MESSAGE_CONTENT"}, {"messageId", "m"}, {"delta", "hi"}})));
  c.take(step(run, {{"on", "left"}, {"client", 1}, {"now", 0}}));
  // At seq 1 after event 2, same epoch: exact.
  c.take(step(run, {{"on", "join"}, {"client", 2}, {"afterN", 2}, {"epoch", "e1"}, {"position", {{"lastSeq", 1}, {"epoch", "e1"}}}}));
  CHECK(c.mode[2] == "exact");
  CHECK(withoutBeats(c.got[2]) == withoutBeats(c.got[1]).substr(withoutBeats(c.got[1]).find("id: K:3")));
  // Resyncing: asked for its catch-up first, then the non-state events after it.
  json asked = step(run, {{"on", "join"}, {"client", 3}, {"afterN", 2}, {"epoch", "e1"}, {"position", {{"reason", "gap"}}}});
  REQUIRE(asked.size() == 1);
  CHECK(asked[0]["do"] == "catch-up");
  c.take(step(run, {{"on", "join"}, {"client", 3}, {"afterN", 2}, {"epoch", "e1"}, {"position", {{"reason", "gap"}}},
                    {"catchUp", {"{\"type\":\"STATE_SNAPSHOT\"}"}}}));
  CHECK(c.mode[3] == "caught-up");
  CHECK(withoutBeats(c.got[3]) == "id: K:2\ndata: {\"type\":\"STATE_SNAPSHOT\"}\n\n"
                                  "id: K:3\ndata: {\"messageId\":\"m\",\"type\":\"TEXT_MESSAGE_START\"}\n\n"
                                  "id: K:5\ndata: {\"delta\":\"hi\",\"messageId\":\"m\",\"type\":\"TEXT_MESSAGE_CONTENT\"}\n\n");
  // An id this stream never sent is refused, with nothing sent.
  json refused = step(run, {{"on", "join"}, {"client", 4}, {"afterN", 9}});
  CHECK(refused[0]["do"] == "refuse");
  CHECK(refused[0]["status"] == 400);
}

TEST_CASE("an ended run resumes exactly only while the thread is where the run left it", "[run]") {
  RunFacade run(options());
  Clients c;
  c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));
  c.take(feed(run, sse({{"type", "RUN_STARTED"}}) + sse(stateDelta(1)) + sse(stateDelta(2)) + sse({{"type", "RUN_FINISHED"}})));
  c.take(step(run, {{"on", "ended"}}));
  const json at2 = {{"lastSeq", 1}, {"epoch", "e1"}};
  // The thread is still at the run's last seq: the logged events, byte for byte.
  c.take(step(run, {{"on", "join"}, {"client", 2}, {"afterN", 2}, {"epoch", "e1"}, {"seq", 2}, {"position", at2}}));
  CHECK(c.mode[2] == "exact");
  // Another run moved the thread on (its activities too): the client is caught up on the thread.
  json asked = step(run, {{"on", "join"}, {"client", 3}, {"afterN", 2}, {"epoch", "e1"}, {"seq", 5}, {"position", at2}});
  REQUIRE(asked.size() == 1);
  CHECK(asked[0]["do"] == "catch-up");
  c.take(step(run, {{"on", "join"}, {"client", 3}, {"afterN", 2}, {"epoch", "e1"}, {"seq", 5}, {"position", at2},
                    {"catchUp", {"{\"type\":\"STATE_SNAPSHOT\"}"}}}));
  CHECK(c.mode[3] == "caught-up");
  CHECK(withoutBeats(c.got[3]).find("STATE_SNAPSHOT") != std::string::npos);
}

TEST_CASE("a caught-up client gets every sequenced event past where its catch-up left each line", "[run]") {
  // An attach on a followed copy: its catch-up is read from the store, which
  // may be behind the copy's log. What the log has past it must still come:
  // an activity's last change is named by no heartbeat.
  RunFacade run(options());
  Clients c;
  c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));
  auto activity = [](int seq) {
    return json{{"type", "ACTIVITY_DELTA"}, {"messageId", "m1"}, {"activityType", "card"}, {"patch", json::array()},
                {"metadata", {{"agui-state-sync", {{"seq", seq}, {"baseSeq", seq - 1}, {"epoch", "a1"}}}}}};
  };
  c.take(feed(run, sse({{"type", "RUN_STARTED"}}) + sse(stateDelta(1)) + sse(activity(2)) + sse(stateDelta(2)) +
                       sse(activity(3))));
  auto snap = [](const char* type, const char* line, int seq, const char* epoch) {
    json e = {{"type", type}, {"metadata", {{"agui-state-sync", {{"seq", seq}, {"epoch", epoch}}}}}};
    if (std::string(type) == "ACTIVITY_SNAPSHOT") e["messageId"] = line;
    return e.dump();
  };
  // Its catch-up had the state at 1 and m1 at 2: it gets the state delta 2 and m1's delta 3, nothing older.
  json behind = {snap("STATE_SNAPSHOT", "", 1, "e1"), snap("ACTIVITY_SNAPSHOT", "m1", 2, "a1")};
  c.take(step(run, {{"on", "join"}, {"client", 2}, {"attach", true}, {"catchUp", behind}}));
  CHECK(c.mode[2] == "caught-up");
  const std::string got = withoutBeats(c.got[2]);
  CHECK(got.find(stateDelta(2).dump()) != std::string::npos);
  CHECK(got.find(activity(3).dump()) != std::string::npos);
  CHECK(got.find(stateDelta(1).dump()) == std::string::npos);
  CHECK(got.find(activity(2).dump()) == std::string::npos);
  // A catch-up already past them (or in another epoch): none of the logged sequenced events.
  json current = {snap("STATE_SNAPSHOT", "", 2, "e1"), snap("ACTIVITY_SNAPSHOT", "m1", 3, "a1")};
  c.take(step(run, {{"on", "join"}, {"client", 3}, {"attach", true}, {"catchUp", current}}));
  CHECK(withoutBeats(c.got[3]).find("STATE_DELTA") == std::string::npos);
  CHECK(withoutBeats(c.got[3]).find("ACTIVITY_DELTA") == std::string::npos);
  json other = {snap("STATE_SNAPSHOT", "", 0, "e9")};
  c.take(step(run, {{"on", "join"}, {"client", 4}, {"attach", true}, {"catchUp", other}}));
  CHECK(withoutBeats(c.got[4]).find("STATE_DELTA") == std::string::npos);
}

TEST_CASE("a followed copy never abandons its holder's run, and numbers nothing behind its log (fuzz_run_life)", "[run]") {
  RunFacade run(R"({"key":"K","credentials":["Bearer a",null],"graceMs":100,"stored":true,"followed":true})");
  step(run, {{"on", "join"}, {"client", 1}, {"starter", true}});
  json entries = json::array();
  for (int n = 1; n <= 2; ++n)
    entries.push_back({{"n", n}, {"seq", nullptr}, {"flags", ""}, {"text", "id: K:" + std::to_string(n) + "\ndata: {}\n\n"}});
  step(run, {{"on", "logged"}, {"entries", entries}});
  step(run, {{"on", "left"}, {"client", 1}, {"now", 0}});
  // Only the holder may abandon the run: a copy told nobody is elsewhere does nothing.
  CHECK(step(run, {{"on", "present"}, {"elsewhere", false}, {"now", 0}}).empty());
  step(run, {{"on", "committed"}, {"n", 4}});
  json info = json::parse(run.infoJson());
  CHECK(info["lastN"] == 2);
  CHECK(info["finished"] == false);
}

TEST_CASE("the grace period aborts a run nobody came back to, unless it carries an approval", "[run]") {
  for (bool keep : {false, true}) {
    RunFacade run(options(keep ? ",\"keep\":true" : ""));
    Clients c;
    c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));
    c.take(feed(run, sse({{"type", "RUN_STARTED"}})));
    json left = step(run, {{"on", "left"}, {"client", 1}, {"now", 5}});
    if (keep) {
      CHECK(left.empty());
      continue;
    }
    REQUIRE(left[0]["do"] == "arm");
    CHECK(left[0]["at"] == 1005);
    CHECK(step(run, {{"on", "timer"}, {"now", 100}})[0]["do"] == "arm");  // early: the same deadline
    json over = step(run, {{"on", "timer"}, {"now", 1005}});
    CHECK(over[0]["do"] == "stop-upstream");
    CHECK(over.back()["do"] == "done");
    CHECK(json::parse(run.infoJson())["finished"] == true);
    // A late resume learns the run ended: its terminal event again.
    Clients late;
    late.take(step(run, {{"on", "join"}, {"client", 2}, {"afterN", 2}}));
    CHECK(late.got[2].find("run-aborted") != std::string::npos);
    CHECK(late.closed.count(2) == 1);
  }
}

TEST_CASE("an abort needs the starter's credentials", "[run]") {
  RunFacade run(options());
  step(run, {{"on", "join"}, {"client", 1}, {"starter", true}});
  feed(run, sse({{"type", "RUN_STARTED"}}));
  json refused = step(run, {{"on", "abort"}, {"reason", "client"}, {"credentials", {"Bearer b", nullptr}}});
  CHECK(refused[0]["do"] == "refuse");
  CHECK(refused[0]["code"] == "not-authorized");
  CHECK(json::parse(run.infoJson())["finished"] == false);
  json aborted = step(run, {{"on", "abort"}, {"reason", "client"}, {"credentials", {"Bearer a", nullptr}}});
  CHECK(aborted[0]["do"] == "stop-upstream");
  CHECK(json::parse(run.infoJson())["finished"] == true);
}

TEST_CASE("an attach waits for RUN_STARTED and then gets it first, its catch-up right after", "[run]") {
  RunFacade run(options());
  step(run, {{"on", "join"}, {"client", 1}, {"starter", true}});
  CHECK(step(run, {{"on", "join"}, {"client", 2}, {"attach", true}}).empty());
  json started = feed(run, sse({{"type", "RUN_STARTED"}}));
  CHECK(started.back()["do"] == "rejoin");
  feed(run, sse(stateDelta(1)) + sse({{"type", "CUSTOM"}, {"name", "x"}}));
  Clients c;
  c.take(step(run, {{"on", "join"}, {"client", 2}, {"attach", true}, {"catchUp", {"{\"type\":\"STATE_SNAPSHOT\"}"}}}));
  CHECK(withoutBeats(c.got[2]) == "id: K:1\ndata: {\"type\":\"RUN_STARTED\"}\n\n"
                                  "id: K:0\ndata: {\"type\":\"STATE_SNAPSHOT\"}\n\n"
                                  "id: K:3\ndata: {\"name\":\"x\",\"type\":\"CUSTOM\"}\n\n");
}

TEST_CASE("a stored log publishes only what the store took; a lost lease ends the stream with run-lost", "[run]") {
  RunFacade run(options(",\"stored\":true"));
  Clients c;
  c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));
  json first = feed(run, sse({{"type", "RUN_STARTED"}}) + sse(stateDelta(1)));
  REQUIRE(first.size() == 1);  // one append at a time: the delta waits behind RUN_STARTED's
  CHECK(first[0]["do"] == "append");
  CHECK(first[0]["entries"].size() == 1);
  CHECK(first[0]["entries"][0]["flags"] == "r");
  CHECK(c.got[1].empty());  // nothing reaches a client before the store took it
  c.take(step(run, {{"on", "committed"}, {"n", 1}}));
  CHECK(withoutBeats(c.got[1]) == "id: K:1\ndata: {\"type\":\"RUN_STARTED\"}\n\n");
  REQUIRE(c.other.back().find("\"append\"") != std::string::npos);  // the next batch: the delta
  CHECK(c.other.back().find("\"flags\":\"s\"") != std::string::npos);
  CHECK(feed(run, sse({{"type", "CUSTOM"}})).empty());  // queued behind the append under way
  c.take(step(run, {{"on", "lost"}, {"entries", json::array()}}));
  CHECK(c.got[1].find("run-lost") != std::string::npos);
  CHECK(c.got[1].find("id: K:2") != std::string::npos);  // the uncommitted events' first number is the run-lost one's
  CHECK(c.got[1].find("STATE_DELTA") == std::string::npos);
  CHECK(c.closed.count(1) == 1);
}

TEST_CASE("bad steps are failures with a code, and change nothing", "[run]") {
  RunFacade run(options());
  for (const char* bad : {"", "{", "[]", "{\"on\":\"nope\"}", "{\"on\":\"join\"}", "{\"on\":\"lost\",\"entries\":[{\"n\":0}]}",
                          "{\"on\":\"committed\",\"n\":-1}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"}) {
    json out = json::parse(run.step(bad));
    CHECK(out["ok"] == false);
    CHECK(out["code"].is_string());
  }
  CHECK(json::parse(RunFacade("{}").initResult())["ok"] == false);
  CHECK(json::parse(RunFacade("{\"key\":\"k\",\"graceMs\":-1}").initResult())["code"] == "invalid-options");
  CHECK(json::parse(run.infoJson())["lastN"] == 0);
}

TEST_CASE("property: whatever the interleaving, a client that resumes from any id it got ends with a stayer's bytes", "[run][property]") {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    const bool stored = seed % 2 == 0;
    RunFacade run(options(stored ? ",\"stored\":true,\"maxEvents\":100000" : ",\"maxEvents\":100000"));
    Clients c;
    c.take(step(run, {{"on", "join"}, {"client", 0}, {"starter", true}}));  // stays to the end
    c.take(step(run, {{"on", "join"}, {"client", 1}, {"starter", true}}));  // comes and goes
    int64_t next = 2, current = 1, seq = 0;
    std::string got;                 // what the coming-and-going client holds, across its connections
    uint64_t lastN = 0;
    json pendingAppend;
    c.take(feed(run, sse({{"type", "RUN_STARTED"}})));
    for (int i = 0; i < 60; ++i) {
      const int roll = static_cast<int>(rng() % 10);
      json actions;
      if (roll < 5) actions = feed(run, roll < 3 ? sse(stateDelta(++seq)) : sse({{"type", "CUSTOM"}, {"value", i}}));
      else if (roll < 7 && stored) actions = step(run, {{"on", "committed"}, {"n", json::parse(run.infoJson())["lastN"].get<int64_t>() + 1000}});
      else if (roll < 9 && current >= 0) {
        // The client is cut somewhere in what it got: it keeps the whole events it received.
        std::string text = c.got[current];
        size_t cut = text.empty() ? 0 : rng() % (text.size() + 1);
        std::string kept = text.substr(0, cut);
        kept = kept.substr(0, kept.rfind("\n\n") == std::string::npos ? 0 : kept.rfind("\n\n") + 2);
        got += withoutBeats(kept);
        size_t id = got.rfind("id: K:");
        lastN = id == std::string::npos ? 0 : std::stoull(got.substr(id + 6));
        actions = step(run, {{"on", "left"}, {"client", current}, {"now", i}});
        current = -1;
      } else if (current < 0) {
        current = next++;
        actions = step(run, {{"on", "join"}, {"client", current}, {"afterN", lastN}});
        if (!actions.empty() && actions[0]["do"] == "catch-up") FAIL("a client that keeps no position resumes exactly");
      }
      // Stored appends: the store answers later; committed() above names how far.
      for (const auto& a : actions)
        if (a["do"] == "append") pendingAppend = a;
      c.take(actions);
    }
    if (current < 0) {
      current = next++;
      c.take(step(run, {{"on", "join"}, {"client", current}, {"afterN", lastN}}));
    }
    c.take(step(run, {{"on", "ended"}}));
    for (int i = 0; stored && i < 100 && json::parse(run.infoJson())["finished"] == true && c.closed.count(0) == 0; ++i)
      c.take(step(run, {{"on", "committed"}, {"n", 1 << 30}}));
    got += withoutBeats(c.got[current]);
    INFO("seed " << seed);
    REQUIRE(c.closed.count(0) == 1);
    CHECK(got == withoutBeats(c.got[0]));
  }
}

TEST_CASE("a followed copy that read too late ends its streams without an event: its clients resume on a fresh copy", "[run]") {
  RunFacade run(options(",\"followed\":true"));
  auto entry = [](int n, const char* flags) {
    return json{{"n", n}, {"seq", nullptr}, {"flags", flags}, {"text", "id: K:" + std::to_string(n) + "\ndata: {}\n\n"}};
  };
  Clients c;
  c.take(step(run, {{"on", "logged"}, {"entries", {entry(1, "r"), entry(2, "")}}}));
  c.take(step(run, {{"on", "join"}, {"client", 1}, {"afterN", 2}}));
  REQUIRE(c.mode[1] == "exact");
  json gap = step(run, {{"on", "logged"}, {"entries", {entry(5, ""), entry(6, "")}}});
  c.take(gap);
  CHECK(gap[0]["do"] == "stop-upstream");
  CHECK(c.closed.count(1) == 1);
  CHECK(c.got[1].find("K:5") == std::string::npos);  // nothing past the gap: the client resumes from K:2
  CHECK(gap.back()["do"] == "done");
}
