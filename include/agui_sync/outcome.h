#pragma once
// What the engine reports for each input event. One event yields one outcome,
// except that a malformed state event yields `error` then `resync`, and a delta
// that fills a gap is followed by `applied` outcomes for the held deltas it frees,
// and an applied agent event is followed by the edit outcomes it caused
// (edit-acked / edit-rejected / conflict; see edits.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codes.h"
#include "edits.h"

namespace agui_sync {

enum class OutcomeKind { Applied, Resync, Event, Ignored, Error, Conflict, EditAcked, EditRejected };

enum class Resolution : uint8_t { AgentWins, UserWins };

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
  // Applied: the edit acknowledgements the event carried (metadata.acks).
  std::vector<EditAck> acks;
  // Conflict / EditAcked / EditRejected: the edit. EditAcked: `seq` is where it
  // applied. EditRejected: `reason` is an edit reason (codes.h, kEdit).
  std::string editId;
  // Conflict: the overlapping pointer, both values as JSON text (absent = the
  // path does not exist on that side), and which side won.
  std::string path;
  std::optional<std::string> mine, theirs;
  Resolution resolution = Resolution::AgentWins;
  // An activity's outcome (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; the
  // `type` of an applied one says which): its messageId. Empty: the state's.
  std::string messageId;
};

const char* resolutionName(Resolution r);

const char* outcomeKindName(OutcomeKind k);

}  // namespace agui_sync
