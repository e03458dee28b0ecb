#include <agui_sync/canonical_json.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "json/ecma_number.h"
#include "json/sha256.h"

// RFC 8785 (JCS). Everything here is exception-free: nlohmann values are only
// read through type checks plus get_ptr(), never through throwing accessors.

namespace agui_sync {

namespace {

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

void appendValue(const nlohmann::json& value, std::string& out);

void appendArray(const nlohmann::json::array_t& arr, std::string& out) {
  out += '[';
  bool first = true;
  for (const auto& item : arr) {
    if (!first) out += ',';
    first = false;
    appendValue(item, out);
  }
  out += ']';
}

void appendObject(const nlohmann::json::object_t& obj, std::string& out) {
  // Sort pointers to the map entries; the map is already in UTF-8 order, so
  // for typical keys the sort finds the input sorted and moves nothing.
  std::vector<const nlohmann::json::object_t::value_type*> entries;
  entries.reserve(obj.size());
  for (const auto& kv : obj) entries.push_back(&kv);
  std::sort(entries.begin(), entries.end(), [](const auto* x, const auto* y) { return utf16Less(x->first, y->first); });
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
}

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
    case value_t::array:
      appendArray(*value.get_ptr<const nlohmann::json::array_t*>(), out);
      return;
    case value_t::object:
      appendObject(*value.get_ptr<const nlohmann::json::object_t*>(), out);
      return;
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
