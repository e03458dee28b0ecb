// RelayFacade + CursorFacade::writeReceived: the proxy's one-module route must
// write exactly what the two-module route writes (a SyncFacade's Result, each
// applied state's event written out and handed to planWrite, as
// js/src/server/upstream-cursor.js did). Two threads are driven side by side
// over seeded upstream streams: sequenced snapshots and deltas, deltas that do
// not apply, reordered ones (an event that frees held deltas applies several
// states in one step), other events, random chunking, and another writer
// moving the emitters meanwhile (the cursor goes out of step and rebases).
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"
#include "facade/relay_facade.h"
#include "facade/sync_facade.h"

using agui_sync::CursorFacade;
using agui_sync::EmitterFacade;
using agui_sync::RelayFacade;
using agui_sync::SyncFacade;
using nlohmann::json;

namespace {

// planWrite's answer, reduced to what a caller acts on.
json reduced(const std::string& text) {
  const json r = json::parse(text);
  if (r["ok"] != true) return {{"failed", r["code"]}};
  if (r["kind"] != "write") return {{"kind", r["kind"]}};
  if (r["landed"] == -1) return {{"landed", -1}, {"code", r["failure"]["code"]}};
  return {{"landed", r["landed"]}, {"events", r["events"]}};
}

// A seeded upstream: SSE frames of sequenced state events under /a, now and then
// a delta that does not apply, a text event, or two deltas swapped.
std::vector<std::string> upstreamFrames(std::mt19937& rng, int events) {
  std::vector<json> out;
  uint64_t seq = 0;
  for (int step = 0; step < events; ++step) {
    const std::string key = "/a/" + std::to_string(rng() % 5);
    json event;
    const unsigned pick = rng() % 10;
    if (pick < 2 || seq == 0) {
      json a = json::object();
      for (int i = 0; i < 3; ++i) a[std::to_string(rng() % 5)] = static_cast<int>(rng() % 100);
      event = {{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", a}, {"step", step}, {"pad", std::string(100, 'p')}}}, {"seq", ++seq}};
    } else if (pick == 2) {
      event = {{"type", "TEXT_MESSAGE_CONTENT"}, {"messageId", "m"}, {"delta", "hi"}};
    } else {
      const bool remove = pick == 3;  // may not apply: the key may be missing
      json op = remove ? json{{"op", "remove"}, {"path", key}} : json{{"op", "add"}, {"path", key}, {"value", step}};
      event = {{"type", "STATE_DELTA"}, {"delta", json::array({op})}, {"base_seq", seq}, {"seq", seq + 1}};
      ++seq;
    }
    out.push_back(event);
    if (out.size() >= 2 && rng() % 8 == 0 && out[out.size() - 2].contains("seq")) std::swap(out[out.size() - 1], out[out.size() - 2]);
  }
  std::vector<std::string> frames;
  for (const json& e : out) frames.push_back("data: " + e.dump() + "\n\n");
  return frames;
}

// The byte stream cut at random places.
std::vector<std::string> chunked(std::mt19937& rng, const std::vector<std::string>& frames) {
  std::string all;
  for (const std::string& f : frames) all += f;
  std::vector<std::string> chunks;
  for (size_t at = 0; at < all.size();) {
    const size_t n = 1 + rng() % 300;
    chunks.push_back(all.substr(at, n));
    at += n;
  }
  return chunks;
}

// The two-module route: the receiver's Result, each applied state's event to planWrite.
std::vector<json> viaText(SyncFacade& sync, CursorFacade& cursor, EmitterFacade& emitter, const std::string& chunk) {
  std::vector<json> answers;
  const json result = json::parse(sync.feed(chunk));
  for (const json& o : result["outcomes"]) {
    if (o["kind"] != "applied" || o.contains("messageId")) continue;
    const bool snapshot = o["type"] == "STATE_SNAPSHOT";
    const char* name = snapshot ? "snapshot" : "delta";
    const json event = {{"type", o["type"]}, {name, o["event"][name]}};
    answers.push_back(reduced(cursor.planWrite(event.dump(), emitter)));
  }
  return answers;
}

// The one-module route: each step's applied states written by reference.
std::vector<json> viaRelay(RelayFacade& relay, CursorFacade& cursor, EmitterFacade& emitter, const std::string& chunk,
                           size_t& notLast) {
  std::vector<json> answers;
  std::copy(chunk.begin(), chunk.end(), relay.inputBuffer(chunk.size()));
  relay.pushInput(chunk.size());
  for (std::string step = relay.next(); !step.empty(); step = relay.next()) {
    const json result = json::parse(step);
    for (const json& o : result["outcomes"]) {
      if (o["kind"] != "applied" || o.contains("messageId")) continue;
      REQUIRE_FALSE(o.contains("event"));  // the state never crosses as text
      if (o["last"] == false) ++notLast;
      answers.push_back(reduced(cursor.writeReceived(relay, o["ref"].get<int>(), emitter, CursorFacade::kInCursor)));
    }
  }
  return answers;
}

}  // namespace

TEST_CASE("relay: writeReceived writes what the receiver's text through planWrite writes", "[relay][property]") {
  size_t applied = 0, notLast = 0;
  for (unsigned seed = 1; seed <= 80; ++seed) {
    std::mt19937 rng(seed);
    const char* cursorOptions = seed % 3 == 0 ? R"({"alwaysRebase":true})" : "";
    EmitterFacade e1(R"({"epoch":"e"})"), e2(R"({"epoch":"e"})");
    CursorFacade c1(cursorOptions), c2(cursorOptions);
    SyncFacade sync(R"({"initialState":{"a":{}},"activities":true})");
    RelayFacade relay(R"({"initialState":{"a":{}},"activities":true})");
    REQUIRE(json::parse(relay.initResult())["ok"] == true);
    const std::string start = R"({"a":{},"o":{}})";
    REQUIRE(e1.update(start) == e2.update(start));
    for (CursorFacade* c : {&c1, &c2}) REQUIRE(json::parse(c->begin(start, false, e1.seq()))["ok"] == true);
    for (const std::string& chunk : chunked(rng, upstreamFrames(rng, 50))) {
      if (rng() % 6 == 0) {  // another writer, on both threads
        const std::string ops = R"([{"op":"add","path":"/o/)" + std::to_string(rng() % 3) + R"(","value":1}])";
        REQUIRE(e1.patch(ops) == e2.patch(ops));
      }
      INFO("seed " << seed << " chunk " << chunk);
      const std::vector<json> expected = viaText(sync, c1, e1, chunk);
      REQUIRE(viaRelay(relay, c2, e2, chunk, notLast) == expected);
      applied += expected.size();
      REQUIRE(e1.stateJson() == e2.stateJson());
      REQUIRE(e1.seq() == e2.seq());
      REQUIRE(c1.suspended() == c2.suspended());
    }
    REQUIRE(json::parse(relay.end())["outcomes"] == json::parse(sync.end())["outcomes"]);
  }
  REQUIRE(applied > 2000);
  REQUIRE(notLast > 20);  // steps that applied several states (held deltas freed) were exercised
}

namespace {

void push(RelayFacade& relay, const std::string& bytes) {
  std::copy(bytes.begin(), bytes.end(), relay.inputBuffer(bytes.size()));
  relay.pushInput(bytes.size());
}

// The applied outcomes of the relay's next step.
std::vector<json> appliedOfStep(RelayFacade& relay) {
  const std::string step = relay.next();
  REQUIRE_FALSE(step.empty());
  std::vector<json> applied;
  const json result = json::parse(step);
  for (const json& o : result["outcomes"])
    if (o["kind"] == "applied") applied.push_back(o);
  return applied;
}

std::string frame(const json& event) { return "data: " + event.dump() + "\n\n"; }

json delta(uint64_t seq, const char* key, int value) {
  return {{"type", "STATE_DELTA"}, {"seq", seq}, {"base_seq", seq - 1},
          {"delta", json::array({{{"op", "add"}, {"path", std::string("/") + key}, {"value", value}}})}};
}

}  // namespace

TEST_CASE("relay: whole-state modes write the state a step led to, once", "[relay]") {
  RelayFacade relay(R"({"initialState":{}})");
  EmitterFacade emitter(R"({"epoch":"e"})");
  CursorFacade cursor("");
  auto write = [&](int ref, int mode) {
    return json::parse(cursor.writeReceived(relay, ref, emitter, mode));
  };
  const std::string pad(300, 'p');  // (so that the emitter sends deltas, not snapshots)
  push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"seq", 1}, {"snapshot", {{"a", 1}, {"pad", pad}}}}));
  REQUIRE(appliedOfStep(relay).size() == 1);  // not written: the run's first write comes later
  // Delta 3 is held for delta 2, which frees it: one step applies both.
  push(relay, frame(delta(3, "c", 3)) + frame(delta(2, "b", 2)));
  REQUIRE(appliedOfStep(relay).empty());
  const std::vector<json> applied = appliedOfStep(relay);
  REQUIRE(applied.size() == 2);
  REQUIRE(applied[0]["last"] == false);
  REQUIRE(applied[1]["last"] == true);
  const int earlier = applied[0]["ref"], later = applied[1]["ref"];
  for (int mode : {CursorFacade::kFirstState, CursorFacade::kApart}) REQUIRE(write(earlier, mode)["kind"] == "later");
  REQUIRE(emitter.seq() == 0);
  REQUIRE(write(later, CursorFacade::kFirstState)["landed"] == 0);
  REQUIRE(json::parse(emitter.stateJson()) == json{{"a", 1}, {"pad", pad}, {"b", 2}, {"c", 3}});
  // The cursor began there: in step, the next delta goes out as the agent's own ops.
  push(relay, frame(delta(4, "d", 4)));
  const std::vector<json> fourth = appliedOfStep(relay);
  REQUIRE(fourth.size() == 1);
  const int ref = fourth[0]["ref"];
  REQUIRE(ref == later + 1);  // refs count across steps
  REQUIRE(write(later, CursorFacade::kInCursor)["code"] == "invalid-event");  // a step already left
  const json next = write(ref, CursorFacade::kInCursor);
  REQUIRE(next["landed"] == 0);
  REQUIRE(next["events"][0]["delta"] == delta(4, "d", 4)["delta"]);
  REQUIRE(relay.next().empty());
}

