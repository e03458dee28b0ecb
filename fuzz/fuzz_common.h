#pragma once
// Shared helpers for the libFuzzer targets in fuzz/ (not part of the library).
//
// FUZZ_CHECK aborts with a message naming the broken invariant, so libFuzzer
// records the input as a crash artifact. Chunk sizes come from a small PRNG
// seeded by a header byte of the input, so the fuzzer can mutate the chunking
// like any other part of the input and every run is reproducible.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, ...)                                                        \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "\nFUZZ INVARIANT BROKEN at %s:%d: %s\n  ", __FILE__,     \
                   __LINE__, #cond);                                                 \
      std::fprintf(stderr, __VA_ARGS__);                                             \
      std::fprintf(stderr, "\n");                                                    \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

namespace fuzz {

// Findings that were reported but are not fixed yet can be tolerated by name so
// a campaign keeps exploring past them: AGUI_FUZZ_KNOWN="id1,id2" (fuzz.mk sets
// it from FUZZ_KNOWN_ISSUES). Each target documents the ids it knows; with the
// variable unset every invariant is enforced.
inline bool knownIssue(const char* id) {
  const char* env = std::getenv("AGUI_FUZZ_KNOWN");
  if (!env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find(std::string(",") + id + ",") != std::string::npos;
}

// splitmix64: tiny, good enough to spread a one-byte seed over many decisions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  size_t range(size_t lo, size_t hi) { return lo + static_cast<size_t>(next() % (hi - lo + 1)); }
  bool chance(unsigned percent) { return next() % 100 < percent; }

  // A chunk length: mostly tiny (splits every CRLF / UTF-8 sequence somewhere),
  // sometimes medium, sometimes large.
  size_t chunk() {
    switch (next() % 4) {
      case 0: return range(1, 3);
      case 1: return range(1, 16);
      case 2: return range(1, 128);
      default: return range(1, 4096);
    }
  }

 private:
  uint64_t s_;
};

// Strict UTF-8 validity (no overlongs, no surrogates, <= U+10FFFF). Written from
// RFC 3629 table 3-7 independently of src/, so it can serve as an oracle.
inline bool validUtf8(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return false;
    if (n - i < len) return false;
    const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    if (c1 < lo || c1 > hi) return false;
    for (size_t k = 2; k < len; ++k) {
      const unsigned char ck = static_cast<unsigned char>(s[i + k]);
      if (ck < 0x80 || ck > 0xBF) return false;
    }
    i += len;
  }
  return true;
}

// Printable excerpt for failure messages.
inline std::string excerpt(const std::string& s, size_t max = 200) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace fuzz
