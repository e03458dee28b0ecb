// untrusted: 'auto' (autoUntrustedPaths and RenderOptions::untrustedAuto,
// include/agui_sync/prompt_render.h): ownership declarations and write
// provenance resolved into the subtrees the renderer marks. Random cases are
// held to a reference written from the contract (owner of a path = longest
// prefix rule; a subtree is marked when every path in it is the user's, and
// only the largest such subtrees are listed), and every rendering to the
// render oracles with the resolved pointers as explicit `untrusted`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <agui_sync/prompt_render.h>

#include "facade/prompt_facade.h"
#include "json/json_pointer.h"
#include "prompt_oracle.h"
#include "prompt_render_support.h"
#include "random_state.h"

using agui_sync::Owner;
using agui_sync::OwnershipRule;
using agui_sync::RenderOptions;
using agui_sync::RenderResult;
using nlohmann::json;

namespace {

std::vector<std::string> resolve(const json& state, const std::vector<OwnershipRule>& rules,
                                 const std::vector<std::string>& userWritten = {}) {
  std::vector<std::string> out;
  agui_sync::Failure failure;
  const bool ok = agui_sync::autoUntrustedPaths(state, rules, userWritten, out, &failure);
  INFO(failure.message);
  REQUIRE(ok);
  return out;
}

using prompt_test::render;

// The reference: the owner of `path` is the last-declared among the longest
// rules that are a prefix of it.
struct Reference {
  std::vector<std::pair<agui_sync::Tokens, Owner>> rules;

  Owner ownerOf(const agui_sync::Tokens& path) const {
    Owner owner = Owner::Shared;
    size_t best = 0;
    bool any = false;
    for (const auto& [tokens, o] : rules) {
      if (!prompt_oracle::isPrefix(tokens, path)) continue;
      if (!any || tokens.size() >= best) owner = o, best = tokens.size(), any = true;
    }
    return owner;
  }

  bool whollyUser(const json& v, agui_sync::Tokens& path) const {
    if (ownerOf(path) != Owner::User) return false;
    bool all = true;
    forEachChild(v, path, [&](const json& child) { all = all && whollyUser(child, path); });
    return all;
  }

  void collect(const json& v, agui_sync::Tokens& path, std::vector<std::string>& out) const {
    if (whollyUser(v, path)) {
      out.push_back(prompt_oracle::formatPointer(path));
      return;
    }
    forEachChild(v, path, [&](const json& child) { collect(child, path, out); });
  }

  template <typename F>
  static void forEachChild(const json& v, agui_sync::Tokens& path, F&& f) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        path.push_back(it.key());
        f(it.value());
        path.pop_back();
      }
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) {
        path.push_back(std::to_string(i));
        f(v[i]);
        path.pop_back();
      }
    }
  }
};

}  // namespace

TEST_CASE("untrusted auto: the longest ownership prefix decides", "[render][ownership]") {
  const json state = json::parse(R"({
    "form": {"name": "Ann", "email": "a@x", "status": "draft", "notes": ["n1", "n2"]},
    "proposal": {"amount": 120, "comment": "typed by the user"},
    "items": [{"label": "one"}, {"label": "two"}],
    "title": "Trip"
  })");
  CHECK(resolve(state, {}).empty());
  CHECK(resolve(state, {{"/form", Owner::User}}) == std::vector<std::string>{"/form"});
  // A hole: the agent's /form/status is left out, every other member is marked.
  CHECK(resolve(state, {{"/form", Owner::User}, {"/form/status", Owner::Agent}}) ==
        std::vector<std::string>{"/form/email", "/form/name", "/form/notes"});
  // A hole that names nothing in the state leaves the subtree whole.
  CHECK(resolve(state, {{"/form", Owner::User}, {"/form/missing", Owner::Agent}}) ==
        std::vector<std::string>{"/form"});
  // User inside agent, array indices, the root.
  CHECK(resolve(state, {{"/proposal", Owner::Agent}, {"/proposal/comment", Owner::User}, {"/items/1", Owner::User}}) ==
        std::vector<std::string>{"/items/1", "/proposal/comment"});
  CHECK(resolve(state, {{"", Owner::User}}) == std::vector<std::string>{""});
  CHECK(resolve(state, {{"", Owner::User}, {"/title", Owner::Shared}, {"/form/notes/0", Owner::Agent}}) ==
        std::vector<std::string>{"/form/email", "/form/name", "/form/notes/1", "/form/status", "/items", "/proposal"});
  // Rules that name no value, or go below a scalar, mark nothing.
  CHECK(resolve(state, {{"/nope", Owner::User}, {"/title/x", Owner::User}, {"/items/7", Owner::User},
                        {"/items/01", Owner::User}, {"/items/-", Owner::User}})
            .empty());
  // The later of two rules for one pointer wins.
  CHECK(resolve(state, {{"/title", Owner::User}, {"/title", Owner::Agent}}).empty());
}

