// libFuzzer target: RFC 8785 canonical JSON and the state digest
// (src/canonical_json.*, src/sha256.*).
//
// Input: any bytes. Two independent checks:
//  A. If the input parses as JSON (allow_exceptions = false):
//     - the canonical text parses again, as JSON, to the same value (numbers
//       compared as the doubles JCS turns them into);
//     - canonicalizing the re-parsed value gives identical text (idempotence);
//     - the digest is stable and equals "sha256:" + SHA-256 of the canonical text;
//     - the canonical text has no insignificant whitespace and every object's
//       keys are in strictly increasing UTF-16 code-unit order (checked with an
//       ordered parse and an independent UTF-8 -> UTF-16 conversion);
//     - every number is printed per ECMAScript Number::toString (see C).
//  B. If the input is at least 8 bytes, its first 8 bytes as an IEEE-754 double.
//  C. formatEcmaNumber(d) for a finite d: parses back to exactly d (round trip);
//     its digit string is the correctly rounded k-digit decimal of d whenever
//     that one round-trips (glibc printf rounds exactly, so "%.{k-1}e" is an
//     oracle), no (k-1)-digit decimal closest to d round-trips (shortest), and
//     the layout follows ECMA-262 Number::toString steps 6-10.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include <agui_sync/canonical_json.h>
#include "fuzz_common.h"
#include "json/sha256.h"

using nlohmann::json;

namespace {

// Digits (no leading/trailing zeros, no point) and decimal exponent n such that
// text = 0.d1d2..dk x 10^n; returns false if `text` is not a plain JS number form.
bool decompose(const std::string& text, std::string& digits, int& n) {
  std::string mant = text;
  int exp10 = 0;
  const size_t e = text.find('e');
  if (e != std::string::npos) {
    mant = text.substr(0, e);
    exp10 = std::atoi(text.c_str() + e + 1);
  }
  const size_t dot = mant.find('.');
  std::string intPart = dot == std::string::npos ? mant : mant.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : mant.substr(dot + 1);
  std::string all = intPart + frac;
  int pointPos = static_cast<int>(intPart.size());
  size_t lead = 0;
  while (lead < all.size() && all[lead] == '0') ++lead;
  if (lead == all.size()) return false;
  digits = all.substr(lead);
  pointPos -= static_cast<int>(lead);
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  n = pointPos + exp10;
  return true;
}

void checkNumber(double d) {
  if (!std::isfinite(d)) return;
  const std::string s = agui_sync::formatEcmaNumber(d);
  if (d == 0) {
    FUZZ_CHECK(s == "0", "formatEcmaNumber(%s0) = '%s'", std::signbit(d) ? "-" : "", s.c_str());
    return;
  }
  // Round trip.
  char* end = nullptr;
  const double back = std::strtod(s.c_str(), &end);
  FUZZ_CHECK(end && *end == '\0' && back == d, "formatEcmaNumber(%.17g) = '%s' does not read back", d, s.c_str());

  const double a = std::fabs(d);
  const std::string body = d < 0 ? s.substr(1) : s;
  FUZZ_CHECK(d > 0 || s[0] == '-', "sign lost: '%s' for %.17g", s.c_str(), d);
  std::string digits;
  int n = 0;
  FUZZ_CHECK(decompose(body, digits, n), "cannot read '%s'", s.c_str());
  const int k = static_cast<int>(digits.size());
  FUZZ_CHECK(k >= 1 && k <= 17, "%d significant digits in '%s'", k, s.c_str());

  // Layout per Number::toString steps 6-10 for this (k, n).
  if (k <= n && n <= 21) {
    FUZZ_CHECK(body.find_first_of(".e") == std::string::npos, "'%s' should be an integer form", s.c_str());
  } else if (0 < n && n <= 21) {
    FUZZ_CHECK(body.find('e') == std::string::npos && body.find('.') == static_cast<size_t>(n),
               "'%s' should be a plain decimal", s.c_str());
  } else if (-6 < n && n <= 0) {
    FUZZ_CHECK(body.compare(0, 2, "0.") == 0 && body.find('e') == std::string::npos, "'%s' should be 0.000ddd",
               s.c_str());
  } else {
    FUZZ_CHECK(body.find('e') != std::string::npos, "'%s' should use an exponent", s.c_str());
    FUZZ_CHECK(body.find("e+") != std::string::npos || body.find("e-") != std::string::npos,
               "'%s' exponent needs an explicit sign", s.c_str());
  }

  // Closest k-digit decimal (correctly rounded by glibc).
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", k - 1, a);
  std::string printfDigits;
  int printfN = 0;
  FUZZ_CHECK(decompose(buf, printfDigits, printfN), "printf gave '%s'", buf);
  // At a power of two the rounding interval is narrower below than above, so
  // the closest k-digit decimal may fail to read back while a farther one does;
  // only when the closest one reads back must it be the output.
  if (printfDigits != digits || printfN != n)
    FUZZ_CHECK(std::strtod(buf, nullptr) != a, "'%s' is not the closest %d-digit decimal of %.17g (printf: %s)",
               s.c_str(), k, d, buf);
  // Shortest: no (k-1)-digit decimal reads back as d.
  if (k > 1) {
    std::snprintf(buf, sizeof buf, "%.*e", k - 2, a);
    FUZZ_CHECK(std::strtod(buf, nullptr) != a, "'%s' is not shortest: %s also reads back as %.17g", s.c_str(), buf, d);
  }
}

double asDouble(const json& v) {
  // Unsigned first: nlohmann's is_number_integer() is also true for unsigned.
  if (v.is_number_unsigned()) return static_cast<double>(v.get<uint64_t>());
  if (v.is_number_integer()) return static_cast<double>(v.get<int64_t>());
  return v.get<double>();
}

// Same value once every number is the double JCS makes of it (a non-finite
// double has no JSON form and canonicalizes to null).
bool sameModuloNumbers(const json& a, const json& b) {
  if (a.is_number() && !std::isfinite(asDouble(a))) return b.is_null();
  if (a.is_number() || b.is_number()) return a.is_number() && b.is_number() && asDouble(a) == asDouble(b);
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!sameModuloNumbers(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto jt = b.find(it.key());
      if (jt == b.end() || !sameModuloNumbers(it.value(), *jt)) return false;
    }
    return true;
  }
  return a == b;
}

