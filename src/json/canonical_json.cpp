#include <agui_sync/canonical_json.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "json/ecma_number.h"
#include "json/json_escape.h"
#include "json/sha256.h"
#include "json/utf16_order.h"

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
void appendQuoted(const std::string& s, std::string& out) { appendJsonString(out, s); }

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
