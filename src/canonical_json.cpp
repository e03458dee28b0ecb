#include "canonical_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sha256.h"

// RFC 8785 (JCS). Everything here is exception-free: nlohmann values are only
// read through type checks plus get_ptr(), never through throwing accessors.

namespace agui_sync {

namespace {

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

// Shortest round-trip decimal digits, written out because std::to_chars(double)
// is not available in every toolchain we target (Emscripten 3.1.6's libc++ only
// has the integer overloads) and the digest must be identical natively and in
// WASM. This is the free-format algorithm of Steele & White / Burger & Dybvig:
// exact big-integer arithmetic, so it is correct for every double without any
// approximation tables.

// Minimal unsigned big integer: little-endian 32-bit limbs with a used-length so
// typical magnitudes (1e-5..1e15) cost only a few limbs per operation. The
// largest intermediate is about 2^1090 (r for subnormals scaled by 10^324),
// so 40 limbs (1280 bits) is enough; overflow is still checked defensively.
class BigUInt {
 public:
  static constexpr int kLimbs = 40;

  explicit BigUInt(uint64_t v = 0) {
    limb_[0] = uint32_t(v);
    limb_[1] = uint32_t(v >> 32);
    n_ = limb_[1] ? 2 : (limb_[0] ? 1 : 0);
  }

  // Copies touch only the used limbs: the digit loop copies on every step and
  // typical values use 2-4 of the 40 limbs. Limbs at or above n_ are never read.
  BigUInt(const BigUInt& o) : n_(o.n_), overflow_(o.overflow_) {
    std::memcpy(limb_, o.limb_, sizeof(uint32_t) * size_t(o.n_));
  }
  BigUInt& operator=(const BigUInt& o) {
    n_ = o.n_;
    overflow_ = o.overflow_;
    std::memcpy(limb_, o.limb_, sizeof(uint32_t) * size_t(o.n_));
    return *this;
  }

  bool overflowed() const { return overflow_; }

  void shiftLeft(int bits) {
    if (n_ == 0 || bits == 0) return;
    const int limbs = bits / 32, rem = bits % 32;
    if (n_ + limbs + 1 > kLimbs) {
      overflow_ = true;
      return;
    }
    if (rem == 0) {
      for (int i = n_ - 1; i >= 0; --i) limb_[i + limbs] = limb_[i];
      n_ += limbs;  // nothing spills into a new top limb
    } else {
      // Walk from the top so each source limb is read before it is overwritten.
      limb_[n_ + limbs] = 0;
      for (int i = n_ - 1; i >= 0; --i) {
        limb_[i + limbs + 1] |= limb_[i] >> (32 - rem);
        limb_[i + limbs] = limb_[i] << rem;
      }
      n_ += limbs + 1;
      trim();
    }
    for (int i = 0; i < limbs; ++i) limb_[i] = 0;
  }

  void mulSmall(uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < n_; ++i) {
      uint64_t t = uint64_t(limb_[i]) * m + carry;
      limb_[i] = uint32_t(t);
      carry = t >> 32;
    }
    if (carry) {
      if (n_ == kLimbs) {
        overflow_ = true;
        return;
      }
      limb_[n_++] = uint32_t(carry);
    }
  }

