// RelayFacade + CursorFacade::writeReceived: the proxy's one-module route must
// write exactly what the two-module route writes (a SyncFacade's Result, each
// applied state's event written out and handed to planWrite, as
// js/src/server/upstream-cursor.js did). Two threads are driven side by side
// over seeded upstream streams: sequenced snapshots and deltas, deltas that do
// not apply, reordered ones (an event that frees held deltas applies several
// states in one step), other events, random chunking, and another writer
// moving the emitters meanwhile (the cursor goes out of step and rebases).
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <string>
#include <utility>
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

// The store-bound route: planReceived, each try by tryReceived (as a store-bound
// emitter's local one carries it out), settleReceived.
struct {
  size_t landed = 0, refused = 0;
} inStepTries;  // how the checked in-step tries went, over every received plan tried

// (race: what another instance writes between the plan and its tries.)
json triedReceived(RelayFacade& relay, int ref, CursorFacade& cursor, EmitterFacade& emitter,
                   const std::function<void()>& race = [] {}) {
  const json plan = json::parse(cursor.planReceived(relay, ref, CursorFacade::kInCursor, emitter.seq()));
  if (plan["ok"] != true) return {{"failed", plan["code"]}};
  if (plan["kind"] != "write") return {{"kind", plan["kind"]}};
  race();
  json last;
  for (int index = 0; index < static_cast<int>(plan["tries"].size()); ++index) {
    const json& attempt = plan["tries"][index];
    REQUIRE(attempt.size() == (attempt.contains("inStep") ? 2u : 1u));  // no values: the core carries each out
    last = json::parse(cursor.tryReceived(relay, index, emitter));
    if (attempt.contains("inStep")) ++(last["ok"] == true ? inStepTries.landed : inStepTries.refused);
    if (last["ok"] == true) {
      cursor.settleReceived(index, emitter.seq());
      return {{"landed", index}, {"events", last["events"]}};
    }
    const std::string code = last["code"];
    const bool skippable = !attempt.contains("update") || attempt.contains("inStep");
    if (!skippable || (code != "patch-failed" && code != "precondition-failed" && code != "invalid-patch")) break;
  }
  cursor.settleReceived(-1, emitter.seq());
  return {{"landed", -1}, {"code", last["code"]}};
}

// race: another instance's write, made between the first plan and its tries
// (after the chunk when it has no state to write). The answers leave out which
// try landed: a race makes a rebase the second try instead of the first.
std::vector<json> viaReceivedPlans(RelayFacade& relay, CursorFacade& cursor, EmitterFacade& emitter, const std::string& chunk,
                                   std::function<void()> race = nullptr) {
  std::vector<json> answers;
  std::copy(chunk.begin(), chunk.end(), relay.inputBuffer(chunk.size()));
  relay.pushInput(chunk.size());
  auto once = [&] {
    if (race) std::exchange(race, nullptr)();
  };
  for (std::string step = relay.next(); !step.empty(); step = relay.next()) {
    const json result = json::parse(step);
    for (const json& o : result["outcomes"]) {
      if (o["kind"] != "applied" || o.contains("messageId")) continue;
      json answer = triedReceived(relay, o["ref"], cursor, emitter, once);
      answer.erase("landed");
      answers.push_back(std::move(answer));
    }
  }
  once();
  return answers;
}

std::vector<json> withoutLanded(std::vector<json> answers) {
  for (json& answer : answers) answer.erase("landed");
  return answers;
}

}  // namespace

