// The access gate (src/facade/access_gate.h, SECURITY.md): who may read,
// change or consume a thread. Its order is the contract, checked over every
// combination of what a driver can know, and its JSON facade (what the proxy
// and the middleware call) refuses malformed requests with a failure, never a
// verdict.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "facade/access_facade.h"
#include "facade/access_gate.h"

using agui_sync::AccessDecision;
using agui_sync::AccessInput;
using agui_sync::AccessKind;
using agui_sync::AccessVerdict;
using nlohmann::json;

namespace {

// Every combination a driver can reach.
template <typename F>
void forEachInput(F&& check) {
  for (AccessKind kind : {AccessKind::Attach, AccessKind::Resume, AccessKind::Start})
    for (int bits = 0; bits < 16; ++bits)
      for (int authorized = -1; authorized <= 1; ++authorized)
        for (int status : {0, 200, 204, 401, 403, 500}) {
          AccessInput in;
          in.kind = kind;
          in.touchesThread = bits & 1;
          in.looked = bits & 2;
          in.granted = (bits & 4) && in.looked;
          in.hasAuthorizer = bits & 8;
          in.authorized = in.hasAuthorizer ? authorized : -1;
          in.upstreamStatus = status;
          check(in, agui_sync::judgeAccess(in));
        }
}

}  // namespace

TEST_CASE("access gate: nothing of a thread is served without a grant, the hook's yes or the backend's 2xx") {
  forEachInput([](const AccessInput& in, const AccessDecision& d) {
    if (d.verdict == AccessVerdict::Serve) CHECK((in.looked && in.granted));
    if (d.verdict == AccessVerdict::Grant) CHECK((in.authorized == 1 || (in.upstreamStatus >= 200 && in.upstreamStatus < 300)));
    // Only a run carrying nothing of the thread goes to the backend for a requester the gate does not know.
    if (d.verdict == AccessVerdict::Forward) {
      CHECK(in.kind == AccessKind::Start);
      CHECK_FALSE(in.touchesThread);
      CHECK_FALSE(in.granted);
      CHECK(in.authorized != 1);
    }
    if (d.verdict == AccessVerdict::Refuse) CHECK(d.status == 403);
  });
}

TEST_CASE("access gate: the backend's answer decides first, a refusal even over a grant") {
  forEachInput([](const AccessInput& in, const AccessDecision& d) {
    if (in.upstreamStatus == 0) return;
    const bool ok = in.upstreamStatus >= 200 && in.upstreamStatus < 300;
    CHECK(d.verdict == (ok ? AccessVerdict::Grant : AccessVerdict::Deny));
    if (!ok) CHECK(d.status == in.upstreamStatus);
  });
}

TEST_CASE("access gate: the order of the steps") {
  AccessInput in;
  in.kind = AccessKind::Attach;
  CHECK(agui_sync::judgeAccess(in).verdict == AccessVerdict::Lookup);
  in.looked = true;
  CHECK(agui_sync::judgeAccess(in).verdict == AccessVerdict::Refuse);  // no hook, no grant: an attach reads nothing
  in.hasAuthorizer = true;
  CHECK(agui_sync::judgeAccess(in).verdict == AccessVerdict::Ask);
  in.authorized = 0;
  CHECK(agui_sync::judgeAccess(in).verdict == AccessVerdict::Refuse);
  in.authorized = 1;
  CHECK(agui_sync::judgeAccess(in).verdict == AccessVerdict::Grant);
  in.granted = true;
  in.authorized = -1;
  CHECK(agui_sync::judgeAccess(in).verdict == AccessVerdict::Serve);  // a stored grant: the hook is not asked
  AccessInput start;
  start.kind = AccessKind::Start;
  start.looked = true;
  CHECK(agui_sync::judgeAccess(start).verdict == AccessVerdict::Forward);
  start.touchesThread = true;
  CHECK(agui_sync::judgeAccess(start).verdict == AccessVerdict::Refuse);
}

TEST_CASE("access facade: grant ids name (thread, requester) and no other; malformed requests fail") {
  auto ask = [](const json& request) { return json::parse(agui_sync::judgeAccessJson(request.dump())); };
  const json base = {{"kind", "attach"}, {"threadId", "t"}, {"credentials", {"Bearer alice", nullptr}}};
  const json first = ask(base);
  REQUIRE(first["verdict"] == "lookup");
  CHECK(first["scope"] == "grant");
  CHECK(first["id"].get<std::string>().size() == 64);
  json other = base;
  other["credentials"] = {"Bearer mallory", nullptr};
  CHECK(ask(other)["id"] != first["id"]);
  other = base;
  other["threadId"] = "u";
  CHECK(ask(other)["id"] != first["id"]);
  // The thread id and the credentials cannot be shifted into each other.
  json shifted = base;
  shifted["threadId"] = "t\",\"Bearer alice";
  shifted["credentials"] = json::array({nullptr});
  CHECK(ask(shifted)["id"] != first["id"]);
  // Resume entries that carry one of our approvals read the thread; others do not.
  json start = {{"kind", "start"}, {"threadId", "t"}, {"credentials", json::array()}, {"looked", true}};
  start["resume"] = json::array({{{"interruptId", "i"}, {"status", "resolved"}, {"payload", {{"approved", true}}}}});
  CHECK(ask(start)["verdict"] == "forward");
  start["resume"][0]["payload"]["approval"] = {{"path", "/p"}, {"digest", "d"}};
  CHECK(ask(start)["verdict"] == "refuse");
  json refused = base;
  refused["looked"] = true;
  const json answer = ask(refused);
  CHECK(answer["verdict"] == "refuse");
  CHECK(answer["status"] == 403);
  CHECK(answer["code"] == "not-authorized");
  for (const char* bad : {"{}", "[]", "not json", R"({"kind":"read","threadId":"t","credentials":[]})",
                          R"({"kind":"attach","threadId":1,"credentials":[]})",
                          R"({"kind":"attach","threadId":"t","credentials":[1]})",
                          R"({"kind":"start","threadId":"t","credentials":[],"upstreamStatus":99})",
                          R"({"kind":"start","threadId":"t","credentials":[],"upstreamStatus":[[[[[[1]]]]]]})"}) {
    const json failed = json::parse(agui_sync::judgeAccessJson(bad));
    CHECK(failed["ok"] == false);
    CHECK(failed.contains("code"));
  }
}
