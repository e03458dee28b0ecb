// Hostile-input catalogue: each case gets a clear outcome, leaves the state
// exactly as it was, and crashes nothing.
#include <catch2/catch.hpp>

#include "facade/sync_facade.h"
#include "random_state.h"
#include <agui_sync/sync_engine.h>

using namespace agui_sync;
using nlohmann::json;

namespace {

struct Fixture {
  explicit Fixture(Options o = Options{}) : engine(o) {
    std::vector<Outcome> out;
    engine.feed(agui_test::sseFrame(agui_test::snapshotEvent(initial, 1)), out);
  }
  std::vector<Outcome> feed(const std::string& bytes) {
    std::vector<Outcome> out;
    engine.feed(bytes, out);
    return out;
  }
  void requireUntouched() {
    REQUIRE(engine.state() == initial);
    REQUIRE(engine.lastSeq() == 1u);
  }
  json initial = json::parse(R"({"proposal":{"recipient":"alice","amount":10},"list":[1,2,3]})");
  SyncEngine engine;
};

std::string delta(const std::string& opsJson) {
  return "data: {\"type\":\"STATE_DELTA\",\"delta\":" + opsJson + ",\"metadata\":{\"seq\":2,\"baseSeq\":1}}\n\n";
}

bool hasKind(const std::vector<Outcome>& v, OutcomeKind k, const std::string& reason = "") {
  for (auto& o : v)
    if (o.kind == k && (reason.empty() || codeName(o.reason) == reason)) return true;
  return false;
}

}  // namespace

TEST_CASE("hostile: nesting 1,000,000 deep", "[hostile]") {
  Options o;
  o.maxEventBytes = 4u << 20;
  Fixture f(o);
  std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  auto out = f.feed(delta("[{\"op\":\"add\",\"path\":\"/x\",\"value\":" + deep + "}]"));
  CHECK(hasKind(out, OutcomeKind::Error, "limit-exceeded"));
  CHECK(hasKind(out, OutcomeKind::Resync, "limit-exceeded"));
  f.requireUntouched();
}

TEST_CASE("hostile: an event over the byte limit (100 MB)", "[hostile]") {
  Fixture f;  // default maxEventBytes is 8 MiB
  std::string chunk(1 << 20, 'a');
  std::vector<Outcome> out;
  f.engine.feed(std::string("data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"add\",\"path\":\"/x\",\"value\":\""), out);
  for (int i = 0; i < 100; ++i) f.engine.feed(chunk, out);  // 100 MB, never buffered whole
  f.engine.feed(std::string("\"}]}\n\n"), out);
  CHECK(hasKind(out, OutcomeKind::Error, "limit-exceeded"));
  CHECK(hasKind(out, OutcomeKind::Resync, "limit-exceeded"));
  f.requireUntouched();
}

TEST_CASE("hostile: an SSE line of 50 MB with no newline, then a normal event", "[hostile]") {
  Fixture f;
  std::string chunk(1 << 20, 'b');
  std::vector<Outcome> out;
  for (int i = 0; i < 50; ++i) f.engine.feed(chunk, out);
  CHECK(out.empty());  // nothing dispatched yet: no blank line
  f.engine.feed(std::string("\n\n"), out);
  f.requireUntouched();
  out.clear();
  f.engine.feed(delta(R"([{"op":"replace","path":"/proposal/amount","value":11}])"), out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Applied);
}

TEST_CASE("hostile: invalid UTF-8 and lone surrogates", "[hostile]") {
  Fixture f;
  // Invalid bytes are replaced with U+FFFD by SSE decoding (WHATWG), so the JSON
  // stays valid text: the value applies, carrying replacement characters.
  auto out = f.feed(delta(std::string("[{\"op\":\"add\",\"path\":\"/s\",\"value\":\"a\xff\xfe") + "b\"}]"));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Applied);
  CHECK(f.engine.state()["s"] == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  Fixture g;
  out = g.feed(delta(R"([{"op":"add","path":"/s","value":"\ud800"}])"));
  CHECK(hasKind(out, OutcomeKind::Error, "invalid-json"));
  g.requireUntouched();
  out = g.feed(delta(R"([{"op":"add","path":"/s","value":"\udc00x"}])"));
  CHECK(hasKind(out, OutcomeKind::Error, "invalid-json"));
}

