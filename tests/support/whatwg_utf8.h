#pragma once
// A reference UTF-8 decoder for the SSE framer's differential checks (the
// native test suite and fuzz/fuzz_sse_framer.cpp): the WHATWG Encoding Standard
// "UTF-8 decoder" (section 9.1.1) transcribed step by step, one byte at a time,
// deliberately unlike the framer's run-based decoding it checks.
#include <cstddef>
#include <cstdint>
#include <string>

namespace agui_test {

inline void appendCodePoint(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Bytes -> UTF-8 text with every error replaced by U+FFFD, as a browser's
// TextDecoder (non-fatal) does; a sequence cut by the end is one U+FFFD.
inline std::string whatwgUtf8Decode(const uint8_t* p, size_t n) {
  std::string out;
  uint32_t cp = 0;
  int needed = 0, seen = 0;
  uint8_t lower = 0x80, upper = 0xBF;
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    if (needed == 0) {
      ++i;
      if (b <= 0x7F) {
        out += static_cast<char>(b);
      } else if (b >= 0xC2 && b <= 0xDF) {
        needed = 1;
        cp = b & 0x1F;
      } else if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0) lower = 0xA0;
        if (b == 0xED) upper = 0x9F;
        needed = 2;
        cp = b & 0xF;
      } else if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0) lower = 0x90;
        if (b == 0xF4) upper = 0x8F;
        needed = 3;
        cp = b & 0x7;
      } else {
        appendCodePoint(out, 0xFFFD);
      }
      continue;
    }
    if (b < lower || b > upper) {
      // An error; the byte is "prepended to the stream", i.e. processed again.
      cp = 0;
      needed = seen = 0;
      lower = 0x80;
      upper = 0xBF;
      appendCodePoint(out, 0xFFFD);
      continue;
    }
    ++i;
    lower = 0x80;
    upper = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
    if (++seen == needed) {
      appendCodePoint(out, cp);
      cp = 0;
      needed = seen = 0;
    }
  }
  if (needed != 0) appendCodePoint(out, 0xFFFD);  // the stream ended mid-sequence
  return out;
}

inline std::string whatwgUtf8Decode(const std::string& bytes) {
  return whatwgUtf8Decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace agui_test
