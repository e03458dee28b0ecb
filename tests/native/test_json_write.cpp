// The engine's JSON writer (src/json/json_write.h) replaced nlohmann's dump()
// so that printf stays out of the browser's WebAssembly. Its promise is dump()'s
// bytes, so that is the check: seeded values of every kind, floats drawn from
// their whole range (integral, tiny, huge, negative zero, subnormal, not
// finite), strings with every byte that needs an escape, compared byte for byte.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "json/json_measure.h"
#include "json/json_write.h"

using nlohmann::json;

namespace {

double randomFloat(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0: return static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000);  // integral: "12.0"
    case 1: return static_cast<double>(rng() % 100000) / 1000.0;
    case 2: return std::ldexp(static_cast<double>(rng() % 1000), static_cast<int>(rng() % 2100) - 1074);
    case 3: return -0.0;
    case 4: {
      const double special[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::max(), 1e21, 1e-7, 123456789012345680000.0};
      return special[rng() % 8];
    }
    default: {
      double d;
      uint64_t bits = rng();
      std::memcpy(&d, &bits, sizeof d);
      return d;  // any bit pattern: NaNs and infinities included
    }
  }
}

std::string randomString(std::mt19937_64& rng) {
  static const char* const pieces[] = {"\"", "\\", "\n", "\t", "\b", "\f", "\r", "\x01", "\x1f", "\x7f",
                                       "\xc3\xa9", "\xf0\x9f\x98\x80", "/", " ", "abcdefgh"};
  std::string s;
  for (size_t n = rng() % 24; n > 0; --n) s += pieces[rng() % (sizeof pieces / sizeof *pieces)];
  return s;
}

json randomJson(std::mt19937_64& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 0 ? 9 : 7));
  switch (kind) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int64_t>(rng());  // the whole int64 range
    case 3: return static_cast<uint64_t>(rng());
    case 4: return randomFloat(rng);
    case 5: return randomString(rng);
    case 6: return static_cast<int64_t>(rng() % 201) - 100;
    case 7: {
      json arr = json::array();
      for (size_t n = rng() % 5; n > 0; --n) arr.push_back(randomJson(rng, depth - 1));
      return arr;
    }
    default: {
      json obj = json::object();
      for (size_t n = rng() % 5; n > 0; --n) obj[randomString(rng)] = randomJson(rng, depth - 1);
      return obj;
    }
  }
}

}  // namespace

TEST_CASE("jsonText writes dump()'s bytes for every kind of value", "[json][write]") {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const json value = randomJson(rng, 4);
    INFO("seed " << seed);
    const std::string ours = agui_sync::jsonText(value);
    REQUIRE(ours == value.dump());
    // The size measure promises dump()'s length too.
    REQUIRE(agui_sync::serializedSize(value) == ours.size());
  }
}

TEST_CASE("jsonText prints floats as dump() does, edge cases named", "[json][write]") {
  const double cases[] = {0.0, -0.0, 1.0, -1.5, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, 100.0,
                          std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  for (double d : cases) {
    INFO(d);
    CHECK(agui_sync::jsonText(json(d)) == json(d).dump());
  }
  CHECK(agui_sync::jsonText(json(std::numeric_limits<double>::infinity())) == "null");
  CHECK(agui_sync::jsonText(json(1.0)) == "1.0");
}