void forEachNumber(const json& v, void (*fn)(double)) {
  if (v.is_number()) fn(asDouble(v));
  else if (v.is_structured())
    for (const auto& child : v) forEachNumber(child, fn);
}

// UTF-8 (already validated by the parser) to UTF-16 code units.
std::u16string toUtf16(const std::string& s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp;
    size_t len;
    if (c < 0x80) cp = c, len = 1;
    else if (c < 0xE0) cp = c & 0x1F, len = 2;
    else if (c < 0xF0) cp = c & 0x0F, len = 3;
    else cp = c & 0x07, len = 4;
    for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
  }
  return out;
}

void checkKeyOrder(const nlohmann::ordered_json& v) {
  if (v.is_object()) {
    const std::string* prev = nullptr;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (prev)
        FUZZ_CHECK(toUtf16(*prev) < toUtf16(it.key()), "keys out of UTF-16 order: '%s' before '%s'",
                   fuzz::excerpt(*prev).c_str(), fuzz::excerpt(it.key()).c_str());
      prev = &it.key();
      checkKeyOrder(it.value());
    }
  } else if (v.is_array()) {
    for (const auto& child : v) checkKeyOrder(child);
  }
}

// Whitespace outside strings is not allowed in canonical text.
void checkNoWhitespace(const std::string& text) {
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      else
        FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20, "raw control character 0x%02x in a canonical string",
                   static_cast<unsigned char>(c));
      continue;
    }
    if (c == '"') inString = true;
    FUZZ_CHECK(c != ' ' && c != '\n' && c != '\r' && c != '\t', "whitespace at offset %zu of canonical text", i);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 8) {
    double d;
    std::memcpy(&d, data, sizeof d);
    checkNumber(d);
  }

  const json value = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return 0;

  const std::string c1 = agui_sync::canonicalJson(value);
  const json reparsed = json::parse(c1, nullptr, false);
  FUZZ_CHECK(!reparsed.is_discarded(), "canonical text is not JSON: %s", fuzz::excerpt(c1).c_str());
  FUZZ_CHECK(sameModuloNumbers(value, reparsed), "canonical text changes the value\n  in  %s\n  out %s",
             fuzz::excerpt(value.dump()).c_str(), fuzz::excerpt(c1).c_str());
  const std::string c2 = agui_sync::canonicalJson(reparsed);
  FUZZ_CHECK(c1 == c2, "canonicalization is not idempotent\n  c1 %s\n  c2 %s", fuzz::excerpt(c1).c_str(),
             fuzz::excerpt(c2).c_str());

  std::string appended = "x";
  agui_sync::appendCanonicalJson(value, appended);
  FUZZ_CHECK(appended.compare(1, std::string::npos, c1) == 0, "appendCanonicalJson differs from canonicalJson");

  const std::string digest = agui_sync::stateDigest(value);
  FUZZ_CHECK(digest == "sha256:" + agui_sync::sha256Hex(c1), "digest is not SHA-256 of the canonical text");
  FUZZ_CHECK(digest == agui_sync::stateDigest(reparsed), "digest changes after a canonical round trip");
  FUZZ_CHECK(digest.size() == 7 + 64, "digest '%s' has the wrong length", digest.c_str());

  checkNoWhitespace(c1);
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(c1, nullptr, false);
  FUZZ_CHECK(!ordered.is_discarded(), "ordered parse failed");
  checkKeyOrder(ordered);
  forEachNumber(value, checkNumber);
  return 0;
}
