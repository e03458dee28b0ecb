// JsonReader (src/json_reader.*): accepts exactly what nlohmann::json::parse
// accepts and builds equal values, except for its documented differences; and
// the event decoder that walks events with it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "receive/event_decoder.h"
#include "json/json_measure.h"
#include "json/json_reader.h"
#include "test_support.h"

using agui_sync::JsonReader;
using nlohmann::json;

namespace {

// Both parsers on one text: same verdict, same value (dump() tells 1 from 1.0).
void expectSameAsNlohmann(const std::string& text) {
  INFO("text: " << text);
  json ours;
  std::string error;
  const bool ok = JsonReader::parse(text, 1000, ours, &error);
  const json theirs = json::parse(text, nullptr, false);
  CHECK(ok == !theirs.is_discarded());
  if (ok && !theirs.is_discarded()) CHECK(ours.dump() == theirs.dump());
  JsonReader skipper(text, 1000);
  CHECK((skipper.skipValue() && skipper.finish()) == ok);
}

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("JsonReader: accepts and rejects exactly like json::parse", "[json_reader]") {
  const std::vector<std::string> texts = {
      // values
      "{}", "[]", "0", "-0", "-0.0", "1.5", "1E2", "1e-2", "1e+2", "true", "false", "null", "\"\"",
      " \t\r\n[ 1 , 2 ]\n", "{\"a\":{\"b\":[1,{\"c\":null}]}}", "{\"a\":1,\"a\":2}",
      // numbers at the edges of int64 / uint64 / double
      "9223372036854775807", "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
      "18446744073709551616", "123456789012345678901234567890", "0.1", "2.2250738585072014e-308",
      "4.9e-324", "1e-400", "1.7976931348623157e308", "9007199254740993", "0.30000000000000004",
      "123.456e-7", "100000000000000000000000", "5e22", "5e23",
      // strings and escapes
      "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u0041\\u00e9\\u20ac\"", "\"\\ud83d\\ude00\"", "\"\\u0000\"",
      "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\x7f\"",
      // rejected
      "", " ", "{", "}", "[1,]", "[,1]", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{1:2}", "01", "-", "1.", ".5", "1e",
      "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "nul", "tru", "[1 2]", "\"abc", "\"\\x\"",
      "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\nb\"", "\"\x01\"", "\"\xc3\"",
      "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", "1e400", "-1e400", "[1]x",
      "{\"a\":1}}", "'a'",
  };
  for (const auto& t : texts) expectSameAsNlohmann(t);
}

TEST_CASE("JsonReader: every JSON file of the conformance suites parses like json::parse", "[json_reader][conformance]") {
  auto check = [](const std::string& path) {
    const std::string text = agui_test::readFile(path);
    json ours;
    std::string error;
    INFO(path);
    REQUIRE(JsonReader::parse(text, 1000, ours, &error));
    CHECK(ours == json::parse(text));
    CHECK(ours.dump() == json::parse(text).dump());
  };
  for (const char* file : {"tests.json", "spec_tests.json"}) check(agui_test::jsonPatchSuitePath(file));
  AGUI_NEEDS_CONFORMANCE();
  for (const char* rel : {"agui-apply/state_cases.json", "agui-apply/activity_cases.json",
                          "agui-apply/sse_transform_cases.json", "sse/eventsource_parser.json"})
    check(agui_test::conformancePath(rel));
}

TEST_CASE("JsonReader: documented differences from json::parse", "[json_reader]") {
  json v;
  std::string error;
  SECTION("a NUL byte is an error, even where json::parse would stop early") {
    const std::string text("[1]\0garbage", 11);
    CHECK_FALSE(JsonReader::parse(text, 10, v, &error));
    CHECK_FALSE(JsonReader::parse(std::string("\"a\0b\"", 5), 10, v, &error));
  }
  SECTION("a byte-order mark is an error") {
    CHECK_FALSE(JsonReader::parse("\xEF\xBB\xBF{}", 10, v, &error));
  }
  SECTION("nesting beyond maxDepth is an error that says so, found without reading further") {
    REQUIRE(JsonReader::parse(nested(5), 5, v));
    const std::string six = nested(6);  // the reader holds a view: keep the text alive
    JsonReader r(six, 5);
    json out;
    CHECK_FALSE(r.readValue(out));
    CHECK(r.depthExceeded());
    // A million levels: refused at level 6, long before the end of the text.
    const std::string bomb(1000000, '[');
    JsonReader deep(bomb, 5);
    CHECK_FALSE(deep.readValue(out));
    CHECK(deep.depthExceeded());
    CHECK(deep.offset() < 10);
  }
}

TEST_CASE("JsonReader: errors say what and where", "[json_reader]") {
  json v;
  std::string error;
  CHECK_FALSE(JsonReader::parse("{\"a\":tru}", 10, v, &error));
  CHECK(error == "invalid literal at byte 5");
  CHECK_FALSE(JsonReader::parse("[1,2", 10, v, &error));
  CHECK(error == "unterminated array at byte 4");
  CHECK_FALSE(JsonReader::parse("\"\\ud800x\"", 10, v, &error));
  CHECK(error.rfind("lone high surrogate", 0) == 0);
}

TEST_CASE("JsonReader: decimal numbers round exactly like strtod", "[json_reader][property]") {
  // The reader takes a fast path for short decimals; it must give the same
  // double as the correctly rounded strtod on every input.
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    if (rng() % 2) text += '-';
    const int intDigits = 1 + static_cast<int>(rng() % 12);
    text += static_cast<char>('1' + rng() % 9);
    for (int d = 1; d < intDigits; ++d) text += static_cast<char>('0' + rng() % 10);
    if (rng() % 3) {
      text += '.';
      const int fracDigits = 1 + static_cast<int>(rng() % 12);
      for (int d = 0; d < fracDigits; ++d) text += static_cast<char>('0' + rng() % 10);
    }
    if (rng() % 3 == 0) {
      text += 'e';
      text += std::to_string(static_cast<int>(rng() % 60) - 30);
    }
    json v;
    REQUIRE(JsonReader::parse(text, 4, v));
    const double expected = std::strtod(text.c_str(), nullptr);
    INFO(text);
    if (v.is_number_float()) REQUIRE(v.get<double>() == expected);
    else REQUIRE(static_cast<double>(v.get<double>()) == expected);
  }
}

