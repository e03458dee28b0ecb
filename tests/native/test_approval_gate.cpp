// The approval gate (src/facade/approval_gate.h) through its string facade, as
// the proxy and the middleware drive it: every verdict, the order of the
// checks, and a seeded walk of the driver loop against an in-memory store.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <random>
#include <utility>

#include <agui_sync/canonical_json.h>

#include "facade/approval_facade.h"
#include "facade/approval_gate.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

const json kState = {{"proposal", {{"payee", "ACME"}, {"amount", 1200}}}, {"doc", "draft"}};

json approvalOf(const json& state, const char* path = "/proposal") {
  return {{"path", path}, {"seq", 7}, {"digest", stateDigest(state[json::json_pointer(path)])}, {"epoch", "e1"}};
}

json resumeOf(const std::vector<std::pair<std::string, json>>& entries) {
  json resume = json::array();
  for (const auto& [id, approval] : entries)
    resume.push_back({{"interruptId", id}, {"status", "resolved"}, {"payload", {{"approved", true}, {"approval", approval}}}});
  return resume;
}

json judge(json request) {
  if (!request.contains("threadId")) request["threadId"] = "t1";
  return json::parse(judgeApprovalsJson(request.dump()));
}

// The binding's loop over one store: peek, claim in order until one is lost, ask again.
struct Store {
  std::map<std::string, std::string> records;
};

json drive(Store& store, const json& resume, const json* state, std::function<void()> beforeClaim = nullptr) {
  json records = json::object(), claimed = json::object();
  for (int step = 0; step < 6; ++step) {
    json request = {{"resume", resume}, {"records", records}, {"claimed", claimed}, {"nowMs", 5}};
    if (state) request["state"] = *state;
    json verdict = judge(request);
    if (verdict["verdict"] == "peek") {
      for (const json& id : verdict["interruptIds"]) {
        auto it = store.records.find(id.get<std::string>());
        records[id.get<std::string>()] = it == store.records.end() ? json(nullptr) : json(it->second);
      }
    } else if (verdict["verdict"] == "claim") {
      if (beforeClaim) std::exchange(beforeClaim, nullptr)();
      for (const json& c : verdict["claims"]) {
        auto [it, won] = store.records.emplace(c["interruptId"].get<std::string>(), c["record"].get<std::string>());
        if (!won) { records[it->first] = it->second; break; }
        claimed[it->first] = it->second;
      }
    } else {
      for (const json& r : verdict.value("releases", json::array())) {  // the store's release(): only its own record
        auto it = store.records.find(r["interruptId"].get<std::string>());
        if (it != store.records.end() && it->second == r["record"]) store.records.erase(it);
      }
      return verdict;
    }
  }
  FAIL("the gate did not settle within six steps");
  return nullptr;
}

}  // namespace

TEST_CASE("approval gate: entries without our approval pass", "[approvals]") {
  CHECK(judge({{"resume", nullptr}})["verdict"] == "pass");
  CHECK(judge({{"resume", json::array({{{"interruptId", "i1"}, {"status", "resolved"}, {"payload", {{"approved", true}}}}})}})["verdict"] == "pass");
  // A resolved entry without a payload, a cancelled one, a refusal: passed untouched, never a crash.
  json odd = json::array({{{"interruptId", "i1"}, {"status", "resolved"}},
                          {{"interruptId", "i2"}, {"status", "cancelled"}, {"payload", {{"approved", true}, {"approval", approvalOf(kState)}}}},
                          {{"interruptId", "i3"}, {"status", "resolved"}, {"payload", {{"approved", false}, {"approval", approvalOf(kState)}}}},
                          7, nullptr});
  CHECK(judge({{"resume", odd}})["verdict"] == "pass");
}

TEST_CASE("approval gate: fresh and verified is claimed once, then forwarded", "[approvals]") {
  Store store;
  json resume = resumeOf({{"i1", approvalOf(kState)}});
  json verdict = drive(store, resume, &kState);
  CHECK(verdict == json({{"ok", true}, {"verdict", "forward"}, {"interruptIds", {"i1"}}}));
  // The record is consumeApproval's: its effect key is effectKey(approval, {threadId, interruptId}).
  json record = json::parse(store.records.at("i1"));
  CHECK(record["decision"] == "approved");
  CHECK(record["at"] == 5);
  CHECK(record["effectKey"] == approvalEffectKey(approvalOf(kState), "t1", "i1"));
  // Re-sent (after a cut), even once the run moved the state: a replay, never a second forward.
  json moved = {{"proposal", nullptr}, {"paid", true}};
  CHECK(drive(store, resume, &moved) == json({{"ok", true}, {"verdict", "replay"}, {"interruptId", "i1"}}));
  // Another approval for the consumed interrupt: refused, whatever the state.
  json other = approvalOf(kState);
  other["seq"] = 8;
  json refusal = drive(store, resumeOf({{"i1", other}}), &kState);
  CHECK(refusal["verdict"] == "refuse");
  CHECK(refusal["code"] == "already-consumed");
  CHECK(refusal["interruptId"] == "i1");
}