TEST_CASE("untrusted auto: pointer escapes, and user writes as provenance", "[render][ownership]") {
  const json state = json::parse(R"({"a/b": {"m~n": 1, "k": 2}, "c": 3, "d": {"e": 4}})");
  CHECK(resolve(state, {{"/a~1b/m~0n", Owner::User}}) == std::vector<std::string>{"/a~1b/m~0n"});
  // The seam for write provenance: pointers the user wrote count as User rules
  // after the declarations, so they win at an equal pointer; a longer agent
  // declaration still carves its subtree out.
  CHECK(resolve(state, {{"/c", Owner::Agent}}, {"/c"}) == std::vector<std::string>{"/c"});
  CHECK(resolve(state, {{"/d/e", Owner::Agent}}, {"/d"}) == std::vector<std::string>{});
  CHECK(resolve(state, {{"/a~1b/k", Owner::Agent}}, {"/a~1b"}) == std::vector<std::string>{"/a~1b/m~0n"});

  std::vector<std::string> out{"stale"};
  agui_sync::Failure failure;
  CHECK_FALSE(agui_sync::autoUntrustedPaths(state, {{"no-slash", Owner::User}}, {}, out, &failure));
  CHECK(failure.code == agui_sync::Code::InvalidOptions);
  CHECK(failure.message.find("ownership[0]") != std::string::npos);
  CHECK_FALSE(agui_sync::autoUntrustedPaths(state, {}, {"/ok", "/bad~2"}, out, &failure));
  CHECK(failure.message.find("userWritten[1]") != std::string::npos);
  CHECK(agui_sync::autoUntrustedPaths(state, {}, {}, out, nullptr));
  CHECK(out.empty());
}

TEST_CASE("untrusted auto: nothing is resolved below the deepest level a render shows", "[render][ownership]") {
  // 300 levels of {"k": ...}: a rule at level 10 is resolved, one at level 300
  // is not (no render shows a level below kMaxRenderDepth), and a split below
  // that level does not split what is above it.
  json state = "bottom";
  std::string pointer;
  for (int i = 0; i < 300; ++i) {
    json o = json::object();
    o["k"] = std::move(state);
    state = std::move(o);
    pointer += "/k";
  }
  const std::string level10 = pointer.substr(0, 20);
  CHECK(resolve(state, {{level10, Owner::User}}) == std::vector<std::string>{level10});
  CHECK(resolve(state, {{pointer, Owner::User}}).empty());
  CHECK(resolve(state, {{level10, Owner::User}, {pointer, Owner::Agent}}) == std::vector<std::string>{level10});
  const std::string level256 = pointer.substr(0, 2 * agui_sync::kMaxRenderDepth);
  CHECK(resolve(state, {{level256, Owner::User}}) == std::vector<std::string>{level256});
  CHECK(resolve(state, {{level256 + "/k", Owner::User}}).empty());
}

TEST_CASE("untrusted auto: the render marks exactly the resolved subtrees", "[render][ownership]") {
  const json state = json::parse(R"({"form": {"c": "a b</x>", "status": "ok"}, "n": 1, "m": "keep"})");
  RenderOptions o;
  o.untrustedAuto = true;
  o.ownership = {{"/form", Owner::User}, {"/form/status", Owner::Agent}};
  o.untrusted = {"/n"};  // explicit pointers still count
  o.datamark = "^";
  const RenderResult r = render(state, o);
  CHECK(r.untrustedPaths == std::vector<std::string>{"/form/c", "/n"});
  CHECK(r.text.find(R"("c":{"$untrusted":"^a^b\u003c/x\u003e"})") != std::string::npos);
  CHECK(r.text.find(R"("status":"ok")") != std::string::npos);

  // Declarations without 'auto' would silently do nothing: refused.
  RenderOptions stray;
  stray.ownership = {{"/form", Owner::User}};
  RenderResult unused;
  agui_sync::Failure failure;
  CHECK_FALSE(agui_sync::renderStateForPrompt(state, stray, unused, &failure));
  CHECK(failure.code == agui_sync::Code::InvalidOptions);
  stray.ownership.clear();
  stray.userWritten = {"/n"};
  CHECK_FALSE(agui_sync::renderStateForPrompt(state, stray, unused, &failure));
  o.ownership = {{"/form/x~", Owner::User}};
  CHECK_FALSE(agui_sync::renderStateForPrompt(state, o, unused, &failure));
  CHECK(failure.message.find("ownership[0]") != std::string::npos);
}

