#pragma once
// What the sender's facades share (EmitterFacade, ActivityFacade): their
// options, the events answer, and the rules of a catch-up position
// (docs/wire.md section 3). Plain C++, exception-free.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>
#include <agui_sync/state_emitter.h>

namespace agui_sync {

// App-supplied JSON gets the emitter's depth limit plus a margin for the
// envelope (an op object, the ops array).
constexpr size_t kEnvelopeDepth = 4;

// {"ok":true[,"mode":mode],"events":[...]}
std::string eventsJson(const std::vector<nlohmann::json>& events, const char* mode = nullptr);

// App-supplied state or ops: the emitter's maxDepth (plus `margin`) is checked while parsing.
std::optional<Failure> parseValue(const std::string& text, size_t maxDepth, size_t margin, nlohmann::json& out);

// The emitter's options from a JSON object; `problem` says which one was
// refused (the first found: an option of the wrong type is refused, not ignored).
EmitterOptions readEmitterOptions(const nlohmann::json& opts, std::string& problem);

// A list of seqs (`held`, `skip`): true when absent, null or valid; false otherwise.
bool readSeqList(const nlohmann::json& request, const char* key, std::vector<uint64_t>& out);

// A catch-up position ({lastSeq, epoch, reason}) that must be answered with a
// snapshot: it knows no seq, is of another incarnation than `ours` (a null or
// absent epoch counts as ""), or its resync reason's cure is a snapshot.
bool needsSnapshot(const nlohmann::json& position, const std::string& ours);

// "current" (no events), "snapshot" (a *_SNAPSHOT first) or "replay".
const char* catchUpMode(const std::vector<nlohmann::json>& events);

}  // namespace agui_sync
