// consumeApproval's steps and effectKey (src/facade/approval_consume.h), as the
// JS and Python bindings drive them over a store: every answer, the record id
// without an interrupt, and a seeded race of consumers on one store.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <agui_sync/canonical_json.h>

#include "facade/approval_consume.h"
#include "facade/approval_gate.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

const json kState = {{"proposal", {{"payee", "ACME"}, {"amount", 1200}}}};

json approvalOf(const json& value, int seq = 7) {
  return {{"path", "/proposal"}, {"seq", seq}, {"digest", stateDigest(value)}, {"epoch", "e1"}};
}

using Records = std::map<std::string, std::string>;

// One consumer's request and the binding's loop, a step at a time (so that two can interleave).
struct Consumer {
  json known;
  std::optional<json> answer;
  void step(Records& store) {
    const json next = json::parse(consumeApprovalStepJson(known.dump()));
    REQUIRE(next["ok"] == true);
    if (next["step"] == "answer") {
      answer = next["answer"];
    } else if (next["step"] == "peek") {
      auto it = store.find(next["recordId"]);
      known["record"] = it == store.end() ? json(nullptr) : json(it->second);
    } else {
      auto [it, won] = store.emplace(next["recordId"], next["record"]);
      if (won) known["claimed"] = true;
      else known["record"] = it->second;
    }
  }
};

Consumer consumer(const json& approval, const json& state, const json& interruptId = "i1") {
  return Consumer{{{"threadId", "t1"}, {"interruptId", interruptId}, {"approval", approval}, {"state", state}, {"nowMs", 5}}};
}

json consume(Records& store, const json& approval, const json& state, const json& interruptId = "i1") {
  Consumer c = consumer(approval, state, interruptId);
  for (int i = 0; i < 6 && !c.answer; ++i) c.step(store);
  REQUIRE(c.answer);
  return *c.answer;
}

json refusal(const char* reason) {
  return {{"ok", false}, {"decision", "refused"}, {"replayed", false}, {"effectKey", nullptr}, {"reason", reason}};
}

}  // namespace

TEST_CASE("consume: once, then the first decision replayed; another approval is refused", "[approval-consume]") {
  Records store;
  const json approval = approvalOf(kState["proposal"]);
  const std::string key = approvalEffectKey(approval, "t1", "i1");
  CHECK(consume(store, approval, kState) ==
        json({{"ok", true}, {"decision", "approved"}, {"replayed", false}, {"effectKey", key}}));
  CHECK(json::parse(store.at("i1")) == json({{"decision", "approved"}, {"effectKey", key}, {"at", 5}}));
  // Acting changed the state: the same approval still gets its first decision.
  CHECK(consume(store, approval, json{{"paid", true}})["replayed"] == true);
  CHECK(consume(store, approvalOf(kState["proposal"], 8), kState) == refusal("already-consumed"));
  CHECK(store.size() == 1);
}

TEST_CASE("consume: a refusal records nothing", "[approval-consume]") {
  Records store;
  CHECK(consume(store, approvalOf(json("other")), kState) == refusal("changed"));
  json noState = consumer(approvalOf(kState["proposal"]), nullptr).known;
  noState.erase("state");  // a state the binding could not put in JSON
  Consumer c{noState};
  for (int i = 0; i < 6 && !c.answer; ++i) c.step(store);
  CHECK(*c.answer == refusal("changed"));
  for (const json& bad : {json(nullptr), json("x"), json{{"path", "/proposal"}}, json{{"path", 1}, {"digest", "d"}}})
    CHECK(consume(store, bad, kState) == refusal("invalid-token"));
  CHECK(store.empty());
}

TEST_CASE("consume: the interrupt is the caller's, else the approval's, else the approval itself", "[approval-consume]") {
  Records store;
  json approval = approvalOf(kState["proposal"]);
  consume(store, approval, kState, nullptr);
  const std::string key = approvalEffectKey(approval, "t1", nullptr);
  CHECK(store.count("approval:" + key) == 1);
  approval["interruptId"] = "from-approval";
  consume(store, approval, kState, nullptr);
  CHECK(store.count("from-approval") == 1);
  for (const json& bad : {json(""), json(3), json::array()}) {
    json r = json::parse(consumeApprovalStepJson(consumer(approval, kState, bad).known.dump()));
    CHECK(r["code"] == "invalid-options");
  }
}

TEST_CASE("effectKey: the gate's key, with null ids, and refusals", "[approval-consume]") {
  const json approval = approvalOf(kState["proposal"]);
  auto key = [](const json& request) { return json::parse(effectKeyJson(request.dump())); };
  CHECK(key({{"approval", approval}, {"threadId", "t1"}, {"interruptId", "i1"}})["effectKey"] ==
        approvalEffectKey(approval, "t1", "i1"));
  json own = approval;
  own["interruptId"] = "i9";
  CHECK(key({{"approval", own}, {"threadId", nullptr}, {"interruptId", nullptr}})["effectKey"] ==
        approvalEffectKey(approval, nullptr, "i9"));
  // viewedSeq is not part of what was approved; a seq that is not a safe integer counts as none.
  json viewed = approval;
  viewed["viewedSeq"] = 3;
  CHECK(key({{"approval", viewed}})["effectKey"] == key({{"approval", approval}})["effectKey"]);
  json unsafe = approval;
  unsafe["seq"] = 9007199254740993ULL;
  json none = approval;
  none["seq"] = nullptr;
  CHECK(key({{"approval", unsafe}})["effectKey"] == key({{"approval", none}})["effectKey"]);
  CHECK(key({{"approval", json{{"path", "/p"}}}})["code"] == "invalid-argument");
  own["interruptId"] = 4;
  CHECK(key({{"approval", own}})["code"] == "invalid-argument");
}

TEST_CASE("consume: racing consumers on one store, seeded: one decision per interrupt", "[approval-consume]") {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Records store;
    std::vector<Consumer> consumers;
    const int n = 2 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i)  // the same approval re-sent, or another one for the interrupt
      consumers.push_back(consumer(approvalOf(kState["proposal"], rng() % 2 ? 7 : 8), kState));
    for (int moves = 0; moves < 100; ++moves) {
      std::vector<Consumer*> open;
      for (Consumer& c : consumers)
        if (!c.answer) open.push_back(&c);
      if (open.empty()) break;
      open[rng() % open.size()]->step(store);
    }
    INFO("seed " << seed);
    const json winner = json::parse(store.at("i1"))["effectKey"];
    int firsts = 0;
    for (const Consumer& c : consumers) {
      REQUIRE(c.answer);
      const bool same = (*c.answer)["effectKey"] == winner;
      firsts += (*c.answer)["ok"] == true && (*c.answer)["replayed"] == false;
      CHECK((*c.answer)["ok"] == (same || approvalEffectKey(c.known["approval"], "t1", "i1") == winner));
    }
    CHECK(firsts == 1);
  }
}
