#include "json/utf16_order.h"

#include <cstddef>
#include <cstdint>

namespace agui_sync {

namespace {

// RFC 8785 section 3.2.3 sorts property names by their UTF-16 code units.
// nlohmann's std::map orders by UTF-8 bytes, which equals code point order; the
// two disagree only because a supplementary character (U+10000 and up) is a
// surrogate pair starting with 0xD800..0xDBFF in UTF-16 and so sorts *before*
// U+E000..U+FFFF, while in UTF-8 it sorts after them.
//
// Rather than transcoding every key, we map each UTF-8 sequence to a weight
// whose integer order equals UTF-16 order:
//   U+0000..U+D7FF   -> cp                       (same as its single code unit)
//   U+10000..U+10FFFF -> 0xD800 + (cp - 0x10000)  (between BMP-low and U+E000,
//                                                  ordered by high then low surrogate,
//                                                  which is cp order)
//   U+E000..U+FFFF   -> 0x10D800 + (cp - 0xE000)  (above every supplementary)
//   invalid byte b   -> 0x200000 + b              (unreachable for parsed JSON;
//                                                  any fixed, injective choice keeps
//                                                  the sort a strict weak order)
constexpr uint32_t kInvalidBase = 0x200000;

inline bool isCont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Decode one UTF-8 sequence at s[i], return its weight and advance i. Rejects
// overlongs, surrogates and > U+10FFFF so each byte string has exactly one
// decoding, which keeps the weight sequence injective.
uint32_t nextWeight(std::string_view s, size_t& i) {
  const size_t n = s.size();
  unsigned char c0 = static_cast<unsigned char>(s[i]);
  if (c0 < 0x80) {
    ++i;
    return c0;
  }
  uint32_t cp = 0;
  size_t len = 0;
  uint32_t minCp = 0;
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    len = 2;
    cp = c0 & 0x1F;
    minCp = 0x80;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    len = 3;
    cp = c0 & 0x0F;
    minCp = 0x800;
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    len = 4;
    cp = c0 & 0x07;
    minCp = 0x10000;
  }
  bool ok = len != 0 && i + len <= n;
  for (size_t j = 1; ok && j < len; ++j) {
    unsigned char cj = static_cast<unsigned char>(s[i + j]);
    if (!isCont(cj)) ok = false;
    else cp = (cp << 6) | (cj & 0x3F);
  }
  if (ok && (cp < minCp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
  if (!ok) {
    ++i;
    return kInvalidBase + c0;
  }
  i += len;
  if (cp < 0xD800) return cp;
  if (cp >= 0x10000) return 0xD800 + (cp - 0x10000);
  return 0x10D800 + (cp - 0xE000);
}

}  // namespace

bool utf16Less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    // ASCII fast path: both bytes are whole characters with weight == byte.
    unsigned char ca = static_cast<unsigned char>(a[i]);
    unsigned char cb = static_cast<unsigned char>(b[j]);
    if (ca < 0x80 && cb < 0x80) {
      if (ca != cb) return ca < cb;
      ++i;
      ++j;
      continue;
    }
    uint32_t wa = nextWeight(a, i);
    uint32_t wb = nextWeight(b, j);
    if (wa != wb) return wa < wb;
  }
  // A proper prefix sorts first.
  return i == a.size() && j < b.size();
}

}  // namespace agui_sync
