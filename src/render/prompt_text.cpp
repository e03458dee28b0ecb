#include "render/prompt_text.h"

#include <iterator>

#include "json/utf8.h"

namespace agui_sync {

namespace {

struct Range {
  uint32_t lo, hi;
};

// Escaped characters at or above U+0080, sorted. The rationale per row is in
// docs/prompt-rendering.md; the sets are Unicode's Cc, Cf, Zl, Zp and
// Default_Ignorable_Code_Point, plus the noncharacters (U+xFFFE/xFFFF are
// checked separately) and the compatibility look-alikes of < > & `.
// Escaping (not dropping) keeps the data exact while the model sees the
// character spelled out instead of an invisible one.
constexpr Range kEscaped[] = {
    {0x0080, 0x009F},    // C1 controls (NEL among them)
    {0x00AD, 0x00AD},    // soft hyphen
    {0x034F, 0x034F},    // combining grapheme joiner
    {0x0600, 0x0605},    // Arabic number signs (format)
    {0x061C, 0x061C},    // Arabic letter mark (bidi)
    {0x06DD, 0x06DD},    // Arabic end of ayah (format)
    {0x070F, 0x070F},    // Syriac abbreviation mark (format)
    {0x0890, 0x0891},    // Arabic pound / piastre mark above (format)
    {0x08E2, 0x08E2},    // Arabic disputed end of ayah (format)
    {0x115F, 0x1160},    // Hangul choseong / jungseong fillers
    {0x17B4, 0x17B5},    // Khmer inherent vowels
    {0x180B, 0x180F},    // Mongolian variation selectors, vowel separator
    {0x1FEF, 0x1FEF},    // Greek varia (look-alike: canonically equivalent to '`')
    {0x200B, 0x200F},    // zero width space / non-joiner / joiner, LRM, RLM
    {0x2028, 0x202E},    // line and paragraph separators, bidi embeddings and overrides
    {0x2060, 0x206F},    // word joiner, invisible operators, bidi isolates, deprecated format
    {0x3164, 0x3164},    // Hangul filler
    {0xFDD0, 0xFDEF},    // noncharacters
    {0xFE00, 0xFE0F},    // variation selectors 1-16
    {0xFE60, 0xFE60},    // small ampersand (look-alike: NFKC makes it '&')
    {0xFE64, 0xFE65},    // small less-than / greater-than (look-alikes of '<' '>')
    {0xFEFF, 0xFEFF},    // zero width no-break space (BOM)
    {0xFF06, 0xFF06},    // fullwidth ampersand (look-alike)
    {0xFF1C, 0xFF1C},    // fullwidth less-than (look-alike)
    {0xFF1E, 0xFF1E},    // fullwidth greater-than (look-alike)
    {0xFF40, 0xFF40},    // fullwidth grave accent (look-alike of the fence character)
    {0xFFA0, 0xFFA0},    // halfwidth Hangul filler
    {0xFFF0, 0xFFFB},    // unassigned specials, interlinear annotation
    {0x110BD, 0x110BD},  // Kaithi number sign (format)
    {0x110CD, 0x110CD},  // Kaithi number sign above (format)
    {0x13430, 0x1343F},  // Egyptian hieroglyph format controls
    {0x1BCA0, 0x1BCA3},  // shorthand format controls
    {0x1D173, 0x1D17A},  // musical symbol format controls
    {0xE0000, 0xE0FFF},  // tags (ASCII smuggling), variation selectors 17-256, reserved
};

constexpr Range kWhiteSpace[] = {
    {0x0085, 0x0085}, {0x00A0, 0x00A0}, {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};

template <size_t N>
bool inRanges(const Range (&ranges)[N], uint32_t cp) {
  size_t lo = 0, hi = N;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (cp < ranges[mid].lo) hi = mid;
    else if (cp > ranges[mid].hi) lo = mid + 1;
    else return true;
  }
  return false;
}

// ASCII classes: kEsc is written as an escape, kWs is White_Space (replaced by
// a datamark); a space is kWs only, \t \n \v \f \r are both.
constexpr uint8_t kEsc = 1, kWs = 2;

struct AsciiClasses {
  uint8_t of[128] = {};
  constexpr AsciiClasses() {
    for (int c = 0; c < 0x20; ++c) of[c] = kEsc;
    for (int c = 0x09; c <= 0x0D; ++c) of[c] = kEsc | kWs;
    of[0x20] = kWs;
    for (unsigned char c : {'"', '\\', '<', '>', '&', '`', '\x7f'}) of[c] = kEsc;
  }
};
constexpr AsciiClasses kAscii;

// Bytes copied as they are: ASCII that is not escaped, and with a datamark not
// White_Space either ([1]). One table load per byte keeps the common run of
// plain text a tight loop (it dominates a render's time).
struct PlainBytes {
  bool of[2][256] = {};
  constexpr PlainBytes() {
    for (int c = 0; c < 0x80; ++c) {
      of[0][c] = (kAscii.of[c] & kEsc) == 0;
      of[1][c] = kAscii.of[c] == 0;
    }
  }
};
constexpr PlainBytes kPlain;

constexpr char kHex[] = "0123456789abcdef";

void appendU16(std::string& out, uint32_t unit) {
  const char digits[6] = {'\\', 'u', kHex[(unit >> 12) & 15], kHex[(unit >> 8) & 15], kHex[(unit >> 4) & 15],
                          kHex[unit & 15]};
  out.append(digits, sizeof digits);
}

void appendEscape(std::string& out, uint32_t cp) {
  switch (cp) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  if (cp < 0x10000) {
    appendU16(out, cp);
    return;
  }
  cp -= 0x10000;
  appendU16(out, 0xD800 + (cp >> 10));
  appendU16(out, 0xDC00 + (cp & 0x3FF));
}

// The code point of the well-formed `n`-byte sequence at p.
uint32_t decode(const char* p, size_t n) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(p[k])); };
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

}  // namespace

