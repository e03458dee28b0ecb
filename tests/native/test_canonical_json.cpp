// RFC 8785 canonicalization, SHA-256 and the state digest.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <agui_sync/canonical_json.h>
#include "json/sha256.h"
#include "test_support.h"

using agui_sync::canonicalJson;
using agui_sync::formatEcmaNumber;
using agui_sync::Sha256;
using agui_sync::sha256Hex;
using agui_sync::stateDigest;
using nlohmann::json;

namespace {

double fromBits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

std::string hexOf(const std::array<uint8_t, 32>& d) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace

TEST_CASE("JCS: cyberphone input/output vectors canonicalize byte-for-byte", "[jcs]") {
  AGUI_NEEDS_CONFORMANCE();
  // The README lists exactly these files; naming them keeps a missing file from
  // being silently skipped.
  const std::vector<std::string> names = {"arrays", "french", "structures", "unicode", "values", "weird"};
  size_t checked = 0;
  for (const auto& name : names) {
    INFO("vector " << name);
    const std::string input = agui_test::readFile(agui_test::conformancePath("jcs/input/" + name + ".json"));
    const std::string expected = agui_test::readFile(agui_test::conformancePath("jcs/output/" + name + ".json"));
    json parsed = json::parse(input);
    CHECK(canonicalJson(parsed) == expected);
    // Canonical output is a fixed point: re-parsing and canonicalizing again
    // must not change a byte.
    CHECK(canonicalJson(json::parse(expected)) == expected);
    ++checked;
  }
  CHECK(checked == 6);
}

TEST_CASE("JCS: numbers.csv prints every double exactly like ECMAScript", "[jcs]") {
  AGUI_NEEDS_CONFORMANCE();
  const std::string csv = agui_test::readFile(agui_test::conformancePath("jcs/numbers.csv"));
  std::istringstream lines(csv);
  std::string line;
  size_t count = 0;
  size_t malformed = 0;
  std::vector<std::string> mismatches;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    size_t comma = line.find(',');
    if (comma != 16) {
      ++malformed;
      continue;
    }
    uint64_t bits = std::stoull(line.substr(0, 16), nullptr, 16);
    const std::string expected = line.substr(comma + 1);
    const std::string got = formatEcmaNumber(fromBits(bits));
    ++count;
    if (got != expected) mismatches.push_back(line + " got " + got);
  }
  // One assertion per line would bury a regression in 25k messages; instead
  // report the first few mismatches and assert the totals.
  for (size_t i = 0; i < mismatches.size() && i < 20; ++i) UNSCOPED_INFO(mismatches[i]);
  CHECK(mismatches.empty());
  CHECK(malformed == 0);
  CHECK(count == 25000);
}