  void mulPow10(int e) {
    for (; e >= 9; e -= 9) mulSmall(1000000000u);
    static constexpr uint32_t kSmall[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    if (e > 0) mulSmall(kSmall[e]);
  }

  // this += o
  void add(const BigUInt& o) {
    int n = n_ > o.n_ ? n_ : o.n_;
    uint64_t carry = 0;
    for (int i = 0; i < n; ++i) {
      uint64_t t = carry + (i < n_ ? limb_[i] : 0) + (i < o.n_ ? o.limb_[i] : 0);
      limb_[i] = uint32_t(t);
      carry = t >> 32;
    }
    n_ = n;
    if (carry) {
      if (n_ == kLimbs) {
        overflow_ = true;
        return;
      }
      limb_[n_++] = uint32_t(carry);
    }
    overflow_ = overflow_ || o.overflow_;
  }

  // this -= o, requires this >= o.
  void sub(const BigUInt& o) {
    int64_t borrow = 0;
    for (int i = 0; i < n_; ++i) {
      int64_t t = int64_t(limb_[i]) - (i < o.n_ ? o.limb_[i] : 0) - borrow;
      borrow = t < 0;
      limb_[i] = uint32_t(t + (borrow << 32));
    }
    trim();
  }

  static int compare(const BigUInt& a, const BigUInt& b) {
    if (a.n_ != b.n_) return a.n_ < b.n_ ? -1 : 1;
    for (int i = a.n_ - 1; i >= 0; --i)
      if (a.limb_[i] != b.limb_[i]) return a.limb_[i] < b.limb_[i] ? -1 : 1;
    return 0;
  }

  // compare(a + b, c) without modifying the operands.
  static int compareSum(const BigUInt& a, const BigUInt& b, const BigUInt& c) {
    BigUInt s = a;
    s.add(b);
    return compare(s, c);
  }

 private:
  void trim() {
    while (n_ > 0 && limb_[n_ - 1] == 0) --n_;
  }

  uint32_t limb_[kLimbs];  // deliberately uninitialised above n_ (see copy ctor)
  int n_ = 0;
  bool overflow_ = false;
};

// Digits of a finite, positive double and the ECMAScript exponent n, such that
// value = 0.d1d2...dk * 10^n, with k minimal and, among k-digit candidates, the
// one closest to the value (ties to even), as Number::toString step 5 requires.
bool shortestDigits(double v, char* digits, int& k, int& n) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const uint64_t fracBits = bits & ((uint64_t(1) << 52) - 1);
  const int biased = int((bits >> 52) & 0x7ff);

  // v = f * 2^e exactly.
  uint64_t f;
  int e;
  if (biased == 0) {
    f = fracBits;  // subnormal
    e = 1 - 1075;
  } else {
    f = fracBits | (uint64_t(1) << 52);
    e = biased - 1075;
  }
  // Round-half-even parsing means a decimal exactly on the boundary between two
  // doubles reads back as the one with an even significand, so for even f the
  // rounding interval is closed.
  const bool inclusive = (f & 1) == 0;
  // At a power of two (other than the smallest normal) the gap below is half
  // the gap above, so the interval is asymmetric.
  const bool lowerGapHalf = fracBits == 0 && biased > 1;

  // value = r/s, upper boundary = (r + mPlus)/s, lower boundary = (r - mMinus)/s.
  // Everything is scaled by 2 (or 4) so the half-gaps are integers.
  BigUInt r(f), s(1), mPlus(1), mMinus(1);
  if (e >= 0) {
    r.shiftLeft(e + (lowerGapHalf ? 2 : 1));
    s = BigUInt(lowerGapHalf ? 4 : 2);
    mPlus.shiftLeft(e + (lowerGapHalf ? 1 : 0));
    mMinus.shiftLeft(e);
  } else {
    r.shiftLeft(lowerGapHalf ? 2 : 1);
    s.shiftLeft(-e + (lowerGapHalf ? 2 : 1));
    if (lowerGapHalf) mPlus = BigUInt(2);
  }

  // Estimate the decimal exponent from a floating-point log (the small fudge
  // biases it low). libm differences between platforms cannot leak into the
  // output: the two loops below correct the estimate exactly in either
  // direction using only integer arithmetic.
  int est = int(std::ceil(std::log10(v) - 1e-10));
  if (est >= 0) {
    s.mulPow10(est);
  } else {
    r.mulPow10(-est);
    mPlus.mulPow10(-est);
    mMinus.mulPow10(-est);
  }
  // Too small: the upper boundary reaches 10^est, so one more integer digit.
  for (;;) {
    int c = BigUInt::compareSum(r, mPlus, s);
    if (c > 0 || (inclusive && c == 0)) {
      s.mulSmall(10);
      ++est;
    } else {
      break;
    }
  }
  // Too large: the upper boundary is below 10^(est-1), so the first digit
  // would be 0.
  for (;;) {
    BigUInt hi = r;
    hi.add(mPlus);
    hi.mulSmall(10);
    int c = BigUInt::compare(hi, s);
    if (c < 0 || (!inclusive && c == 0)) {
      r.mulSmall(10);
      mPlus.mulSmall(10);
      mMinus.mulSmall(10);
      --est;
    } else {
      break;
    }
  }

