#pragma once
// Cheap structural measurements of a JSON value, used to enforce depth and
// state-size limits without serializing. Each call costs O(size of `value`),
// so callers only measure values an event carries or removes, never the state.
#include <cstddef>

#include <nlohmann/json.hpp>

namespace agui_sync {

// Nesting depth: scalars 0, [] / {} 1, [[1]] 2. Recursion is bounded because
// every value reaching here passed the event depth limit.
size_t valueDepth(const nlohmann::json& value);

// Number of decimal digits of `v` (1 for 0).
size_t decimalDigits(uint64_t v);

// Approximate serialized size in bytes (exact for ASCII strings without escapes).
size_t approxSize(const nlohmann::json& value);

}  // namespace agui_sync
