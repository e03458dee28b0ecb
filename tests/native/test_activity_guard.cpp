// The approval guard on activity content (docs/wire.md sections 7 and 11): a
// form rendered from an activity is viewed and approved against that
// activity's own line, never the state's; every refusal reason; a seeded
// property (approve succeeds iff the content at the path still has the
// token's digest); and the agent-side judgement (judgeApproval), the gate's
// and consumeApproval's, of an approval that names an activity.
#include <catch2/catch.hpp>

#include <map>

#include <agui_sync/approval_guard.h>
#include <agui_sync/canonical_json.h>

#include "activity_events.h"
#include "facade/approval_consume.h"
#include "facade/approval_facade.h"
#include "facade/approval_gate.h"
#include "facade/sync_facade.h"
#include "random_state.h"

using namespace agui_sync;
using namespace agui_test;
using nlohmann::json;

namespace {

struct Rig {
  Rig() : engine(receivingActivities()), guard(engine, GuardOptions{}) {}
  void send(const std::vector<json>& events, uint64_t now) {
    feedActivities(engine, events);
    guard.noteActivity(now);
  }
  SyncEngine engine;
  ApprovalGuard guard;
};

const json kForm = {{"payee", "ACME"}, {"amount", 1200}, {"note", ""}};
json op(const char* kind, const char* path, json value) { return json::array({{{"op", kind}, {"path", path}, {"value", value}}}); }

}  // namespace

TEST_CASE("activity guard: view binds the activity's seq and the digest of its content at path", "[guard][activities]") {
  Rig g;
  g.send({snapshotEvent(json{{"proposal", 1}}, 9), activitySnapshot("m1", kForm, 0, true)}, 1000);
  const json* value = nullptr;
  ViewToken t;
  REQUIRE(g.guard.viewActivity("m1", "/payee", &value, &t).ok);
  CHECK(*value == "ACME");
  CHECK(t.seq == 0u);  // the activity's own line, not the state's 9
  CHECK(t.messageId == std::optional<std::string>("m1"));
  CHECK(t.digest == stateDigest(json("ACME")));
  // An unrelated change in the activity, and any change to the state, leave the approval standing.
  g.send({activityDelta("m1", op("replace", "/note", "x"), 0, 1), deltaEvent(op("replace", "/proposal", 2), 9, 10)}, 1100);
  Approval a;
  REQUIRE(g.guard.approve(t, 1200, &a).ok);
  CHECK(a.messageId == std::optional<std::string>("m1"));
  CHECK(a.seq == 1u);
  CHECK(a.viewedSeq == 0u);
  CHECK(a.digest == t.digest);
  // The agent checks it against that activity's content, never its state.
  json payee = {{"payee", "ACME"}};
  CHECK_FALSE(verifyApproval(a, payee));
  const json acts = {{"m1", kForm}};
  CHECK_FALSE(judgeApproval(a, &payee, &acts));
  CHECK(judgeApproval(a, &payee, nullptr) == Code::Missing);
  const json other = {{"m2", kForm}};
  CHECK(judgeApproval(a, &payee, &other) == Code::Missing);
  const json moved = {{"m1", {{"payee", "Mallory"}}}};
  CHECK(judgeApproval(a, &payee, &moved) == Code::Changed);
}