// Lanes: 1, the receiver's text through planWrite; 2, writeReceived (both
// with the seed's cursor options); 3, the store-bound received plans (always
// rebasing, each try checked where it runs), against 4, the text route with a
// cursor that trusts its seq, as a plain emitter's does: lane 3's checked
// in-step tries must make it write exactly what that cursor writes.
TEST_CASE("relay: writeReceived and the store-bound received plans write what the receiver's text through planWrite writes", "[relay][property]") {
  size_t applied = 0, notLast = 0;
  for (unsigned seed = 1; seed <= 80; ++seed) {
    std::mt19937 rng(seed);
    const char* cursorOptions = seed % 3 == 0 ? R"({"alwaysRebase":true})" : "";
    EmitterFacade e1(R"({"epoch":"e"})"), e2(R"({"epoch":"e"})"), e3(R"({"epoch":"e"})"), e4(R"({"epoch":"e"})");
    CursorFacade c1(cursorOptions), c2(cursorOptions), c3(R"({"alwaysRebase":true})"), c4("");
    SyncFacade sync(R"({"initialState":{"a":{}},"activities":true})"), sync4(R"({"initialState":{"a":{}},"activities":true})");
    RelayFacade relay(R"({"initialState":{"a":{}},"activities":true})"), relay3(R"({"initialState":{"a":{}},"activities":true})");
    REQUIRE(json::parse(relay.initResult())["ok"] == true);
    const std::string start = R"({"a":{},"o":{}})";
    const std::string first = e1.update(start);
    for (EmitterFacade* e : {&e2, &e3, &e4}) REQUIRE(e->update(start) == first);
    for (CursorFacade* c : {&c1, &c2, &c3, &c4}) REQUIRE(json::parse(c->begin(start, false, e1.seq()))["ok"] == true);
    c3.onLine("e", e3.seq());
    for (const std::string& chunk : chunked(rng, upstreamFrames(rng, 50))) {
      std::function<void()> race;
      if (rng() % 6 == 0) {  // another writer, on every thread (lane 3's, half the time, racing its first write)
        const std::string ops = R"([{"op":"add","path":"/o/)" + std::to_string(rng() % 3) + R"(","value":1}])";
        const std::string landed = e1.patch(ops);
        for (EmitterFacade* e : {&e2, &e4}) REQUIRE(e->patch(ops) == landed);
        if (rng() % 2 == 0) REQUIRE(e3.patch(ops) == landed);
        else race = [&e3, ops, landed] { REQUIRE(e3.patch(ops) == landed); };
      }
      INFO("seed " << seed << " chunk " << chunk);
      const std::vector<json> expected = viaText(sync, c1, e1, chunk);
      REQUIRE(viaRelay(relay, c2, e2, chunk, notLast) == expected);
      REQUIRE(viaReceivedPlans(relay3, c3, e3, chunk, race) == withoutLanded(viaText(sync4, c4, e4, chunk)));
      applied += expected.size();
      for (EmitterFacade* e : {&e2, &e3, &e4}) {
        REQUIRE(e1.stateJson() == e->stateJson());
        REQUIRE(e1.seq() == e->seq());
      }
      for (CursorFacade* c : {&c2, &c3, &c4}) REQUIRE(c1.suspended() == c->suspended());
    }
    REQUIRE(json::parse(relay.end())["outcomes"] == json::parse(sync.end())["outcomes"]);
  }
  REQUIRE(inStepTries.landed > 100);
  REQUIRE(inStepTries.refused > 5);  // raced: the rebase worked out after the plan
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

// A store-bound emitter's route for one received state in `mode`: planReceived, its tries, settleReceived.
json throughPlan(RelayFacade& relay, int ref, CursorFacade& cursor, EmitterFacade& emitter, int mode) {
  const json plan = json::parse(cursor.planReceived(relay, ref, mode, emitter.seq()));
  if (plan.value("kind", "") != "write") return plan;  // (a failure has no kind)
  REQUIRE(plan["tries"].size() == 1);
  const json answer = json::parse(cursor.tryReceived(relay, 0, emitter));
  cursor.settleReceived(answer["ok"] == true ? 0 : -1, emitter.seq());
  return {{"ok", true}, {"kind", "write"}, {"landed", answer["ok"] == true ? 0 : -1}, {"events", answer.value("events", json::array())}};
}

}  // namespace

