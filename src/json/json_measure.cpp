#include "json/json_measure.h"

#include <cstring>
#include <vector>

#include "json/ecma_number.h"
#include "json/json_write.h"

namespace agui_sync {

size_t valueDepth(const nlohmann::json& value) {
  if (!value.is_structured()) return 0;
  size_t deepest = 0;
  if (value.is_object()) {
    for (const auto& kv : *value.get_ptr<const nlohmann::json::object_t*>()) {
      size_t d = valueDepth(kv.second);
      if (d > deepest) deepest = d;
    }
  } else {
    for (const auto& item : *value.get_ptr<const nlohmann::json::array_t*>()) {
      size_t d = valueDepth(item);
      if (d > deepest) deepest = d;
    }
  }
  return deepest + 1;
}

size_t decimalDigits(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

namespace {

using json = nlohmann::json;

size_t sizeRec(const json& v, size_t limit, SizeMode mode, size_t& total) {
  switch (v.type()) {
    case json::value_t::null: total += 4; break;
    case json::value_t::boolean: total += *v.get_ptr<const json::boolean_t*>() ? 4 : 5; break;
    case json::value_t::number_unsigned: total += decimalDigits(*v.get_ptr<const json::number_unsigned_t*>()); break;
    case json::value_t::number_integer: {
      const int64_t i = *v.get_ptr<const json::number_integer_t*>();
      total += i < 0 ? 1 + decimalDigits(static_cast<uint64_t>(-(i + 1)) + 1) : decimalDigits(static_cast<uint64_t>(i));
      break;
    }
    case json::value_t::string: total += stringSize(*v.get_ptr<const json::string_t*>(), mode); break;
    case json::value_t::array: {
      const auto& arr = *v.get_ptr<const json::array_t*>();
      total += arr.empty() ? 2 : 1 + arr.size();  // brackets + commas
      for (const auto& item : arr) {
        if (total > limit) return total;
        sizeRec(item, limit, mode, total);
      }
      break;
    }
    case json::value_t::object: {
      const auto& obj = *v.get_ptr<const json::object_t*>();
      total += obj.empty() ? 2 : 1 + obj.size() * 2;  // braces + commas + colons
      for (const auto& kv : obj) {
        if (total > limit) return total;
        total += stringSize(kv.first, mode);
        sizeRec(kv.second, limit, mode, total);
      }
      break;
    }
    case json::value_t::number_float: {
      // What dump() would print: the writer's own float printer, without a string.
      char buf[kJsonFloatChars];
      total += writeJsonFloat(*v.get_ptr<const json::number_float_t*>(), buf);
      break;
    }
    default:
      // Binary and discarded values never come from parsed JSON: as the writer prints them.
      total += jsonText(v).size();
      break;
  }
  return total;
}

}  // namespace

namespace {

// Bytes dump() adds beyond the character itself: 1 for the two-character
// escapes ("\\n", "\\\"", ...), 5 for other controls ("\\u001f"), 0 otherwise.
// A table, because this runs over every string a snapshot carries.
struct EscapeCost {
  uint8_t extra[256] = {};
  constexpr EscapeCost() {
    for (int c = 0; c < 0x20; ++c) extra[c] = 5;
    for (unsigned char c : {'"', '\\', '\b', '\f', '\n', '\r', '\t'}) extra[c] = 1;
  }
};
constexpr EscapeCost kEscapeCost;

}  // namespace

size_t quotedSize(const std::string& s) {
  size_t n = 2 + s.size();
  for (unsigned char c : s) n += kEscapeCost.extra[c];
  return n;
}

size_t stringSize(const std::string& s, SizeMode mode) {
  return mode == SizeMode::Exact ? quotedSize(s) : s.size() + 2;
}

size_t serializedSize(const json& value, size_t limit, SizeMode mode) {
  size_t total = 0;
  return sizeRec(value, limit, mode, total);
}

namespace {

// Canonical length of a scalar: numbers as ECMAScript prints the double JCS makes
// of them, everything that is not JSON (binary, discarded) as `null`, which is
// what canonicalJson() writes for it.
size_t canonicalScalarSize(const json& v, std::string& scratch) {
  double d = 0;
  switch (v.type()) {
    case json::value_t::boolean: return *v.get_ptr<const json::boolean_t*>() ? 4 : 5;
    case json::value_t::string: return quotedSize(*v.get_ptr<const json::string_t*>());
    case json::value_t::number_integer: d = static_cast<double>(*v.get_ptr<const json::number_integer_t*>()); break;
    case json::value_t::number_unsigned: d = static_cast<double>(*v.get_ptr<const json::number_unsigned_t*>()); break;
    case json::value_t::number_float: d = *v.get_ptr<const json::number_float_t*>(); break;
    default: return 4;
  }
  scratch.clear();
  appendEcmaNumber(d, scratch);
  return scratch.size();
}

}  // namespace

size_t canonicalSize(const json& value) {
  // Order does not change a length, so children are pushed in any order and a
  // container is counted when it is popped: brackets, commas, and for objects
  // the quoted keys and colons.
  std::vector<const json*> stack{&value};
  std::string scratch;
  size_t total = 0;
  while (!stack.empty()) {
    const json* v = stack.back();
    stack.pop_back();
    if (const auto* arr = v->get_ptr<const json::array_t*>()) {
      total += arr->empty() ? 2 : 1 + arr->size();
      for (const auto& item : *arr) stack.push_back(&item);
    } else if (const auto* obj = v->get_ptr<const json::object_t*>()) {
      total += obj->empty() ? 2 : 1 + 2 * obj->size();
      for (const auto& kv : *obj) {
        total += quotedSize(kv.first);
        stack.push_back(&kv.second);
      }
    } else {
      total += canonicalScalarSize(*v, scratch);
    }
  }
  return total;
}

namespace {

// Word-wise multiply-xor over bytes, then a splitmix64 finalizer per value so that structure
// (type tags, lengths) cannot be confused with content.
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t mix(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

uint64_t mixWord(uint64_t h, uint64_t word) { return mix(h ^ (word + 0x9e3779b97f4a7c15ull)); }

}  // namespace

uint64_t hashBytes(std::string_view bytes, uint64_t seed) {
  // Eight bytes per multiply; the tail is folded in byte by byte (FNV-1a).
  uint64_t h = seed ^ 1469598103934665603ull;
  const char* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  for (; n > 0; ++p, --n) {
    h ^= static_cast<unsigned char>(*p);
    h *= kFnvPrime;
  }
  return mixWord(h, bytes.size());
}

uint64_t contentHash(const nlohmann::json& value, uint64_t seed) {
  using value_t = nlohmann::json::value_t;
  uint64_t h = mixWord(seed, static_cast<uint64_t>(value.type()) + 1);
  switch (value.type()) {
    case value_t::boolean: return mixWord(h, value.get<bool>() ? 1 : 0);
    case value_t::number_unsigned: return mixWord(h, value.get<uint64_t>());
    case value_t::number_integer: return mixWord(h, static_cast<uint64_t>(value.get<int64_t>()));
    case value_t::number_float: {
      double d = value.get<double>();
      uint64_t bits;
      static_assert(sizeof bits == sizeof d, "64-bit doubles");
      std::memcpy(&bits, &d, sizeof bits);
      return mixWord(h, bits);
    }
    case value_t::string: return hashBytes(*value.get_ptr<const std::string*>(), h);
    case value_t::array:
      for (const auto& item : *value.get_ptr<const nlohmann::json::array_t*>()) h = contentHash(item, h);
      return mixWord(h, value.size());
    case value_t::object:
      // std::map iterates keys in order, so the wire's key order does not matter.
      for (const auto& kv : *value.get_ptr<const nlohmann::json::object_t*>())
        h = contentHash(kv.second, hashBytes(kv.first, h));
      return mixWord(h, value.size());
    default: return h;
  }
}

}  // namespace agui_sync
