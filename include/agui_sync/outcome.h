#pragma once
// What the engine reports for each input event. One event yields one outcome,
// except that a malformed state event yields `error` then `resync`, and a delta
// that fills a gap is followed by `applied` outcomes for the held deltas it frees.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codes.h"

namespace agui_sync {

enum class OutcomeKind { Applied, Resync, Event, Ignored, Error };

struct Outcome {
  OutcomeKind kind = OutcomeKind::Event;
  std::string type;                 // Applied: "STATE_SNAPSHOT" | "STATE_DELTA"; Event: the AG-UI type
  std::optional<uint64_t> seq;      // Applied / Ignored: the event's seq, if it had one
  Code reason = Code::Gap;          // Resync: resync reason; Ignored: ignored reason; Error: error code
  std::string detail;               // Resync: human-readable detail; Error: message
  std::string raw;                  // Applied / Event: the event's JSON text exactly as received
  std::vector<std::string> changedPaths;  // Applied: JSON Pointers the event wrote ("" = whole state)
  std::optional<uint64_t> lastSeq;  // Resync: what the app should tell the server
  std::optional<std::string> lastEventId;
};

const char* outcomeKindName(OutcomeKind k);

}  // namespace agui_sync