TEST_CASE("relay: whole-state modes write the state a step led to, once", "[relay]") {
  for (const bool plain : {true, false}) {
    INFO((plain ? "writeReceived" : "planReceived"));
    RelayFacade relay(R"({"initialState":{}})");
    EmitterFacade emitter(R"({"epoch":"e"})");
    CursorFacade cursor("");
    auto write = [&](int ref, int mode) {
      return plain ? json::parse(cursor.writeReceived(relay, ref, emitter, mode)) : throughPlan(relay, ref, cursor, emitter, mode);
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
    const json next = plain ? write(ref, CursorFacade::kInCursor) : triedReceived(relay, ref, cursor, emitter);
    REQUIRE(next["landed"] == 0);
    REQUIRE(next["events"][0]["delta"] == delta(4, "d", 4)["delta"]);
    REQUIRE(relay.next().empty());
  }
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

TEST_CASE("relay: a store-bound run's in-step snapshot lands only where its last write left the emitter", "[relay][facade]") {
  RelayFacade relay("");
  CursorFacade cursor(R"({"alwaysRebase":true})");
  EmitterFacade emitter(R"({"epoch":"e"})");
  const json start = {{"a", {1, 2, 3}}, {"o", 0}, {"pad", std::string(300, 'p')}};
  emitter.update(start.dump());
  REQUIRE(json::parse(cursor.begin(start.dump(), false, emitter.seq()))["ok"] == true);
  cursor.onLine("e", emitter.seq());
  auto snapshot = [&](EmitterFacade& target, json state) {
    push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", std::move(state)}}));
    const std::vector<json> applied = appliedOfStep(relay);
    REQUIRE(applied.size() == 1);
    return triedReceived(relay, applied[0]["ref"], cursor, target);
  };
  // In step: the emitter's own diff, one element added (the rebase diff would replace /a whole).
  json next = start;
  next["a"].push_back(4);
  json written = snapshot(emitter, next);
  REQUIRE(written["landed"] == 0);
  REQUIRE(written["events"][0]["delta"] == json::array({{{"op", "add"}, {"path", "/a/-"}, {"value", 4}}}));
  // Another writer moves the line after the plan (a store emitter's lost race):
  // the in-step try is refused where it runs, and the rebase keeps that write.
  next["a"].push_back(5);
  const size_t refused = inStepTries.refused;
  push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", next}}));
  const std::vector<json> fifth = appliedOfStep(relay);
  written = triedReceived(relay, fifth[0]["ref"], cursor, emitter, [&] { emitter.patch(R"([{"op":"replace","path":"/o","value":5}])"); });
  REQUIRE(inStepTries.refused == refused + 1);
  REQUIRE(written["landed"] == 1);
  REQUIRE(json::parse(emitter.stateJson())["a"] == next["a"]);
  REQUIRE(json::parse(emitter.stateJson())["o"] == 5);
  // That rebase left the thread out of step: the next snapshot is rebased too (no in-step try).
  next["a"].push_back(6);
  REQUIRE(json::parse(cursor.planReceived(relay, -1, CursorFacade::kInCursor, emitter.seq()))["code"] == "invalid-event");
  written = snapshot(emitter, next);
  REQUIRE(written["landed"] == 0);
  REQUIRE(written["events"][0]["delta"][0]["path"] == "/a");
  REQUIRE(json::parse(emitter.stateJson())["o"] == 5);
}

TEST_CASE("relay: the in-step try checks the emitter's line, not only its seq", "[relay][facade]") {
  RelayFacade relay("");
  CursorFacade cursor(R"({"alwaysRebase":true})");
  EmitterFacade ours(R"({"epoch":"e"})"), other(R"({"epoch":"x"})");
  const json start = {{"a", {1}}, {"o", 0}, {"pad", std::string(300, 'p')}};
  ours.update(start.dump());
  // A snapshot first, so that the cursor's view is the agent's own (and in step after it).
  REQUIRE(json::parse(cursor.begin(start.dump(), false, ours.seq()))["ok"] == true);
  cursor.onLine("e", ours.seq());
  // Another line (a reset key, a degraded instance's own epoch) at the same seq, with another state.
  while (other.seq() < ours.seq()) other.update(json{{"a", {9}}, {"o", 7}, {"pad", std::string(300, 'q')}}.dump());
  REQUIRE(other.seq() == ours.seq());
  push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", {1, 2}}, {"o", 0}, {"pad", std::string(300, 'p')}}}}));
  const std::vector<json> applied = appliedOfStep(relay);
  const json written = triedReceived(relay, applied[0]["ref"], cursor, other);
  REQUIRE(written["landed"] == 1);  // the in-step update would have put o back to 0 and pad to p's
  const json state = json::parse(other.stateJson());
  REQUIRE(state["o"] == 7);
  REQUIRE(state["a"] == json::array({1, 2}));
}

TEST_CASE("relay: a store-bound run's view follows its in-step snapshot, and its rebase after a race starts there", "[relay][facade]") {
  RelayFacade relay("");
  CursorFacade cursor(R"({"alwaysRebase":true})");
  EmitterFacade emitter(R"({"epoch":"e"})");
  json state = {{"a", {1, 2, 3}}, {"o", 0}, {"pad", std::string(300, 'p')}};
  emitter.update(state.dump());
  REQUIRE(json::parse(cursor.begin(state.dump(), false, emitter.seq()))["ok"] == true);
  cursor.onLine("e", emitter.seq());
  auto snapshot = [&](const json& next, const std::function<void()>& race) {
    push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", next}}));
    const std::vector<json> applied = appliedOfStep(relay);
    REQUIRE(applied.size() == 1);
    return triedReceived(relay, applied[0]["ref"], cursor, emitter, race);
  };
  state["a"].push_back(4);
  REQUIRE(snapshot(state, [] {})["landed"] == 0);  // in step: the view follows by the emitter's ops
  // A snapshot written in step is the agent's own state: the proxy keeps it as its next run's start.
  REQUIRE(!cursor.agentView().empty());
  CHECK(json::parse(cursor.agentView()) == state);
  state["n"] = 1;
  const json written = snapshot(state, [&] { emitter.patch(R"([{"op":"replace","path":"/o","value":5}])"); });
  REQUIRE(written["landed"] == 1);
  // The rebase is what the agent changed since its last snapshot: /n only, not /a again.
  REQUIRE(written["events"][0]["delta"] == json::array({{{"op", "add"}, {"path", "/n"}, {"value", 1}}}));
  REQUIRE(json::parse(emitter.stateJson())["o"] == 5);
}

TEST_CASE("relay: a held snapshot's write is refused once the relay has moved on", "[relay][facade]") {
  RelayFacade relay("");
  CursorFacade cursor(R"({"alwaysRebase":true})");
  EmitterFacade emitter(R"({"epoch":"e"})");
  emitter.update(R"({"a":1})");
  REQUIRE(json::parse(cursor.begin(R"({"a":1})", false, emitter.seq()))["ok"] == true);
  cursor.onLine("e", emitter.seq());
  push(relay, frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", 2}}}}) + frame({{"type", "STATE_SNAPSHOT"}, {"snapshot", {{"a", 3}}}}));
  const int ref = appliedOfStep(relay)[0]["ref"];
  REQUIRE(json::parse(cursor.planReceived(relay, ref, CursorFacade::kInCursor, emitter.seq()))["tries"].size() == 3);
  REQUIRE(appliedOfStep(relay).size() == 1);  // a binding that stepped before the write settled
  const uint64_t seq = emitter.seq();
  for (int index = 0; index < 3; ++index)
    REQUIRE(json::parse(cursor.tryReceived(relay, index, emitter))["code"] == "invalid-event");
  REQUIRE(emitter.seq() == seq);
  REQUIRE(json::parse(emitter.stateJson()) == json{{"a", 1}});
}