TEST_CASE("relay: a ref outside the current step is refused, nothing written", "[relay][facade]") {
  RelayFacade relay("");
  EmitterFacade emitter(R"({"epoch":"e"})");
  CursorFacade cursor("");
  REQUIRE(json::parse(cursor.begin("{}", false, emitter.seq()))["ok"] == true);
  push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", 1}}}}) + frame({{"type", "RUN_STARTED"}, {"threadId", "t"}, {"runId", "r"}}));
  REQUIRE(json::parse(relay.next())["outcomes"][0]["ref"] == 0);  // the first received state
  REQUIRE(json::parse(relay.next())["outcomes"][0]["kind"] == "event");  // the snapshot's step is over
  for (int ref : {0, -1, 7})
    REQUIRE(json::parse(cursor.writeReceived(relay, ref, emitter, CursorFacade::kInCursor))["code"] == "invalid-event");
  REQUIRE(emitter.seq() == 0);
  REQUIRE(relay.next().empty());
}

TEST_CASE("relay: pushInput(n) frames at most the bytes the scratch buffer holds", "[relay][facade]") {
  RelayFacade relay("");
  const std::string bytes = frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", 1}}}});
  std::copy(bytes.begin(), bytes.end(), relay.inputBuffer(bytes.size()));
  relay.pushInput(bytes.size() + 4096);  // a binding's miscount: nothing past the buffer is framed
  REQUIRE(appliedOfStep(relay).size() == 1);
  REQUIRE(relay.next().empty());
  REQUIRE(json::parse(relay.end())["outcomes"].empty());  // no partial event left behind
  REQUIRE(relay.state() == json{{"a", 1}});
}
