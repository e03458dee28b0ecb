#include "json/json_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "json/swar.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// Bytes that end a run of plain string content: '"', '\\', control characters
// and anything non-ASCII (which must be validated as UTF-8).
struct StringStops {
  bool table[256];
  constexpr StringStops() : table() {
    for (int c = 0; c < 256; ++c) table[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  }
};
constexpr StringStops kStops{};

// The first byte at or after p that ends a plain run of a string (kStops), or
// end: a word at a time, then byte by byte (every byte of every event's
// strings passes here).
const char* stringRunEnd(const char* p, const char* end) {
  for (; end - p >= 8; p += 8) {
    const uint64_t stops = swar::endsStringRun(swar::load64(p));
    if (stops == 0) continue;
    if (swar::kFirstFlaggedExact) return p + swar::firstFlagged(stops);
    break;
  }
  while (p < end && !kStops.table[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

inline bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the well-formed UTF-8 sequence at p (p[0] >= 0x80), or 0 if it is
// not one (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
inline size_t utf8Length(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (end - p < static_cast<std::ptrdiff_t>(n)) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return n;
}

void appendCodePoint(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Powers of ten that are exact doubles (Clinger's fast path).
constexpr double kExactPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

}  // namespace

bool JsonReader::fail(const char* message) {
  if (error_.empty()) error_ = std::string(message) + " at byte " + std::to_string(offset());
  return false;
}

bool JsonReader::push() {
  if (++depth_ > maxDepth_) {
    depthExceeded_ = true;
    return fail("nesting deeper than the limit");
  }
  if (depth_ > deepest_) deepest_ = depth_;
  return true;
}

char JsonReader::peek() {
  skipWs();
  return p_ < end_ ? *p_ : '\0';
}

bool JsonReader::finish() {
  skipWs();
  return p_ == end_ || fail("unexpected text after the value");
}

bool JsonReader::parse(std::string_view text, size_t maxDepth, json& out, std::string* error, bool* tooDeep) {
  JsonReader r(text, maxDepth);
  json value;
  if (r.readValue(value) && r.finish()) {
    out = std::move(value);
    return true;
  }
  if (error) *error = r.error();
  if (tooDeep) *tooDeep = r.depthExceeded();
  return false;
}

// --- strings ------------------------------------------------------------------

bool JsonReader::readEscape(std::string& out) {
  // p_ is just past the backslash.
  if (p_ >= end_) return fail("unterminated string");
  const char c = *p_++;
  switch (c) {
    case '"': out.push_back('"'); return true;
    case '\\': out.push_back('\\'); return true;
    case '/': out.push_back('/'); return true;
    case 'b': out.push_back('\b'); return true;
    case 'f': out.push_back('\f'); return true;
    case 'n': out.push_back('\n'); return true;
    case 'r': out.push_back('\r'); return true;
    case 't': out.push_back('\t'); return true;
    case 'u': break;
    default: return fail("invalid escape in string");
  }
  auto hex4 = [this](uint32_t& v) {
    if (end_ - p_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = *p_++;
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
      else return false;
    }
    return true;
  };
  uint32_t cp;
  if (!hex4(cp)) return fail("invalid \\u escape");
  if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate in \\u escape");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t low;
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return fail("lone high surrogate in \\u escape");
    p_ += 2;
    if (!hex4(low)) return fail("invalid \\u escape");
    if (low < 0xDC00 || low > 0xDFFF) return fail("high surrogate not followed by a low surrogate");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  appendCodePoint(out, cp);
  return true;
}

bool JsonReader::stringBody(std::string* out) {
  std::string scratch;  // escapes of a skipped string are still decoded, to validate them (rare)
  for (;;) {
    const char* run = p_;
    p_ = stringRunEnd(p_, end_);
    if (out) out->append(run, static_cast<size_t>(p_ - run));
    if (p_ >= end_) return fail("unterminated string");
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return true;
    }
    if (c == '\\') {
      ++p_;
      if (!readEscape(out ? *out : scratch)) return false;
      scratch.clear();
    } else if (c >= 0x80) {
      const size_t n = utf8Length(reinterpret_cast<const unsigned char*>(p_), reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return fail("invalid UTF-8 in string");
      if (out) out->append(p_, n);
      p_ += n;
    } else {
      return fail("control character in string");
    }
  }
}

bool JsonReader::readString(std::string& out) {
  skipWs();
  if (p_ >= end_ || *p_ != '"') return fail("expected a string");
  ++p_;
  out.clear();
  return stringBody(&out);
}

// --- numbers ------------------------------------------------------------------

bool JsonReader::skipNumber(const char** start) {
  *start = p_;
  if (p_ < end_ && *p_ == '-') ++p_;
  if (p_ >= end_ || !isDigit(*p_)) return fail("invalid number");
  if (*p_ == '0') ++p_;
  else
    while (p_ < end_ && isDigit(*p_)) ++p_;
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ >= end_ || !isDigit(*p_)) return fail("invalid number: digits must follow '.'");
    while (p_ < end_ && isDigit(*p_)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ >= end_ || !isDigit(*p_)) return fail("invalid number: digits must follow the exponent");
    while (p_ < end_ && isDigit(*p_)) ++p_;
  }
  return true;
}

namespace {

// A validated JSON number, taken apart: value = (-1)^negative x mantissa x 10^exp10,
// exact while !overflow (at most 19 significant digits kept).
struct DecimalParts {
  bool negative = false;
  uint64_t mantissa = 0;
  int digits = 0;  // significant digits in mantissa (leading zeros excluded)
  bool overflow = false;
  int64_t exp10 = 0;
  bool integral = true;  // no fraction and no exponent
};

void addDigit(DecimalParts& n, char c, bool fraction) {
  if (n.digits < 19) {
    n.mantissa = n.mantissa * 10 + static_cast<uint64_t>(c - '0');
    if (n.mantissa != 0) ++n.digits;
    if (fraction) --n.exp10;
  } else {
    n.overflow = true;  // too many digits for the fast path
    if (!fraction) ++n.exp10;
  }
}

// [q, end) was validated by skipNumber.
DecimalParts decimalParts(const char* q, const char* end) {
  DecimalParts n;
  n.negative = *q == '-';
  if (n.negative) ++q;
  for (; q < end && isDigit(*q); ++q) addDigit(n, *q, false);
  if (q < end && *q == '.') {
    n.integral = false;
    for (++q; q < end && isDigit(*q); ++q) addDigit(n, *q, true);
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    n.integral = false;
    ++q;
    bool expNegative = false;
    if (*q == '+' || *q == '-') expNegative = *q++ == '-';
    int64_t e = 0;
    for (; q < end; ++q) e = e < 100000 ? e * 10 + (*q - '0') : e;  // saturate: strtod decides
    n.exp10 += expNegative ? -e : e;
  }
  return n;
}

// An integer that json::parse keeps as int64 / uint64; false if it becomes a double.
bool integerValue(const DecimalParts& n, const char* start, const char* end, json& out) {
  if (!n.integral) return false;
  if (!n.overflow) {
    // Up to 19 digits always fits uint64 (< 10^19 < 2^64).
    if (!n.negative) {
      out = n.mantissa;
      return true;
    }
    if (n.mantissa <= static_cast<uint64_t>(INT64_MAX) + 1) {
      out = n.mantissa == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(n.mantissa);
      return true;
    }
    return false;
  }
  if (n.negative) return false;
  // 20 digits may still fit uint64 (json::parse keeps those as unsigned).
  errno = 0;
  std::string token(start, static_cast<size_t>(end - start));
  char* parsedEnd = nullptr;
  const unsigned long long v = std::strtoull(token.c_str(), &parsedEnd, 10);
  if (errno != 0 || parsedEnd != token.c_str() + token.size()) return false;
  out = static_cast<uint64_t>(v);
  return true;
}

#if defined(__EMSCRIPTEN__)
// In WebAssembly the platform parses a decimal that Clinger's path cannot
// (bindings/wasm/parse_decimal.js: JavaScript's Number(), correctly rounded like
// strtod). Why: musl's strtod does its work in software long double, and with
// it came 9 KB of the browser engine's gzipped download (issue 27); it runs
// only for numbers with more than 15 significant digits or a large exponent.
extern "C" double agui_parse_decimal(const char* text, size_t length);
#endif

double doubleValue(const DecimalParts& n, const char* start, const char* end) {
  if (!n.overflow && n.mantissa < (uint64_t{1} << 53) && n.exp10 >= -22 && n.exp10 <= 22) {
    // Clinger's fast path: both operands are exact doubles, so one IEEE
    // operation rounds correctly.
    double d = static_cast<double>(n.mantissa);
    d = n.exp10 < 0 ? d / kExactPow10[-n.exp10] : d * kExactPow10[n.exp10];
    return n.negative ? -d : d;
  }
  const size_t len = static_cast<size_t>(end - start);
#if defined(__EMSCRIPTEN__)
  return agui_parse_decimal(start, len);
#else
  char small[64];
  std::string big;
  const char* text;
  if (len < sizeof small) {
    std::memcpy(small, start, len);
    small[len] = '\0';
    text = small;
  } else {
    big.assign(start, len);
    text = big.c_str();
  }
  return std::strtod(text, nullptr);
#endif
}

}  // namespace

bool JsonReader::readNumber(json& out) {
  const char* start;
  if (!skipNumber(&start)) return false;
  const DecimalParts n = decimalParts(start, p_);
  if (integerValue(n, start, p_, out)) return true;
  const double d = doubleValue(n, start, p_);
  if (!std::isfinite(d)) return fail("number out of double range");
  out = d;
  return true;
}

// --- literals, containers -----------------------------------------------------------

bool JsonReader::literal(const char* word, size_t n) {
  if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return fail("invalid literal");
  p_ += n;
  return true;
}

bool JsonReader::open(char bracket, const char* expected) {
  skipWs();
  if (p_ >= end_ || *p_ != bracket) return fail(expected);
  ++p_;
  return push();
}

bool JsonReader::nextItem(char close, bool first, bool* done, const char* unterminated, const char* badSeparator) {
  skipWs();
  if (p_ >= end_) return fail(unterminated);
  if (*p_ == close) {
    ++p_;
    pop();
    *done = true;
    return true;
  }
  if (!first) {
    if (*p_ != ',') return fail(badSeparator);
    ++p_;
  }
  *done = false;
  return true;
}

bool JsonReader::enterObject() { return open('{', "expected an object"); }

bool JsonReader::enterArray() { return open('[', "expected an array"); }

bool JsonReader::nextElement(bool first, bool* done) {
  return nextItem(']', first, done, "unterminated array", "expected ',' or ']' in array");
}

bool JsonReader::nextMember(std::string& key, bool first, bool* done) {
  if (!nextItem('}', first, done, "unterminated object", "expected ',' or '}' in object")) return false;
  if (*done) return true;
  skipWs();
  if (p_ >= end_ || *p_ != '"') return fail("expected a member name");
  ++p_;
  key.clear();
  if (!stringBody(&key)) return false;
  skipWs();
  if (p_ >= end_ || *p_ != ':') return fail("expected ':' after a member name");
  ++p_;
  return true;
}

bool JsonReader::readObject(json& out) {
  if (!enterObject()) return false;
  out = json::object();
  auto& obj = *out.get_ptr<json::object_t*>();
  std::string key;
  bool done = false;
  for (bool first = true;; first = false) {
    if (!nextMember(key, first, &done)) return false;
    if (done) return true;
    json& slot = obj[std::move(key)];
    slot = json();  // a duplicate key: the last one wins
    if (!readValue(slot)) return false;
  }
}

bool JsonReader::readArray(json& out) {
  if (!enterArray()) return false;
  out = json::array();
  auto& arr = *out.get_ptr<json::array_t*>();
  bool done = false;
  for (bool first = true;; first = false) {
    if (!nextElement(first, &done)) return false;
    if (done) return true;
    arr.emplace_back();
    if (!readValue(arr.back())) return false;
  }
}

bool JsonReader::readValue(json& out) {
  skipWs();
  if (p_ >= end_) return fail("unexpected end of input");
  switch (*p_) {
    case '{': return readObject(out);
    case '[': return readArray(out);
    case '"': {
      ++p_;
      out = json::string_t();
      return stringBody(&*out.get_ptr<json::string_t*>());
    }
    case 't':
      out = true;
      return literal("true", 4);
    case 'f':
      out = false;
      return literal("false", 5);
    case 'n':
      out = nullptr;
      return literal("null", 4);
    default:
      if (*p_ == '-' || isDigit(*p_)) return readNumber(out);
      return fail("unexpected character");
  }
}

bool JsonReader::skipValue() {
  skipWs();
  if (p_ >= end_) return fail("unexpected end of input");
  switch (*p_) {
    case '{': {
      if (!enterObject()) return false;
      std::string key;
      bool done = false;
      for (bool first = true;; first = false) {
        if (!nextMember(key, first, &done)) return false;
        if (done) return true;
        if (!skipValue()) return false;
      }
    }
    case '[': {
      if (!enterArray()) return false;
      bool done = false;
      for (bool first = true;; first = false) {
        if (!nextElement(first, &done)) return false;
        if (done) return true;
        if (!skipValue()) return false;
      }
    }
    case '"': ++p_; return stringBody(nullptr);
    case 't': return literal("true", 4);
    case 'f': return literal("false", 5);
    case 'n': return literal("null", 4);
    default: {
      if (*p_ != '-' && !isDigit(*p_)) return fail("unexpected character");
      // Validate the way readNumber would, including the range of doubles.
      json scratch;
      return readNumber(scratch);
    }
  }
}

}  // namespace agui_sync
