// The approval guard: every refusal reason, and verification on the agent side.
#include <catch2/catch.hpp>

#include <agui_sync/approval_guard.h>
#include "random_state.h"

using namespace agui_sync;
using agui_test::deltaEvent;
using agui_test::snapshotEvent;
using agui_test::sseFrame;
using nlohmann::json;

namespace {
struct Rig {
  Rig() : guard(engine, GuardOptions{}) {}
  void send(const json& e, uint64_t now) {
    std::vector<Outcome> out;
    engine.feed(sseFrame(e), out);
    guard.noteActivity(now);
  }
  SyncEngine engine;
  ApprovalGuard guard;
};
json proposal(const char* who) { return {{"proposal", {{"recipient", who}, {"amount", 100}}}, {"other", 0}}; }
json replaceOp(const char* path, json v) { return json::array({json{{"op", "replace"}, {"path", path}, {"value", v}}}); }
}  // namespace

TEST_CASE("guard: view then approve binds path, seq and digest", "[guard]") {
  Rig g;
  g.send(snapshotEvent(proposal("alice"), 3), 1000);
  const json* value = nullptr;
  ViewToken t;
  REQUIRE(g.guard.view("/proposal", &value, &t).ok);
  CHECK((*value)["recipient"] == "alice");
  CHECK(t.seq == 3u);
  CHECK(t.digest.rfind("sha256:", 0) == 0);
  // An unrelated change does not invalidate what the person saw.
  g.send(deltaEvent(replaceOp("/other", 1), 3, 4), 1100);
  Approval a;
  REQUIRE(g.guard.approve(t, 1200, &a).ok);
  CHECK(a.seq == 4u);
  CHECK(a.viewedSeq == 3u);
  CHECK(verifyApproval(a, proposal("alice")));
  CHECK_FALSE(verifyApproval(a, proposal("mallory")));
}

TEST_CASE("guard: refusal reasons", "[guard]") {
  Rig g;
  ViewToken t;
  CHECK(g.guard.view("/proposal", nullptr, &t).reason == agui_sync::Code::Missing);
  g.send(snapshotEvent(proposal("alice"), std::nullopt), 1000);
  REQUIRE(g.guard.view("/proposal", nullptr, &t).ok);
  CHECK(g.guard.approve(t, 1000, nullptr).reason == agui_sync::Code::Unverified);
  g.send(snapshotEvent(proposal("alice"), 1), 1000);
  CHECK(g.guard.approve(t, 1000 + 15001, nullptr).reason == agui_sync::Code::Stale);
  g.send(deltaEvent(replaceOp("/other", 2), 2, 3), 2000);  // held: gap at seq 2
  CHECK(g.guard.approve(t, 2000, nullptr).reason == agui_sync::Code::GapPending);
  g.send(deltaEvent(replaceOp("/proposal/recipient", "bob"), 1, 2), 2100);  // fills the gap
  CHECK(g.guard.approve(t, 2100, nullptr).reason == agui_sync::Code::Changed);
  g.send(deltaEvent(replaceOp("/nope", 1), 3, 4), 2200);  // fails -> resyncing
  CHECK(g.guard.approve(t, 2200, nullptr).reason == agui_sync::Code::Resyncing);
  g.guard.noteDisconnected();
  CHECK(g.guard.approve(t, 2200, nullptr).reason == agui_sync::Code::Resyncing);  // the stronger reason wins
  ViewToken bad = t;
  bad.path = "nope";
  g.send(snapshotEvent(proposal("alice"), 9), 3000);
  CHECK(g.guard.approve(bad, 3000, nullptr).reason == agui_sync::Code::InvalidToken);
  CHECK(g.guard.approve(t, 3000, nullptr).ok);
}

TEST_CASE("guard: trustUnsequenced opts in to plain AG-UI backends", "[guard]") {
  SyncEngine engine;
  ApprovalGuard guard(engine, GuardOptions{15000, true});
  std::vector<Outcome> out;
  engine.feed(sseFrame(snapshotEvent(proposal("alice"), std::nullopt)), out);
  guard.noteActivity(10);
  ViewToken t;
  REQUIRE(guard.view("/proposal", nullptr, &t).ok);
  Approval a;
  CHECK(guard.approve(t, 20, &a).ok);
  CHECK_FALSE(a.seq);
}

#include "facade/sync_facade.h"

TEST_CASE("facade: guard and canonicalization through the JSON protocol", "[guard][facade]") {
  SyncFacade f(R"({"staleAfterMs":1000})");
  REQUIRE(!f.initFailure());
  f.feed("data: " + snapshotEvent(proposal("alice"), 1).dump() + "\n\n");
  f.noteActivity(100);
  json view = json::parse(f.guardView("/proposal"));
  REQUIRE(view["ok"] == true);
  CHECK(view["token"]["seq"] == 1);
  CHECK(json::parse(f.guardApprove(view["token"].dump(), 2000))["code"] == "stale");
  json approved = json::parse(f.guardApprove(view["token"].dump(), 500));
  REQUIRE(approved["ok"] == true);
  CHECK(approved["approval"]["digest"] == view["token"]["digest"]);
  CHECK(SyncFacade::verify(approved["approval"].dump(), proposal("alice").dump(), ""));
  CHECK_FALSE(SyncFacade::verify(approved["approval"].dump(), proposal("bob").dump(), ""));
  CHECK_FALSE(SyncFacade::verify("{}", proposal("alice").dump(), ""));
  CHECK(json::parse(f.guardApprove("not json", 500))["code"] == "invalid-token");
  CHECK(json::parse(f.guardView("/nope"))["code"] == "missing");
  json c = json::parse(SyncFacade::canonicalize(R"({"b":1.0,"a":[1e21,"\u00e9"]})"));
  CHECK(c["canonical"] == "{\"a\":[1e+21,\"\xC3\xA9\"],\"b\":1}");
  CHECK(c["digest"].get<std::string>().size() == 7 + 64);
  CHECK(json::parse(SyncFacade::canonicalize("{"))["ok"] == false);
  CHECK(json::parse(SyncFacade::canonicalize(std::string(1000, '[')))["ok"] == false);
}

TEST_CASE("guard: a broken connection blocks approvals at once, until bytes arrive again", "[guard]") {
  Rig g;
  g.send(snapshotEvent(proposal("alice"), 1), 1000);
  ViewToken t;
  REQUIRE(g.guard.view("/proposal", nullptr, &t).ok);
  g.guard.noteDisconnected();
  CHECK(g.guard.approve(t, 1001, nullptr).reason == agui_sync::Code::Disconnected);
  g.guard.noteActivity(1500);
  CHECK(g.guard.approve(t, 1501, nullptr).ok);
}
