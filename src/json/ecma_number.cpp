#include "json/ecma_number.h"

#include <agui_sync/canonical_json.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace agui_sync {

namespace {

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

// The rounding interval of a positive double v = f * 2^e, scaled to integers:
// value = r/s, upper boundary = (r + mPlus)/s, lower boundary = (r - mMinus)/s.
struct Interval {
  BigUInt r, s, mPlus, mMinus;
  // Round-half-even parsing means a decimal exactly on the boundary between two
  // doubles reads back as the one with an even significand, so for even f the
  // interval is closed.
  bool inclusive = false;

  bool overflowed() const { return r.overflowed() || s.overflowed() || mPlus.overflowed() || mMinus.overflowed(); }
};

Interval roundingInterval(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const uint64_t fracBits = bits & ((uint64_t(1) << 52) - 1);
  const int biased = int((bits >> 52) & 0x7ff);
  // v = f * 2^e exactly.
  const uint64_t f = biased == 0 ? fracBits : (fracBits | (uint64_t(1) << 52));  // subnormal when biased == 0
  const int e = biased == 0 ? 1 - 1075 : biased - 1075;
  // At a power of two (other than the smallest normal) the gap below is half
  // the gap above, so the interval is asymmetric.
  const bool lowerGapHalf = fracBits == 0 && biased > 1;

  // Everything is scaled by 2 (or 4) so the half-gaps are integers.
  Interval iv{BigUInt(f), BigUInt(1), BigUInt(1), BigUInt(1), (f & 1) == 0};
  if (e >= 0) {
    iv.r.shiftLeft(e + (lowerGapHalf ? 2 : 1));
    iv.s = BigUInt(lowerGapHalf ? 4 : 2);
    iv.mPlus.shiftLeft(e + (lowerGapHalf ? 1 : 0));
    iv.mMinus.shiftLeft(e);
  } else {
    iv.r.shiftLeft(lowerGapHalf ? 2 : 1);
    iv.s.shiftLeft(-e + (lowerGapHalf ? 2 : 1));
    if (lowerGapHalf) iv.mPlus = BigUInt(2);
  }
  return iv;
}

// Scales the interval by 10^-est and returns the exact decimal exponent est.
int scaleToFirstDigit(double v, Interval& iv) {
  // Estimate the decimal exponent from a floating-point log (the small fudge
  // biases it low). libm differences between platforms cannot leak into the
  // output: the two loops below correct the estimate exactly in either
  // direction using only integer arithmetic.
  int est = int(std::ceil(std::log10(v) - 1e-10));
  if (est >= 0) {
    iv.s.mulPow10(est);
  } else {
    iv.r.mulPow10(-est);
    iv.mPlus.mulPow10(-est);
    iv.mMinus.mulPow10(-est);
  }
  // Too small: the upper boundary reaches 10^est, so one more integer digit.
  for (;;) {
    int c = BigUInt::compareSum(iv.r, iv.mPlus, iv.s);
    if (!(c > 0 || (iv.inclusive && c == 0))) break;
    iv.s.mulSmall(10);
    ++est;
  }
  // Too large: the upper boundary is below 10^(est-1), so the first digit
  // would be 0.
  for (;;) {
    BigUInt hi = iv.r;
    hi.add(iv.mPlus);
    hi.mulSmall(10);
    int c = BigUInt::compare(hi, iv.s);
    if (!(c < 0 || (!iv.inclusive && c == 0))) break;
    iv.r.mulSmall(10);
    iv.mPlus.mulSmall(10);
    iv.mMinus.mulSmall(10);
    --est;
  }
  return est;
}

// The last digit d was generated with remainder r: round it (low, high: the
// truncated prefix, or prefix + 1, still reads back as the value), and append it.
void appendLastDigit(const Interval& iv, bool low, bool high, int d, char* digits, int& k, int& est) {
  if (low && high) {
    // Both prefixes round-trip: pick the closer, ties to even.
    BigUInt twice = iv.r;
    twice.shiftLeft(1);
    int c = BigUInt::compare(twice, iv.s);
    if (c > 0 || (c == 0 && (d & 1))) ++d;
  } else if (high) {
    ++d;
  }
  if (d != 10) {
    digits[k++] = char('0' + d);
    return;
  }
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
}

// Generates digits until the prefix (rounded) lies inside the interval.
void generateDigits(Interval& iv, char* digits, int& k, int& est) {
  k = 0;
  for (;;) {
    iv.r.mulSmall(10);
    iv.mPlus.mulSmall(10);
    iv.mMinus.mulSmall(10);
    int d = 0;
    while (BigUInt::compare(iv.r, iv.s) >= 0) {
      iv.r.sub(iv.s);
      ++d;
    }
    // Can we stop here rounding down (the truncated prefix is inside the
    // interval) or rounding up (prefix + 1 is inside)?
    int lo = BigUInt::compare(iv.r, iv.mMinus);
    int hi = BigUInt::compareSum(iv.r, iv.mPlus, iv.s);
    bool low = lo < 0 || (iv.inclusive && lo == 0);
    bool high = hi > 0 || (iv.inclusive && hi == 0);
    if (!low && !high && k < 30) {
      digits[k++] = char('0' + d);
      continue;
    }
    appendLastDigit(iv, low, high, d, digits, k, est);
    return;
  }
}

// Digits of a finite, positive double and the ECMAScript exponent n, such that
// value = 0.d1d2...dk * 10^n, with k minimal and, among k-digit candidates, the
// one closest to the value (ties to even), as Number::toString step 5 requires.
bool shortestDigits(double v, char* digits, int& k, int& n) {
  Interval iv = roundingInterval(v);
  int est = scaleToFirstDigit(v, iv);
  generateDigits(iv, digits, k, est);
  if (iv.overflowed()) return false;
  while (k > 1 && digits[k - 1] == '0') --k;
  n = est;
  return true;
}

// ECMAScript Number::toString(x), radix 10, steps 6-10, for the digits and
// exponent n of shortestDigits().
void layOutDigits(const char* digits, int k, int n, std::string& out) {
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

}  // namespace

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
  layOutDigits(digits, k, n, out);
}

std::string formatEcmaNumber(double v) {
  std::string out;
  appendEcmaNumber(v, out);
  return out;
}

}  // namespace agui_sync
