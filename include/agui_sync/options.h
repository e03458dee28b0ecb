#pragma once
// Engine limits and tuning. Every limit has a default chosen for real agent state
// (documented in docs/concepts.md#limits-defaults); a breach is reported as `limit-exceeded`,
// never a crash or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "edits.h"

namespace agui_sync {

struct Options {
  // Reorder window: out-of-order deltas held while waiting for a gap to fill.
  size_t reorderWindow = 64;            // events
  size_t reorderBytes = 1u << 20;       // bytes of held event data
  size_t maxGapEvents = 32;             // further state events a gap may outlive
  // Input limits.
  size_t maxEventBytes = 8u << 20;      // bytes of one SSE event's data
  size_t maxDepth = 128;                // nesting depth of the state (and event envelope + 4)
  size_t maxStateBytes = 64u << 20;     // approximate serialized size of the state
  // User edits (edits.h): ownership and conflict policy, and this client's id,
  // the prefix of every editId ("" = a random one per engine).
  EditPolicy edits;
  std::string clientId;
  // Activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA, docs/wire.md
  // section 11): kept as sequenced documents beside the state when on; else
  // they pass through as any other event.
  bool activities = false;
  size_t maxActivities = 64;            // documents held (a new one past that: limit-exceeded)
  size_t maxActivityBytes = 1u << 20;   // approximate serialized size of one activity's content
};

}  // namespace agui_sync
