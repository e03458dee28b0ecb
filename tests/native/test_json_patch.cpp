// JSON Pointer (RFC 6901) and JSON Patch (RFC 6902): conformance suites, unit
// cases per operation, and atomicity (a failed patch leaves the document as it was).
#include <catch2/catch.hpp>

#include <random>

#include "json/json_patch.h"
#include "json/json_pointer.h"
#include "test_support.h"

using agui_sync::applyPatch;
using agui_sync::PatchStatus;
using agui_sync::PatchTransaction;
using nlohmann::json;

namespace {

struct SuiteCounts {
  int enabled = 0, disabled = 0, expected = 0, errors = 0;
};

SuiteCounts runPatchSuite(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  SuiteCounts counts;
  json cases = agui_test::readJson(path);
  for (const auto& c : cases) {
    std::string name = c.value("comment", c.dump().substr(0, 80));
    if (c.value("disabled", false)) {
      ++counts.disabled;
      continue;
    }
    ++counts.enabled;
    json doc = c["doc"];
    const json before = doc;
    auto r = applyPatch(doc, c["patch"]);
    INFO(file << ": " << name);
    if (c.contains("error")) {
      ++counts.errors;
      CHECK_FALSE(r.ok());
      CHECK(doc == before);  // atomic: nothing half-applied
    } else {
      CHECK(r.ok());
      INFO(r.message);
      if (c.contains("expected")) {
        ++counts.expected;
        CHECK(doc == c["expected"]);
      }
    }
  }
  return counts;
}

}  // namespace

// The suite as the npm package json-patch-test-suite 1.1.0 ships it (a
// devDependency, always present under make test): counts pinned so a
// silently shorter file cannot pass.
TEST_CASE("json-patch-tests conformance: tests.json", "[patch][conformance]") {
  auto n = runPatchSuite(agui_test::jsonPatchSuitePath("tests.json"));
  CHECK(n.enabled == 75);
  CHECK(n.disabled == 3);
  CHECK(n.errors == 19);
}

TEST_CASE("json-patch-tests conformance: spec_tests.json (RFC 6902 appendix A)", "[patch][conformance]") {
  auto n = runPatchSuite(agui_test::jsonPatchSuitePath("spec_tests.json"));
  CHECK(n.enabled == 16);
  CHECK(n.disabled == 1);
  CHECK(n.errors == 4);
}

// The suite's newer revision (2a928f9, 17 more cases) where the external
// conformance folder carries it.
TEST_CASE("json-patch-tests conformance: tests.json at 2a928f9 (external folder)", "[patch][conformance]") {
  AGUI_NEEDS_CONFORMANCE();
  auto n = runPatchSuite(agui_test::conformancePath("json-patch-tests/tests.json"));
  CHECK(n.enabled == 92);
  CHECK(n.disabled == 3);
  CHECK(n.errors == 30);
}

// RFC 6901 section 3 and 4, read literally, one character at a time: the
// reference the run-based parser is held to.
static bool referencePointer(const std::string& p, agui_sync::Tokens& out) {
  out.clear();
  if (p.empty()) return true;
  if (p[0] != '/') return false;
  std::string token;
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i] == '/') {
      out.push_back(token);
      token.clear();
    } else if (p[i] == '~') {
      if (i + 1 >= p.size() || (p[i + 1] != '0' && p[i + 1] != '1')) return false;
      token.push_back(p[++i] == '0' ? '~' : '/');
    } else {
      token.push_back(p[i]);
    }
  }
  out.push_back(token);
  return true;
}

TEST_CASE("pointer parsing agrees with a literal reading of RFC 6901", "[pointer][property]") {
  std::mt19937 rng(6901);
  const char alphabet[] = {'/', '/', '~', '0', '1', '2', 'a', 'b'};
  agui_sync::Tokens got, want;
  std::string err;
  for (int i = 0; i < 50000; ++i) {
    std::string p;
    const size_t n = rng() % 14;
    for (size_t k = 0; k < n; ++k) p.push_back(alphabet[rng() % sizeof alphabet]);
    if (rng() % 4) p.insert(p.begin(), '/');
    const bool ok = referencePointer(p, want);
    INFO(p);
    REQUIRE(agui_sync::parsePointer(p, got, err) == ok);
    if (ok) REQUIRE(got == want);
  }
}

