// JSON strings are scanned eight bytes at a time (src/json/swar.h): the
// reader's plain runs, the writer's escapes. Seeded strings put every kind of
// byte that ends a run (quote, backslash, control, non-ASCII, valid or not) at
// every offset of a word, so a word test that missed one, or stopped at the
// wrong byte of its word, shows up here rather than as a corrupted state.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "json/json_escape.h"
#include "json/json_reader.h"
#include "json/swar.h"

using nlohmann::json;

namespace {

// Bytes that end a plain run, and ordinary ones.
const char* const kPieces[] = {"\"", "\\", "\\n", "\\u00e9", "\\ud83d\\ude00", "\x01", "\x1f", "\n",
                               "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3", "\xff", "\x7f",
                               " ", "~", "a", "Z", "0", "abcdefgh", "/"};

// A string of `n` pieces, mostly plain so that special bytes land anywhere in a word.
std::string randomText(std::mt19937& rng, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (rng() % 3 != 0) s += static_cast<char>('a' + rng() % 26);
    else s += kPieces[rng() % (sizeof kPieces / sizeof *kPieces)];
  }
  return s;
}

// Valid UTF-8 with no escapes: what a writer is handed.
std::string randomValue(std::mt19937& rng, size_t n) {
  static const char* const pieces[] = {"\"", "\\", "\n", "\t", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xf0\x9f\x98\x80", "/", " "};
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (rng() % 3 != 0) s += static_cast<char>('a' + rng() % 26);
    else s += pieces[rng() % (sizeof pieces / sizeof *pieces)];
  }
  return s;
}

}  // namespace

TEST_CASE("JSON strings: the reader reads them like json::parse, a special byte at any offset", "[json_reader][property]") {
  std::mt19937 rng(27);
  for (int i = 0; i < 20000; ++i) {
    const std::string text = "\"" + randomText(rng, rng() % 40) + "\"";
    INFO("text: " << text);
    json ours;
    const bool ok = agui_sync::JsonReader::parse(text, 8, ours, nullptr);
    const json theirs = json::parse(text, nullptr, false);
    REQUIRE(ok == !theirs.is_discarded());
    if (ok) REQUIRE(ours == theirs);
    agui_sync::JsonReader skipper(text, 8);
    REQUIRE((skipper.skipValue() && skipper.finish()) == ok);
  }
}

TEST_CASE("JSON strings: the writer escapes them like json::dump, a special byte at any offset", "[json_escape][property]") {
  std::mt19937 rng(2727);
  for (int i = 0; i < 20000; ++i) {
    const std::string value = randomValue(rng, rng() % 40);
    std::string ours;
    agui_sync::appendJsonString(ours, value);
    INFO("value: " << value);
    REQUIRE(ours == json(value).dump());
  }
}

TEST_CASE("JSON strings: the word tests flag the first special byte of a word", "[swar]") {
  namespace swar = agui_sync::swar;
  for (unsigned at = 0; at < 8; ++at) {
    for (int c = 0; c < 256; ++c) {
      unsigned char bytes[8];
      for (unsigned k = 0; k < 8; ++k) bytes[k] = k < at ? 'a' : static_cast<unsigned char>(k == at ? c : (k * 37) & 0xFF);
      const uint64_t w = swar::load64(bytes);
      const bool special = c < 0x20 || c == '"' || c == '\\';
      INFO("byte " << c << " at " << at);
      REQUIRE((swar::hasJsonSpecial(w) != 0) == (special || [&] {
                for (unsigned k = at + 1; k < 8; ++k)
                  if (bytes[k] < 0x20 || bytes[k] == '"' || bytes[k] == '\\') return true;
                return false;
              }()));
      if (special && swar::kFirstFlaggedExact) REQUIRE(swar::firstFlagged(swar::hasJsonSpecial(w)) == at);
      if ((special || c >= 0x80) && swar::kFirstFlaggedExact) REQUIRE(swar::firstFlagged(swar::endsStringRun(w)) == at);
      if (c == '\n' && swar::kFirstFlaggedExact) REQUIRE(swar::firstFlagged(swar::hasByte(w, '\n')) == at);
    }
  }
}
