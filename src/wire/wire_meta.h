#pragma once
// Where an event's wire fields (docs/wire.md sections 1 and 10) are, for code
// that holds an event as a JSON value (the store line, the emitter's adopted
// history). The receiver reads the same rule straight from the text
// (receive/event_decoder.cpp), and tests/vectors/wire_meta_vectors.json holds
// both, and every binding, to it:
//   version 2: metadata["agui-state-sync"] when it is an object; it alone counts;
//   version 1: else `metadata` itself (its top-level seq, baseSeq, ...).
// (The top-level `seq` / `base_seq` some backends send are the receiver's
// concern only: our own events never carry them.)
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace agui_sync {

// The object holding `event`'s wire fields, or nullptr when it has none.
const nlohmann::json* wireFields(const nlohmann::json& event);

// wireFields(event)'s `seq` when it is an integer in [0, 2^53 - 1].
std::optional<uint64_t> wireSeq(const nlohmann::json& event);

// A `metadata` object holding `fields` under the wire key (what the emitter sends).
nlohmann::json wireMetadata(nlohmann::json fields);

}  // namespace agui_sync