TEST_CASE("approval gate: a stale approval is refused and consumes nothing", "[approvals]") {
  Store store;
  json moved = kState;
  moved["proposal"]["amount"] = 9000;
  json resume = resumeOf({{"i1", approvalOf(kState)}});
  json refusal = drive(store, resume, &moved);
  CHECK(refusal["code"] == "approval-stale");
  CHECK(refusal["message"].get<std::string>().find("nothing was forwarded") != std::string::npos);
  CHECK(store.records.empty());
  CHECK(drive(store, resume, nullptr)["code"] == "approval-stale");  // no sequenced state: cannot be verified
  CHECK(drive(store, resumeOf({{"i1", approvalOf(moved)}}), &moved)["verdict"] == "forward");  // approved again: fine
  // Two entries, one stale: neither is claimed.
  Store two;
  json both = resumeOf({{"a", approvalOf(kState)}, {"b", approvalOf(moved)}});
  CHECK(drive(two, both, &kState)["interruptId"] == "b");
  CHECK(two.records.empty());
}

TEST_CASE("approval gate: malformed requests are refused with invalid-request", "[approvals]") {
  json noDigest = {{"path", "/proposal"}};
  CHECK(judge({{"resume", resumeOf({{"i1", noDigest}})}})["code"] == "invalid-request");
  CHECK(judge({{"resume", resumeOf({{"i1", approvalOf(kState)}, {"i1", approvalOf(kState)}})}})["code"] == "invalid-request");
  CHECK(json::parse(judgeApprovalsJson("{"))["code"] == "invalid-json");
  CHECK(json::parse(judgeApprovalsJson("[]"))["code"] == "invalid-request");
  std::string deep(400, '[');
  CHECK(json::parse(judgeApprovalsJson("{\"threadId\":\"t\",\"state\":" + deep))["code"] == "limit-exceeded");
}

TEST_CASE("approval gate: the effect key reads seq as Number.isSafeInteger does", "[approvals]") {
  json a = approvalOf(kState), b = a;
  b["seq"] = 7.0;  // JSON.parse gives the same number
  CHECK(approvalEffectKey(a, "t", "i") == approvalEffectKey(b, "t", "i"));
  b["seq"] = 9007199254740992.0;  // beyond safe: null, as a missing seq
  json c = a;
  c.erase("seq");
  CHECK(approvalEffectKey(b, "t", "i") == approvalEffectKey(c, "t", "i"));
  CHECK(approvalEffectKey(a, "t", "i") != approvalEffectKey(a, "t2", "i"));
  CHECK(approvalEffectKey(a, "t", "i").size() == 64);
}

TEST_CASE("approval gate: racing resumes forward each interrupt once (seeded)", "[approvals][property]") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    Store store;
    const int n = 1 + static_cast<int>(rng() % 3);
    std::vector<std::pair<std::string, json>> entries;
    for (int i = 0; i < n; ++i) entries.push_back({"i" + std::to_string(i), approvalOf(kState)});
    json resume = resumeOf(entries);
    // An identical resume raced this one: its claims (the first `early`
    // interrupts, in the same order) landed between our peek and our claims.
    const int early = static_cast<int>(rng() % (n + 1));
    auto race = [&] {
      for (int i = 0; i < early; ++i) {
        const std::string id = "i" + std::to_string(i);
        store.records[id] = json({{"decision", "approved"}, {"effectKey", approvalEffectKey(approvalOf(kState), "t1", id)}, {"at", 1}}).dump();
      }
    };
    json verdict = drive(store, resume, &kState, race);
    INFO("seed " << seed << " n " << n << " early " << early);
    CHECK(verdict["verdict"] == (early == 0 ? "forward" : "replay"));
    if (early == 0) CHECK(static_cast<int>(store.records.size()) == n);
  }
}

TEST_CASE("approval gate: claims lost half-way are released, nothing stays consumed", "[approvals]") {
  Store store;
  json resume = resumeOf({{"a", approvalOf(kState)}, {"b", approvalOf(kState)}});
  json other = approvalOf(kState);
  other["seq"] = 99;
  // Between our peek and our claims another approval of interrupt b lands: a wins, b is lost.
  auto race = [&] { store.records["b"] = json({{"decision", "approved"}, {"effectKey", approvalEffectKey(other, "t1", "b")}, {"at", 1}}).dump(); };
  json verdict = drive(store, resume, &kState, race);
  CHECK(verdict["code"] == "already-consumed");
  CHECK(verdict["interruptId"] == "b");
  REQUIRE(verdict["releases"].size() == 1);
  CHECK(verdict["releases"][0]["interruptId"] == "a");
  CHECK(store.records.count("a") == 0);  // a was not forwarded: it may be approved again
  CHECK(store.records.count("b") == 1);  // the other request's record stays
}