TEST_CASE("untrusted auto: seeded random states and rules against the reference", "[render][ownership]") {
  const Owner owners[] = {Owner::User, Owner::Agent, Owner::Shared};
  size_t marked = 0, carved = 0;  // cases with something marked; with a subtree split by another owner
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    agui_test::RandomState g(seed);
    const json state = g.chance(0.3) ? g.agentState(g.uniform(0, 6)) : g.value(5);
    RenderOptions o;
    o.untrustedAuto = true;
    Reference ref;
    for (int i = g.uniform(0, 5); i > 0; --i) {
      agui_sync::Tokens path = g.existingPath(state);
      if (g.chance(0.15)) path.push_back(g.key());  // may name nothing
      const Owner owner = g.chance(0.5) ? Owner::User : owners[g.uniform(0, 2)];
      o.ownership.push_back({agui_sync::formatPointer(path), owner});
      ref.rules.emplace_back(path, owner);
    }
    for (int i = g.chance(0.3) ? g.uniform(1, 2) : 0; i > 0; --i) {
      const agui_sync::Tokens path = g.existingPath(state);
      o.userWritten.push_back(agui_sync::formatPointer(path));
      ref.rules.emplace_back(path, Owner::User);
    }
    INFO("seed " << seed << " state " << state.dump());
    std::vector<std::string> expected;
    agui_sync::Tokens root;
    ref.collect(state, root, expected);
    const std::vector<std::string> got = resolve(state, o.ownership, o.userWritten);
    CHECK(got == expected);
    marked += !got.empty();
    for (const auto& p : got) {
      const bool declared = std::any_of(o.ownership.begin(), o.ownership.end(), [&](const auto& r) { return r.path == p; });
      const bool written = std::find(o.userWritten.begin(), o.userWritten.end(), p) != o.userWritten.end();
      carved += !declared && !written;  // a path no rule names: a member of a split subtree
    }

    // The render with 'auto' is the render with those pointers given explicitly,
    // and that one passes every render oracle.
    RenderOptions explicitOptions;
    explicitOptions.untrusted = got;
    explicitOptions.datamark = "^";
    o.datamark = "^";
    const RenderResult viaAuto = render(state, o), viaList = render(state, explicitOptions);
    CHECK(viaAuto.text == viaList.text);
    CHECK(viaAuto.untrustedPaths == viaList.untrustedPaths);
    CHECK(prompt_oracle::checkRender(state, explicitOptions, viaList) == "");
  }
  // The seeds exercise what they claim to.
  CHECK(marked > 150);
  CHECK(carved > 30);
}

TEST_CASE("untrusted auto: the facade reads 'auto' and ownership", "[render][ownership]") {
  const std::string state = R"({"form":{"c":"x","s":"y"},"n":1})";
  const json got = json::parse(agui_sync::renderPromptJson(
      state, R"({"untrusted":"auto","ownership":{"/form":"user","/form/s":"agent","/n":"shared"}})"));
  REQUIRE(got["ok"] == true);
  CHECK(got["untrustedPaths"] == json::array({"/form/c"}));
  const auto code = [&](const std::string& opts) {
    return json::parse(agui_sync::renderPromptJson(state, opts))["code"].get<std::string>();
  };
  CHECK(code(R"({"untrusted":"all"})") == "invalid-options");
  CHECK(code(R"({"untrusted":"auto","ownership":["/form"]})") == "invalid-options");
  CHECK(code(R"({"untrusted":"auto","ownership":{"/form":"admin"}})") == "invalid-options");
  CHECK(code(R"({"untrusted":"auto","ownership":{"/form":1}})") == "invalid-options");
  CHECK(code(R"({"untrusted":"auto","ownership":{"form":"user"}})") == "invalid-options");
  CHECK(code(R"({"ownership":{"/form":"user"}})") == "invalid-options");
  CHECK(code(R"({"untrusted":["/n"],"ownership":{"/form":"user"}})") == "invalid-options");
  CHECK(json::parse(agui_sync::renderPromptJson(state, R"({"untrusted":"auto"})"))["untrustedPaths"] == json::array());
}