TEST_CASE("decodeEvent: a delta's operations are read straight from the text", "[json_reader][decoder]") {
  agui_sync::Options options;
  agui_sync::DecodedEvent ev;
  agui_sync::DecodeError err;
  SECTION("ops, values and pointers as json::parse + toPatchOps would give them") {
    const std::string text =
        R"({"metadata":{"seq":2,"baseSeq":1,"other":[1,2]},"delta":[{"value":{"k":[1,"x"]},"path":"/a~1b/0","op":"add"},)"
        R"({"op":"move","from":"/x","path":"/y","ignored":true},{"op":"remove","path":"/z"}],"type":"STATE_DELTA"})";
    REQUIRE(agui_sync::decodeEvent(text, options, ev, err));
    REQUIRE(ev.cls == agui_sync::EventClass::StateDelta);
    CHECK(*ev.seq.seq == 2);
    CHECK(*ev.seq.baseSeq == 1);
    REQUIRE(ev.opsProblem.ok());
    agui_sync::PatchOps expected;
    REQUIRE(agui_sync::toPatchOps(json::parse(text)["delta"], expected).ok());
    REQUIRE(ev.ops.size() == expected.size());
    for (size_t i = 0; i < ev.ops.size(); ++i) {
      CHECK(ev.ops[i].kind == expected[i].kind);
      CHECK(ev.ops[i].path == expected[i].path);
      CHECK(ev.ops[i].pathTokens == expected[i].pathTokens);
      CHECK(ev.ops[i].from == expected[i].from);
      CHECK(ev.ops[i].value == expected[i].value);
    }
    CHECK(ev.ops[0].pathTokens == agui_sync::Tokens{"a/b", "0"});
  }
  SECTION("the content hash ignores formatting and key order, not content") {
    const std::string a = R"({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/p","value":{"x":1,"y":[true,null]}}]})";
    const std::string b = "{ \"delta\" : [ { \"value\" : { \"y\" : [ true , null ] , \"x\" : 1 } , \"path\" : \"/p\" , "
                          "\"op\" : \"replace\" } ] , \"type\" : \"STATE_DELTA\" , \"metadata\" : { \"runId\" : \"r\" } }";
    const std::string c = R"({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/p","value":{"x":2,"y":[true,null]}}]})";
    const std::string d = R"({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/p","value":{"x":1.0,"y":[true,null]}}]})";
    uint64_t ha, hb, hc, hd;
    REQUIRE(agui_sync::decodeEvent(a, options, ev, err));
    ha = ev.deltaHash;
    REQUIRE(agui_sync::decodeEvent(b, options, ev, err));
    hb = ev.deltaHash;
    REQUIRE(agui_sync::decodeEvent(c, options, ev, err));
    hc = ev.deltaHash;
    REQUIRE(agui_sync::decodeEvent(d, options, ev, err));
    hd = ev.deltaHash;
    CHECK(ha == hb);
    CHECK(ha != hc);
    CHECK(ha != hd);
  }
  SECTION("a structural problem is kept for apply time, in validatePatch's words") {
    const std::string text = R"({"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1},{"op":"jump","path":"/b"}]})";
    REQUIRE(agui_sync::decodeEvent(text, options, ev, err));
    CHECK_FALSE(ev.opsProblem.ok());
    CHECK(ev.opsProblem.message == agui_sync::validatePatch(json::parse(text)["delta"]).message);
    CHECK(ev.ops.empty());
  }
  SECTION("other events are validated, not built, and their members are not ours") {
    const std::string text = R"({"type":"TEXT_MESSAGE_CONTENT","delta":[{"op":"x"}],"snapshot":{"a":1},"metadata":{"seq":"no"}})";
    REQUIRE(agui_sync::decodeEvent(text, options, ev, err));
    CHECK(ev.cls == agui_sync::EventClass::Other);
    CHECK(ev.ops.empty());
    CHECK(ev.snapshot.is_null());
  }
  SECTION("a snapshot's own depth is measured while reading") {
    REQUIRE(agui_sync::decodeEvent(R"({"type":"STATE_SNAPSHOT","snapshot":{"a":[[1]],"b":{}}})", options, ev, err));
    CHECK(ev.snapshotDepth == agui_sync::valueDepth(ev.snapshot));
    CHECK(ev.snapshotDepth == 3);
  }
}