TEST_CASE("JCS: ECMAScript number layout edge cases", "[jcs]") {
  CHECK(formatEcmaNumber(0.0) == "0");
  CHECK(formatEcmaNumber(-0.0) == "0");
  CHECK(formatEcmaNumber(1.0) == "1");
  CHECK(formatEcmaNumber(-1.5) == "-1.5");
  CHECK(formatEcmaNumber(100.0) == "100");
  CHECK(formatEcmaNumber(123456789012345680000.0) == "123456789012345680000");  // 21 digits: integer form
  CHECK(formatEcmaNumber(1e21) == "1e+21");
  CHECK(formatEcmaNumber(1e20) == "100000000000000000000");
  CHECK(formatEcmaNumber(0.000001) == "0.000001");
  CHECK(formatEcmaNumber(0.0000015) == "0.0000015");
  CHECK(formatEcmaNumber(1e-7) == "1e-7");
  CHECK(formatEcmaNumber(1.5e-7) == "1.5e-7");
  CHECK(formatEcmaNumber(1.5e300) == "1.5e+300");
  CHECK(formatEcmaNumber(5e-324) == "5e-324");
  CHECK(formatEcmaNumber(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(formatEcmaNumber(0.1 + 0.2) == "0.30000000000000004");
  CHECK(formatEcmaNumber(9007199254740993.0) == "9007199254740992");
}

TEST_CASE("JCS: integers are treated as doubles", "[jcs]") {
  CHECK(canonicalJson(json(int64_t(42))) == "42");
  CHECK(canonicalJson(json(uint64_t(18446744073709551615ull))) == "18446744073709552000");
  CHECK(canonicalJson(json(int64_t(-9007199254740993LL))) == "-9007199254740992");
  CHECK(canonicalJson(json::parse("1e21")) == "1e+21");
  CHECK(canonicalJson(json::parse("[1.0, 1, -0.0, 1E2]")) == "[1,1,0,100]");
}

TEST_CASE("JCS: string escaping and key order by UTF-16 code units", "[jcs]") {
  // Control characters: short escapes where JSON has them, lowercase \u00xx
  // otherwise; DEL and '/' are not escaped.
  std::string ctl = "a\"b\\c\b\f\n\r\t";
  ctl += '\x00';
  ctl += "\x1f\x7f/";
  CHECK(canonicalJson(json(ctl)) == "\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0000\\u001f\x7f/\"");

  // U+1F600 (UTF-8 F0 9F 98 80, UTF-16 D83D DE00) must sort before U+FB33
  // (UTF-16 FB33) although its UTF-8 bytes sort after.
  json obj = json::object();
  obj["\xEF\xAC\xB3"] = 1;      // U+FB33
  obj["\xF0\x9F\x98\x80"] = 2;  // U+1F600
  obj["\xE2\x82\xAC"] = 3;      // U+20AC
  obj["z"] = 4;
  CHECK(canonicalJson(obj) == "{\"z\":4,\"\xE2\x82\xAC\":3,\"\xF0\x9F\x98\x80\":2,\"\xEF\xAC\xB3\":1}");

  // Prefixes sort first; empty key sorts before everything.
  CHECK(canonicalJson(json::parse(R"({"ab":1,"a":2,"":3})")) == R"({"":3,"a":2,"ab":1})");
  CHECK(canonicalJson(json::parse(R"({"b":[],"a":{},"c":null,"d":true,"e":false})")) ==
        R"({"a":{},"b":[],"c":null,"d":true,"e":false})");
}

TEST_CASE("SHA-256: FIPS 180-4 example vectors", "[sha256]") {
  CHECK(sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256Hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256: padding boundaries around 55/56/63/64 bytes", "[sha256]") {
  // Lengths where the length field does / does not fit the final block.
  CHECK(sha256Hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256Hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256Hex(std::string(64, 'a')) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("SHA-256: incremental updates at odd split points equal one-shot", "[sha256]") {
  std::string msg;
  for (int i = 0; i < 1000; ++i) msg += static_cast<char>((i * 131 + 7) & 0xff);
  const std::string oneShot = sha256Hex(msg);

  const std::vector<size_t> chunkSizes = {1, 3, 7, 13, 55, 56, 63, 64, 65, 127, 129, 500};
  for (size_t chunk : chunkSizes) {
    INFO("chunk " << chunk);
    Sha256 h;
    for (size_t off = 0; off < msg.size(); off += chunk) h.update(std::string_view(msg).substr(off, chunk));
    CHECK(hexOf(h.finish()) == oneShot);
  }

  // Irregular splits, including empty updates.
  Sha256 h;
  h.update(msg.data(), 0);
  h.update(std::string_view(msg).substr(0, 5));
  h.update(std::string_view(msg).substr(5, 60));
  h.update(msg.data() + 65, 0);
  h.update(std::string_view(msg).substr(65, 200));
  h.update(std::string_view(msg).substr(265));
  CHECK(hexOf(h.finish()) == oneShot);

  // finish() resets the hasher, so it can be reused.
  h.update("abc");
  CHECK(hexOf(h.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("stateDigest: canonical, order- and number-format independent", "[digest]") {
  const json a = json::parse(R"({"b": [1, 2.0, {"y": true, "x": null}], "a": "hi"})");
  const json b = json::parse(R"({"a":"hi","b":[1.0,2,{"x":null,"y":true}]})");
  const std::string da = stateDigest(a);
  CHECK(da == stateDigest(b));
  CHECK(da.size() == 7 + 64);
  CHECK(da.rfind("sha256:", 0) == 0);
  CHECK(da == "sha256:" + sha256Hex(R"({"a":"hi","b":[1,2,{"x":null,"y":true}]})"));

  CHECK(stateDigest(json::parse("1.0")) == stateDigest(json::parse("1")));
  CHECK(stateDigest(json::parse("1")) == "sha256:" + sha256Hex("1"));
  CHECK(stateDigest(json::object()) == "sha256:" + sha256Hex("{}"));
  CHECK(stateDigest(json::parse(R"({"a":1})")) != stateDigest(json::parse(R"({"a":2})")));
}