  k = 0;
  for (;;) {
    r.mulSmall(10);
    mPlus.mulSmall(10);
    mMinus.mulSmall(10);
    int d = 0;
    while (BigUInt::compare(r, s) >= 0) {
      r.sub(s);
      ++d;
    }
    // Can we stop here rounding down (the truncated prefix is inside the
    // interval) or rounding up (prefix + 1 is inside)?
    int lo = BigUInt::compare(r, mMinus);
    int hi = BigUInt::compareSum(r, mPlus, s);
    bool low = lo < 0 || (inclusive && lo == 0);
    bool high = hi > 0 || (inclusive && hi == 0);
    if (!low && !high && k < 30) {
      digits[k++] = char('0' + d);
      continue;
    }
    if (low && high) {
      // Both prefixes round-trip: pick the closer, ties to even.
      BigUInt twice = r;
      twice.shiftLeft(1);
      int c = BigUInt::compare(twice, s);
      if (c > 0 || (c == 0 && (d & 1))) ++d;
    } else if (high) {
      ++d;
    }
    if (d == 10) {
      // Not reachable with an exact exponent, but keep the digits valid.
      int i = k - 1;
      while (i >= 0 && digits[i] == '9') digits[i--] = '0';
      if (i >= 0) {
        ++digits[i];
        digits[k++] = '0';
      } else {
        digits[0] = '1';
        k = 1;
        ++est;
      }
    } else {
      digits[k++] = char('0' + d);
    }
    break;
  }
  if (r.overflowed() || s.overflowed() || mPlus.overflowed() || mMinus.overflowed()) return false;
  while (k > 1 && digits[k - 1] == '0') --k;
  n = est;
  return true;
}

void appendEcmaNumber(double v, std::string& out) {
  // JSON has no NaN/Infinity; RFC 8785 says such values must be rejected, but we
  // cannot throw, so mirror nlohmann's dump() and emit null deterministically.
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  // Covers -0 as well: ECMAScript prints both zeros as "0".
  if (v == 0) {
    out += '0';
    return;
  }
  if (v < 0) {
    out += '-';
    v = -v;
  }

  // Fast path for integral values below 2^53 (counters, ids, indexes: the
  // common case in agent state). Every such integer is exactly representable
  // and its rounding interval is at most +-0.5, so no shorter decimal maps to
  // it: its plain digits are the ECMAScript output.
  if (v < 9007199254740992.0 && v == std::floor(v)) {
    char ibuf[24];
    std::to_chars_result r = std::to_chars(ibuf, ibuf + sizeof ibuf, static_cast<uint64_t>(v));
    out.append(ibuf, r.ptr);
    return;
  }

  char digits[32];
  int k = 0, n = 0;
  if (!shortestDigits(v, digits, k, n)) {
    // Unreachable: the bignum is sized for the whole double range. Emit
    // something that is still valid, deterministic JSON rather than garbage.
    out += '0';
    return;
  }

  // ECMAScript Number::toString(x), radix 10, steps 6-10.
  if (k <= n && n <= 21) {
    // Integer with up to 21 digits: digits followed by n-k zeros.
    out.append(digits, k);
    out.append(size_t(n - k), '0');
  } else if (0 < n && n <= 21) {
    // Decimal point inside the digit string.
    out.append(digits, n);
    out += '.';
    out.append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    // Small magnitude down to 1e-7 exclusive: 0.000ddd.
    out += "0.";
    out.append(size_t(-n), '0');
    out.append(digits, k);
  } else {
    // Exponent form: d[.ddd]e(+|-)X with exponent n-1.
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits + 1, k - 1);
    }
    out += 'e';
    int e = n - 1;
    out += (e < 0) ? '-' : '+';
    char ebuf[8];
    std::to_chars_result r = std::to_chars(ebuf, ebuf + sizeof ebuf, e < 0 ? -e : e);
    out.append(ebuf, r.ptr);
  }
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