TEST_CASE("activity guard: every refusal reason, judged by the activity's own line", "[guard][activities]") {
  Rig g;
  ViewToken t;
  CHECK(g.guard.viewActivity("m1", "/payee", nullptr, &t).reason == Code::Missing);  // no such activity
  g.send({snapshotEvent(json{{"p", 1}}, 1), activitySnapshot("m1", kForm, std::nullopt)}, 1000);
  CHECK(g.guard.viewActivity("m1", "/nope", nullptr, &t).reason == Code::Missing);
  CHECK(g.guard.viewActivity("m1", "nope", nullptr, &t).reason == Code::InvalidToken);
  REQUIRE(g.guard.viewActivity("m1", "/payee", nullptr, &t).ok);
  CHECK(g.guard.approve(t, 1000, nullptr).reason == Code::Unverified);  // an unsequenced activity
  g.send({activitySnapshot("m1", kForm, 0)}, 1000);
  REQUIRE(g.guard.viewActivity("m1", "/payee", nullptr, &t).ok);
  CHECK(g.guard.approve(t, 1000, nullptr).ok);
  CHECK(g.guard.approve(t, 1000 + 15001, nullptr).reason == Code::Stale);
  g.guard.noteDisconnected();
  CHECK(g.guard.approve(t, 1000, nullptr).reason == Code::Disconnected);
  g.send({activityDelta("m1", op("replace", "/note", "x"), 1, 2)}, 2000);  // held: its seq 1 is missing
  CHECK(g.guard.approve(t, 2000, nullptr).reason == Code::GapPending);
  CHECK(g.guard.activityBlocker("m1", 2000) == Code::GapPending);
  CHECK_FALSE(g.guard.blocker(2000));  // the state's line knows nothing of it
  g.send({activityDelta("m1", op("replace", "/payee", "Mallory"), 0, 1)}, 2100);  // fills the gap
  CHECK(g.guard.approve(t, 2100, nullptr).reason == Code::Changed);
  g.send({activityDelta("m1", op("remove", "/payee", nullptr), 2, 3)}, 2200);
  CHECK(g.guard.approve(t, 2200, nullptr).reason == Code::Missing);
  g.send({activityDelta("m1", op("replace", "/nope", 1), 3, 4)}, 2300);  // fails: the activity resyncs
  CHECK(g.guard.approve(t, 2300, nullptr).reason == Code::Resyncing);
  ViewToken gone = t;
  gone.messageId = "m9";
  CHECK(g.guard.approve(gone, 2300, nullptr).reason == Code::Missing);
  ViewToken bad = t;
  bad.digest = "md5:x";
  g.send({activitySnapshot("m1", kForm, 7)}, 3000);  // healed by its snapshot
  CHECK(g.guard.approve(bad, 3000, nullptr).reason == Code::InvalidToken);
  CHECK(g.guard.approve(t, 3000, nullptr).ok);
}

TEST_CASE("activity guard: a state resync does not block an activity, nor an activity's the state", "[guard][activities]") {
  Rig g;
  g.send({snapshotEvent(json{{"p", 1}}, 1), activitySnapshot("m1", kForm, 0)}, 1000);
  ViewToken state, form;
  REQUIRE(g.guard.view("/p", nullptr, &state).ok);
  REQUIRE(g.guard.viewActivity("m1", "/amount", nullptr, &form).ok);
  g.send({deltaEvent(op("replace", "/nope", 1), 1, 2)}, 1100);  // the state resyncs
  CHECK(g.guard.approve(state, 1100, nullptr).reason == Code::Resyncing);
  CHECK(g.guard.approve(form, 1100, nullptr).ok);
  g.send({snapshotEvent(json{{"p", 1}}, 5), activityDelta("m1", op("replace", "/nope", 1), 0, 1)}, 1200);
  CHECK(g.guard.approve(state, 1200, nullptr).ok);
  CHECK(g.guard.approve(form, 1200, nullptr).reason == Code::Resyncing);
}

TEST_CASE("activity guard: approve succeeds iff the content at path still has the token's digest (seeded)",
          "[guard][activities][property]") {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    RandomState rnd(seed);
    Rig g;
    json content = {{"a", rnd.value(2)}, {"b", rnd.value(2)}};
    uint64_t seq = 0, now = 1000;
    g.send({activitySnapshot("m1", content, seq)}, now);
    const char* path = rnd.chance(0.5) ? "/a" : "/b";
    ViewToken t;
    REQUIRE(g.guard.viewActivity("m1", path, nullptr, &t).ok);
    for (int step = 0; step < 8; ++step) {
      // A change at the path, elsewhere, or a value put back as it was.
      const char* at = rnd.chance(0.5) ? "/a" : "/b";
      json value = rnd.chance(0.3) ? content[json::json_pointer(at)] : rnd.value(2);
      content[json::json_pointer(at)] = value;
      g.send({activityDelta("m1", op("replace", at, value), seq, seq + 1)}, ++now);
      ++seq;
      const bool same = stateDigest(content[json::json_pointer(path)]) == t.digest;
      Approval a;
      INFO("seed " << seed << " step " << step);
      REQUIRE(g.guard.approve(t, now, &a).ok == same);
      if (same) {
        const json acts = {{"m1", content}};
        CHECK_FALSE(judgeApproval(a, nullptr, &acts));
        CHECK(a.seq == seq);
      }
    }
  }
}