TEST_CASE("pointer parsing and escapes", "[pointer]") {
  agui_sync::Tokens t;
  std::string err;
  REQUIRE(agui_sync::parsePointer("", t, err));
  CHECK(t.empty());
  REQUIRE(agui_sync::parsePointer("/a~1b/m~0n/", t, err));
  CHECK(t == agui_sync::Tokens{"a/b", "m~n", ""});
  CHECK(agui_sync::formatPointer(t) == "/a~1b/m~0n/");
  CHECK_FALSE(agui_sync::parsePointer("a", t, err));
  CHECK_FALSE(agui_sync::parsePointer("/~2", t, err));
  CHECK_FALSE(agui_sync::parsePointer("/~", t, err));
  size_t idx = 0;
  CHECK(agui_sync::parseArrayIndex("0", idx));
  CHECK(agui_sync::parseArrayIndex("10", idx));
  CHECK(idx == 10);
  CHECK_FALSE(agui_sync::parseArrayIndex("01", idx));
  CHECK_FALSE(agui_sync::parseArrayIndex("-1", idx));
  CHECK_FALSE(agui_sync::parseArrayIndex("+1", idx));
  CHECK_FALSE(agui_sync::parseArrayIndex("1e0", idx));
  CHECK_FALSE(agui_sync::parseArrayIndex("-", idx));
  CHECK_FALSE(agui_sync::parseArrayIndex("99999999999999999999", idx));
}

TEST_CASE("each operation", "[patch]") {
  json doc = json::parse(R"({"a":{"b":[1,2,3]},"s":"x"})");
  SECTION("add appends with -, and reports the index it landed at") {
    PatchTransaction tx(doc);
    REQUIRE(tx.apply(json::parse(R"([{"op":"add","path":"/a/b/-","value":4}])")).ok());
    CHECK(doc["a"]["b"] == json::parse("[1,2,3,4]"));
    CHECK(tx.changedPaths() == std::vector<std::string>{"/a/b/3"});
  }
  SECTION("add inserts at index and at end") {
    REQUIRE(applyPatch(doc, json::parse(R"([{"op":"add","path":"/a/b/0","value":0},{"op":"add","path":"/a/b/4","value":9}])")).ok());
    CHECK(doc["a"]["b"] == json::parse("[0,1,2,3,9]"));
  }
  SECTION("add past the end fails") {
    CHECK_FALSE(applyPatch(doc, json::parse(R"([{"op":"add","path":"/a/b/5","value":0}])")).ok());
  }
  SECTION("remove and replace") {
    REQUIRE(applyPatch(doc, json::parse(R"([{"op":"remove","path":"/a/b/1"},{"op":"replace","path":"/s","value":{"k":1}}])")).ok());
    CHECK(doc == json::parse(R"({"a":{"b":[1,3]},"s":{"k":1}})"));
  }
  SECTION("replace the whole document") {
    REQUIRE(applyPatch(doc, json::parse(R"([{"op":"replace","path":"","value":[1]}])")).ok());
    CHECK(doc == json::parse("[1]"));
  }
  SECTION("move and copy") {
    REQUIRE(applyPatch(doc, json::parse(R"([{"op":"copy","from":"/a/b","path":"/c"},{"op":"move","from":"/s","path":"/a/s"}])")).ok());
    CHECK(doc == json::parse(R"({"a":{"b":[1,2,3],"s":"x"},"c":[1,2,3]})"));
  }
  SECTION("move into own child fails") {
    CHECK_FALSE(applyPatch(doc, json::parse(R"([{"op":"move","from":"/a","path":"/a/b/0"}])")).ok());
  }
  SECTION("test uses RFC equality") {
    CHECK(applyPatch(doc, json::parse(R"([{"op":"test","path":"/a","value":{"b":[1.0,2,3e0]}}])")).ok());
    auto r = applyPatch(doc, json::parse(R"([{"op":"test","path":"/a/b/0","value":"1"}])"));
    CHECK(r.status == PatchStatus::PreconditionFailed);
    json obj1 = json::parse(R"({"x":1,"y":2})");
    CHECK(applyPatch(obj1, json::parse(R"([{"op":"test","path":"","value":{"y":2,"x":1}}])")).ok());
  }
  SECTION("pointers through scalars, negative and leading-zero indices") {
    for (const char* p : {"/s/x", "/a/b/-1", "/a/b/01", "/a/b/x", "/a/b/-"}) {
      json before = doc;
      json patch = json::array({json{{"op", "replace"}, {"path", p}, {"value", 0}}});
      INFO(p);
      CHECK_FALSE(applyPatch(doc, patch).ok());
      CHECK(doc == before);
    }
  }
}