// RFC 8785 section 3.2.2.2: only '"', '\\' and C0 controls are escaped, using
// the short forms where JSON has them and lowercase \u00xx otherwise. All other
// bytes (including DEL and non-ASCII UTF-8) are copied verbatim. Invalid UTF-8
// cannot come from nlohmann's parser; if a caller builds such a string by hand
// we still copy the bytes verbatim so the output stays deterministic.
void appendQuoted(const std::string& s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t runStart = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    // Copy the unescaped run in one go; most strings have no escapes at all.
    out.append(s, runStart, i - runStart);
    runStart = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0x0f];
        break;
    }
  }
  out.append(s, runStart, std::string::npos);
  out += '"';
}

// ---------------------------------------------------------------------------
// Key ordering
// ---------------------------------------------------------------------------

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
uint32_t nextWeight(const std::string& s, size_t& i) {
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

bool utf16Less(const std::string& a, const std::string& b) {
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

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

void appendValue(const nlohmann::json& value, std::string& out) {
  using value_t = nlohmann::json::value_t;
  switch (value.type()) {
    case value_t::null:
      out += "null";
      return;
    case value_t::boolean:
      out += *value.get_ptr<const nlohmann::json::boolean_t*>() ? "true" : "false";
      return;
    // JCS has a single number type (IEEE-754 double), so integers are converted
    // first: 1 and 1.0 canonicalize identically, and integers beyond 2^53 are
    // rounded exactly as a JavaScript peer would see them.
    case value_t::number_integer:
      appendEcmaNumber(static_cast<double>(*value.get_ptr<const nlohmann::json::number_integer_t*>()), out);
      return;
    case value_t::number_unsigned:
      appendEcmaNumber(static_cast<double>(*value.get_ptr<const nlohmann::json::number_unsigned_t*>()), out);
      return;
    case value_t::number_float:
      appendEcmaNumber(*value.get_ptr<const nlohmann::json::number_float_t*>(), out);
      return;
    case value_t::string:
      appendQuoted(*value.get_ptr<const nlohmann::json::string_t*>(), out);
      return;
    case value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : *value.get_ptr<const nlohmann::json::array_t*>()) {
        if (!first) out += ',';
        first = false;
        appendValue(item, out);
      }
      out += ']';
      return;
    }
    case value_t::object: {
      const auto& obj = *value.get_ptr<const nlohmann::json::object_t*>();
      // Sort pointers to the map entries; the map is already in UTF-8 order, so
      // for typical keys the sort finds the input sorted and moves nothing.
      std::vector<const nlohmann::json::object_t::value_type*> entries;
      entries.reserve(obj.size());
      for (const auto& kv : obj) entries.push_back(&kv);
      std::sort(entries.begin(), entries.end(),
                [](const auto* x, const auto* y) { return utf16Less(x->first, y->first); });
      out += '{';
      bool first = true;
      for (const auto* kv : entries) {
        if (!first) out += ',';
        first = false;
        appendQuoted(kv->first, out);
        out += ':';
        appendValue(kv->second, out);
      }
      out += '}';
      return;
    }
    case value_t::binary:
    case value_t::discarded:
    default:
      // Neither can occur in parsed JSON state (binary only comes from
      // CBOR/MessagePack, discarded only from parser callbacks). Emit null so the
      // output is still valid, deterministic JSON.
      out += "null";
      return;
  }
}

}  // namespace

std::string formatEcmaNumber(double v) {
  std::string out;
  appendEcmaNumber(v, out);
  return out;
}

void appendCanonicalJson(const nlohmann::json& value, std::string& out) { appendValue(value, out); }

std::string canonicalJson(const nlohmann::json& value) {
  std::string out;
  appendValue(value, out);
  return out;
}

std::string stateDigest(const nlohmann::json& value) {
  // Hash the canonical text rather than dump(): both peers (C++ and JS) can
  // reproduce JCS exactly, whereas dump() formatting is library-specific.
  return "sha256:" + sha256Hex(canonicalJson(value));
}

}  // namespace agui_sync