TEST_CASE("activity guard: through the facade's JSON", "[guard][activities][facade]") {
  SyncFacade f(R"({"activities":true})");
  REQUIRE(!f.initFailure());
  f.feed(StateEmitter::encodeAll({activitySnapshot("m1", kForm, 3)}, false));
  f.noteActivity(100);
  json view = json::parse(f.guardViewActivity("m1", "/amount"));
  REQUIRE(view["ok"] == true);
  CHECK(view["token"] == json{{"path", "/amount"}, {"seq", 3}, {"digest", stateDigest(json(1200))}, {"messageId", "m1"}});
  CHECK(json::parse(f.guardViewActivity("m2", "/amount"))["code"] == "missing");
  CHECK(f.guardActivityBlocker("m2", 100) == "missing");
  CHECK(f.guardActivityBlocker("m1", 100).empty());
  json approved = json::parse(f.guardApprove(view["token"].dump(), 200));
  REQUIRE(approved["ok"] == true);
  CHECK(approved["approval"]["messageId"] == "m1");
  CHECK(approved["approval"]["seq"] == 3);
  json bad = view["token"];
  bad["messageId"] = 7;
  CHECK(json::parse(f.guardApprove(bad.dump(), 200))["code"] == "invalid-token");
  const std::string a = approved["approval"].dump();
  CHECK(SyncFacade::verify(a, kForm.dump(), R"({"m1":{"amount":1200}})"));
  CHECK_FALSE(SyncFacade::verify(a, R"({"amount":1200})", ""));  // never judged against the state
  CHECK_FALSE(SyncFacade::verify(a, "{}", R"({"m1":{"amount":1201}})"));
}

namespace {

json gateApproval(const json& value, const char* messageId) {
  json a = {{"path", "/amount"}, {"seq", 3}, {"digest", stateDigest(value)}, {"epoch", "e1"}};
  if (messageId) a["messageId"] = messageId;
  return a;
}

json gateRequest(const json& approval, const json* activities) {
  json resume = json::array({{{"interruptId", "i1"}, {"status", "resolved"}, {"payload", {{"approved", true}, {"approval", approval}}}}});
  json request = {{"threadId", "t1"}, {"resume", resume}, {"state", {{"amount", 1200}}}, {"records", {{"i1", nullptr}}}, {"claimed", json::object()}};
  if (activities) request["activities"] = *activities;
  return json::parse(judgeApprovalsJson(request.dump()));
}

}  // namespace

TEST_CASE("approval gate: an approval naming an activity is judged against the thread's content of it", "[approvals][activities]") {
  const json approval = gateApproval(1200, "m1");
  json peek = gateRequest(approval, nullptr);
  CHECK(peek["verdict"] == "peek");
  CHECK(peek["activities"] == json::array({"m1"}));
  CHECK(peek["interruptIds"] == json::array());
  const json held = {{"m1", {{"amount", 1200}}}};
  CHECK(gateRequest(approval, &held)["verdict"] == "claim");
  const json moved = {{"m1", {{"amount", 9}}}};
  json stale = gateRequest(approval, &moved);
  CHECK(stale["code"] == "approval-stale");  // although the state's /amount has that digest
  const json none = {{"m1", nullptr}};
  json missing = gateRequest(approval, &none);
  CHECK(missing["code"] == "approval-stale");
  CHECK(missing["message"].get<std::string>().find("holds no activity m1") != std::string::npos);
  json malformed = gateApproval(1200, nullptr);
  malformed["messageId"] = 5;
  CHECK(gateRequest(malformed, &held)["code"] == "invalid-request");
  // The key names the activity; a state approval's key is what it always was.
  const json tid = "t1", iid = "i1";
  CHECK(approvalEffectKey(approval, tid, iid) != approvalEffectKey(gateApproval(1200, nullptr), tid, iid));
  CHECK(approvalEffectKey(approval, tid, iid) != approvalEffectKey(gateApproval(1200, "m2"), tid, iid));
}

TEST_CASE("consume: an approval naming an activity is consumed against the agent's content of it", "[approval-consume][activities]") {
  const json approval = gateApproval(1200, "m1");
  auto step = [&](const json& activities) {
    json request = {{"threadId", "t1"}, {"interruptId", "i1"}, {"approval", approval}, {"state", {{"amount", 1200}}},
                    {"record", nullptr}, {"nowMs", 5}};
    if (!activities.is_null()) request["activities"] = activities;
    return json::parse(consumeApprovalStepJson(request.dump()));
  };
  CHECK(step(json{{"m1", {{"amount", 1200}}}})["step"] == "claim");
  CHECK(step(json{{"m1", {{"amount", 1}}}})["answer"]["reason"] == "changed");
  CHECK(step(nullptr)["answer"]["reason"] == "missing");
  CHECK(step(json{{"m2", {{"amount", 1200}}}})["answer"]["reason"] == "missing");
}
