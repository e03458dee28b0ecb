#pragma once
// RFC 6902 diff: the patch that turns `from` into `to`, computed structurally.
//
// Strategy (the output always applies to `from` and yields exactly `to`):
//  - Equal values produce nothing. Values of different kinds (object / array /
//    scalar) or different scalars produce one `replace` (path "" at the root).
//  - Objects, key by key in sorted order: `remove` for keys only in `from`, `add`
//    for keys only in `to`, recursion for keys in both whose values differ.
//  - Arrays: the common prefix and suffix are trimmed. In the middle, if the
//    lengths differ by d, the d inserted (or removed) elements are assumed to be
//    one contiguous block; its position is chosen to maximize the number of
//    remaining pairs that are already equal (ties: at the end). Pairs are then
//    diffed in place by index (recursively), before any index shifts; then the
//    block is inserted in ascending order (`/-` when it is an append at the end),
//    or removed from the highest index down. So a change to one element is one
//    op below that element, an append is `add /-`, a removal is one `remove`,
//    and one insertion in the middle is one `add` even if another element also
//    changed. Cost: O(size of both values) comparisons; no quadratic LCS.
//  - wholeArrays (DiffOptions): arrays of different lengths are one `replace`,
//    equal lengths are paired by index; for a rebase (upstream_cursor.h).
//  - Collapse: when a container's diff has two or more ops and serializes larger
//    than one `replace` of the container with its new value, the replace is used.
//    A single-op diff is never collapsed.
//  - Guarded paths: a `replace` or `remove` whose path is at or below a guarded
//    pointer is preceded by a `test` of the value it overwrites. When it is
//    above one (it overwrites a guarded value wholesale), each guarded value it
//    overwrites is tested instead. `testAll` tests before every replace/remove.
//    `add` of a new key or array element overwrites nothing and is not tested.
//  - Keys are escaped per RFC 6901 (`a/b` -> `a~1b`, `m~n` -> `m~0n`).
// Exception-free: values are read through type checks and get_ptr() only.
// Recursion follows the nesting shared by both values, bounded by the depth of
// `from` (and by DiffOptions::maxDepth when set).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json/json_pointer.h"

namespace agui_sync {

struct DiffOptions {
  std::vector<Tokens> guardedPaths;  // parsed pointers, e.g. {"proposal"} for "/proposal"
  bool testAll = false;              // a `test` before every replace/remove
  bool collapse = true;              // replace a container when its multi-op diff is larger
  size_t maxDepth = 0;               // recursion bound (0 = none); below it, differences are replaced
  // Arrays of different lengths are replaced whole, equal lengths diffed index by
  // index (no edit script). For a rebase onto a state someone else also wrote:
  // an index into an array that shifted would land on the wrong element.
  bool wholeArrays = false;
};

// The whole patch as a JSON array.
nlohmann::json diffPatch(const nlohmann::json& from, const nlohmann::json& to,
                         const DiffOptions& options = DiffOptions{});
// Appends the patch's operations to `ops`.
void appendDiff(const nlohmann::json& from, const nlohmann::json& to, const DiffOptions& options,
                nlohmann::json::array_t& ops);

}  // namespace agui_sync
