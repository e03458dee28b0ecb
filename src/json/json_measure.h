#pragma once
// Cheap structural measurements of a JSON value, used to enforce depth and
// state-size limits without serializing. Each call costs O(size of `value`),
// so callers only measure values an event carries or removes, never the state.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace agui_sync {

// Nesting depth: scalars 0, [] / {} 1, [[1]] 2. Recursion is bounded because
// every value reaching here passed the event depth limit.
size_t valueDepth(const nlohmann::json& value);

// Number of decimal digits of `v` (1 for 0).
size_t decimalDigits(uint64_t v);

// How strings (values and keys) are counted: Exact, as dump() escapes them;
// Raw, as their byte length plus the quotes. Raw differs from Exact only by
// the escapes (a byte per quote, backslash or short-form control, five per
// other control), and it costs O(1) per string instead of a scan: the
// receiver's hot path (stateBytes, maxStateBytes, every delta's size change)
// uses it, where the bytes of escapes do not matter and the scan did (10% per
// delta, 35% per 500 KB snapshot, natively).
enum class SizeMode { Exact, Raw };

// The length of value.dump() (compact, ensure_ascii = false) when every string
// is valid UTF-8, strings counted per `mode`: the one size measure of the
// library (Exact: the emitter's delta-or-snapshot choice, the diff's collapse
// rule; Raw: the receiver's state size and its limit). Counting stops once the
// total exceeds `limit`; the result is then some value > limit.
// O(min(size, limit)) apart from float formatting.
size_t serializedSize(const nlohmann::json& value, size_t limit = SIZE_MAX, SizeMode mode = SizeMode::Exact);
// Length of a string once JSON-quoted and escaped as dump() does it (RFC 8785
// escapes the same characters, so this is its canonical length too).
size_t quotedSize(const std::string& s);
// serializedSize in Raw mode: the receiver's measure of its state.
inline size_t rawSize(const nlohmann::json& value, size_t limit = SIZE_MAX) {
  return serializedSize(value, limit, SizeMode::Raw);
}
// quotedSize (Exact) or the raw length plus the quotes (Raw).
size_t stringSize(const std::string& s, SizeMode mode);

// Exact length of canonicalJson(value) (RFC 8785), without building the text.
// Iterative (an explicit stack), so it is safe on values of any nesting depth,
// including ones no parser would have accepted. O(size of `value`).
size_t canonicalSize(const nlohmann::json& value);

// 64-bit hash of a value's content: equal values (as nlohmann compares them,
// except that 1 and 1.0 differ) hash equally, whatever their key order or
// whitespace was on the wire. Mixes `seed` in. Not cryptographic: it tells a
// re-sent copy of a delta from a different delta with the same seq.
uint64_t contentHash(const nlohmann::json& value, uint64_t seed = 0);
// Mixes a string into a hash the same way (for operation fields).
uint64_t hashBytes(std::string_view bytes, uint64_t seed);

}  // namespace agui_sync