bool promptEscaped(uint32_t cp) {
  if (cp < 0x80) return (kAscii.of[cp] & kEsc) != 0;
  if ((cp & 0xFFFE) == 0xFFFE) return true;  // U+xFFFE, U+xFFFF: noncharacters of every plane
  return inRanges(kEscaped, cp);
}

bool promptWhiteSpace(uint32_t cp) {
  if (cp < 0x80) return (kAscii.of[cp] & kWs) != 0;
  return inRanges(kWhiteSpace, cp);
}

void appendPromptChars(std::string& out, std::string_view text, const std::string* mark) {
  if (mark) out += *mark;
  size_t run = 0;  // start of the bytes not yet copied: plain runs are copied at once
  const auto flush = [&](size_t end) { out.append(text.data() + run, end - run); };
  const bool* plain = kPlain.of[mark != nullptr];
  const size_t size = text.size();
  for (size_t i = 0; i < size;) {
    while (i < size && plain[static_cast<unsigned char>(text[i])]) ++i;
    if (i == size) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    uint32_t cp = c;
    size_t n = 1;
    if (c < 0x80) {
      // escaped, or White_Space with a mark: handled below
    } else if ((n = utf8Length(text, i)) == 0) {
      flush(i);
      out += "\xEF\xBF\xBD";
      run = ++i;
      continue;
    } else {
      cp = decode(text.data() + i, n);
      if (!(mark && promptWhiteSpace(cp)) && !promptEscaped(cp)) {
        i += n;
        continue;
      }
    }
    flush(i);
    if (mark && promptWhiteSpace(cp)) out += *mark;
    else appendEscape(out, cp);
    run = i += n;
  }
  flush(text.size());
}

size_t promptCutPoint(std::string_view s, size_t limit) {
  if (s.size() <= limit) return s.size();
  // Only a well-formed sequence that starts in the last three bytes before the
  // limit can cross it, and only the nearest byte that is not a continuation
  // byte can start one (a well-formed sequence holds no other lead byte).
  for (size_t j = limit; j > 0 && j + 2 >= limit;) {
    --j;
    if ((static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) continue;
    const size_t n = utf8Length(s, j);
    return n != 0 && j + n > limit ? j : limit;
  }
  return limit;
}

bool validDatamark(std::string_view mark, size_t maxBytes) {
  if (mark.empty() || mark.size() > maxBytes) return false;
  for (size_t i = 0; i < mark.size();) {
    const size_t n = utf8Length(mark, i);
    if (n == 0) return false;
    const uint32_t cp = n == 1 ? static_cast<unsigned char>(mark[i]) : decode(mark.data() + i, n);
    if (promptEscaped(cp) || promptWhiteSpace(cp)) return false;
    i += n;
  }
  return true;
}

}  // namespace agui_sync