TEST_CASE("hostile: NaN / Infinity literals and numbers beyond double range", "[hostile]") {
  for (const char* v : {"NaN", "Infinity", "-Infinity", "1e400", "-1e999"}) {
    Fixture f;
    INFO(v);
    auto out = f.feed(delta(std::string(R"([{"op":"replace","path":"/proposal/amount","value":)") + v + "}]"));
    CHECK(hasKind(out, OutcomeKind::Error, "invalid-json"));
    CHECK(hasKind(out, OutcomeKind::Resync));
    f.requireUntouched();
  }
}

TEST_CASE("hostile: duplicate keys resolve to the last one, as JSON.parse does", "[hostile]") {
  Fixture f;
  auto out = f.feed(delta(R"([{"op":"replace","path":"/list/0","value":1,"value":"second"}])"));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Applied);
  CHECK(f.engine.state()["list"][0] == "second");
}

TEST_CASE("hostile: __proto__ / constructor / prototype are ordinary keys", "[hostile]") {
  Fixture f;
  auto out = f.feed(delta(R"([{"op":"add","path":"/__proto__","value":{"polluted":true}},)"
                          R"({"op":"add","path":"/constructor","value":{"prototype":{"x":1}}},)"
                          R"({"op":"add","path":"/constructor/prototype/y","value":2}])"));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Applied);
  CHECK(f.engine.state()["__proto__"]["polluted"] == true);
  CHECK(f.engine.state()["constructor"]["prototype"]["y"] == 2);
}

TEST_CASE("hostile: bad pointers and a move into its own child", "[hostile]") {
  for (const char* ops : {R"([{"op":"add","path":"/proposal/amount/x","value":1}])",
                          R"([{"op":"replace","path":"/list/-1","value":1}])",
                          R"([{"op":"replace","path":"/list/01","value":1}])",
                          R"([{"op":"add","path":"/list/4","value":1}])",
                          R"([{"op":"remove","path":"/list/-"}])",
                          R"([{"op":"add","path":"no-slash","value":1}])",
                          R"([{"op":"move","from":"/proposal","path":"/proposal/inner"}])",
                          R"([{"op":"replace","path":"/list/0","value":0},{"op":"copy","from":"/nope","path":"/x"}])"}) {
    Fixture f;
    INFO(ops);
    auto out = f.feed(delta(ops));
    CHECK(hasKind(out, OutcomeKind::Resync));
    f.requireUntouched();
  }
}

TEST_CASE("hostile: a million tiny chunks", "[hostile]") {
  Fixture f;
  std::string stream;
  for (uint64_t s = 2; stream.size() < 1000000; ++s)
    stream += "data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"replace\",\"path\":\"/proposal/amount\",\"value\":" +
              std::to_string(s) + "}],\"metadata\":{\"seq\":" + std::to_string(s) + ",\"baseSeq\":" +
              std::to_string(s - 1) + "}}\n\n";
  std::vector<Outcome> out;
  size_t applied = 0;
  for (size_t i = 0; i < stream.size(); ++i) {
    f.engine.feed(reinterpret_cast<const uint8_t*>(stream.data() + i), 1, out);
    for (auto& o : out) applied += o.kind == OutcomeKind::Applied;
    out.clear();
  }
  CHECK(applied == *f.engine.lastSeq() - 1);
  CHECK(f.engine.status() == SyncStatus::Synced);
}

TEST_CASE("facade: options validation and JSON protocol", "[facade]") {
  SyncFacade bad("{\"maxDepth\":-1}");
  CHECK(bad.initFailure().has_value());
  SyncFacade notObject("[1]");
  CHECK(notObject.initFailure().has_value());
  SyncFacade f(R"({"reorderWindow":4,"initialState":{"a":1}})");
  REQUIRE(!f.initFailure());
  CHECK(f.stateJson() == R"({"a":1})");
  std::string r = f.feed("data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]}\n\n");
  json result = json::parse(r);
  CHECK(result["status"] == "unverified");
  CHECK(result["outcomes"][0]["kind"] == "applied");
  CHECK(result["outcomes"][0]["event"]["delta"][0]["value"] == 2);
  CHECK(result["outcomes"][0]["changedPaths"] == json::array({"/a"}));
  r = f.feed("id: 7\ndata: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"remove\",\"path\":\"/zz\"}]}\n\n");
  result = json::parse(r);
  CHECK(result["outcomes"][0]["kind"] == "resync");
  CHECK(result["outcomes"][0]["lastEventId"] == "7");
  CHECK(result["resync"]["reason"] == "patch-failed");
  CHECK(result["status"] == "resyncing");
  json m = json::parse(f.metricsJson());
  CHECK(m["resyncs"] == 1);
  CHECK(m["taxRate"] == 1.0);
}
