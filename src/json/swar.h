#pragma once
// Eight bytes at a time ("SIMD within a register"): the scans that run over
// every byte of every event (the SSE framer's line ends, the JSON reader's
// string runs, the JSON writer's escapes) test a 64-bit word per step instead
// of one byte. WebAssembly has native 64-bit integers, so this is as fast
// there as natively, with no SIMD proposal required of the browser.
#include <cstdint>
#include <cstring>

namespace agui_sync::swar {

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

inline uint64_t load64(const void* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);  // unaligned-safe; compiles to a single load
  return w;
}

// Whether firstFlagged() can tell which byte a test flagged: on a
// little-endian machine (WebAssembly, x86, ARM) the lowest flagged byte comes
// first in memory, and it is always a real hit (a borrow only marks bytes
// above one). Elsewhere callers rescan the word byte by byte.
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr bool kFirstFlaggedExact = true;
inline unsigned firstFlagged(uint64_t mask) { return static_cast<unsigned>(__builtin_ctzll(mask)) >> 3; }
#else
constexpr bool kFirstFlaggedExact = false;
inline unsigned firstFlagged(uint64_t) { return 0; }
#endif

// Non-zero iff some byte of w is zero (a borrow may also mark bytes above a
// zero: see firstFlagged()).
inline uint64_t hasZeroByte(uint64_t w) { return (w - kOnes) & ~w & kHighBits; }

// Non-zero iff some byte of w equals c.
inline uint64_t hasByte(uint64_t w, unsigned char c) { return hasZeroByte(w ^ (kOnes * c)); }

// Non-zero iff some byte of w must be escaped in a JSON string: a control
// character (below 0x20), '"' or '\\'.
inline uint64_t hasJsonSpecial(uint64_t w) {
  const uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
  return ((w - kOnes * 0x20) | (quote - kOnes) | (backslash - kOnes)) & ~w & ~quote & ~backslash & kHighBits;
}

// Non-zero iff some byte of w ends a plain run of a JSON string: what
// hasJsonSpecial finds, or a byte of a multi-byte UTF-8 sequence (>= 0x80).
inline uint64_t endsStringRun(uint64_t w) { return hasJsonSpecial(w) | (w & kHighBits); }

}  // namespace agui_sync::swar