TEST_CASE("atomic: a failing op rolls back every earlier op exactly", "[patch][atomic]") {
  json doc = json::parse(R"({"list":[{"id":1},{"id":2},{"id":3}],"m":{"k":"v"},"n":5})");
  const json before = doc;
  json patch = json::parse(R"([
    {"op":"add","path":"/list/1","value":{"id":9}},
    {"op":"remove","path":"/list/0"},
    {"op":"replace","path":"/m/k","value":[1,2]},
    {"op":"move","from":"/n","path":"/m/n"},
    {"op":"copy","from":"/list","path":"/copy"},
    {"op":"add","path":"/m/new","value":true},
    {"op":"replace","path":"","value":{"gone":true}},
    {"op":"test","path":"/gone","value":false}
  ])");
  PatchTransaction tx(doc);
  auto r = tx.apply(patch);
  CHECK(r.status == PatchStatus::PreconditionFailed);
  CHECK(r.opIndex == 7);
  CHECK(doc == before);
  CHECK(doc.dump() == before.dump());
}

TEST_CASE("rollback after success restores the document (used for size/digest checks)", "[patch][atomic]") {
  json doc = json::parse(R"({"a":[1,2,3],"b":{"c":1}})");
  const json before = doc;
  PatchTransaction tx(doc);
  REQUIRE(tx.apply(json::parse(R"([{"op":"remove","path":"/a/0"},{"op":"add","path":"/b/d","value":[1]},{"op":"move","from":"/b","path":"/a/0"}])")).ok());
  CHECK(tx.changedPaths() == std::vector<std::string>{"/a/0", "/b/d", "/b", "/a/0"});
  CHECK(doc != before);
  tx.rollback();
  CHECK(doc == before);
}

TEST_CASE("malformed operations are rejected before anything applies", "[patch]") {
  json doc = json::parse(R"({"a":1})");
  for (const char* p : {R"({"op":"add","path":"/b"})", R"({"op":"nope","path":"/a"})", R"({"path":"/a"})",
                        R"({"op":"move","path":"/a"})", R"({"op":"add","path":"a","value":1})", R"(5)"}) {
    json patch = json::array({json::object({{"op", "add"}, {"path", "/ok"}, {"value", 1}}), json::parse(p)});
    INFO(p);
    auto r = applyPatch(doc, patch);
    CHECK(r.status == PatchStatus::Malformed);
    CHECK(doc == json::parse(R"({"a":1})"));
  }
  CHECK(applyPatch(doc, json::object()).status == PatchStatus::Malformed);
}

TEST_CASE("depth limit applies to values a patch adds", "[patch][limits]") {
  json doc = json::parse(R"({"a":{"b":{}}})");
  json deep = json::array();
  for (int i = 0; i < 10; ++i) deep = json::array({deep});
  PatchTransaction tx(doc, 8);
  auto r = tx.apply(json::array({json{{"op", "add"}, {"path", "/a/b/c"}, {"value", deep}}}));
  CHECK(r.status == PatchStatus::LimitExceeded);
  CHECK(doc == json::parse(R"({"a":{"b":{}}})"));
}
