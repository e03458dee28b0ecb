#pragma once
// Decodes one SSE event's data into an AG-UI event. Per AG-UI 1.1 the data is
// always one JSON event, whatever the SSE `event:` field said.
//
// Sequence data (our wire extension, see docs/wire.md) is read from
// `metadata["agui-state-sync"]` (`seq`, `baseSeq`, `epoch`, `digest`, `acks`)
// when that is an object (version 2, which alone then counts); else from the
// same fields at the top of `metadata`, falling back to top-level `seq` /
// `base_seq` (version 1, and backends that write them by hand; @ag-ui/client
// strips unknown top-level fields but keeps `metadata`).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>
#include <agui_sync/edits.h>
#include <agui_sync/options.h>

#include "json/json_patch.h"

namespace agui_sync {

// Documents the engine keeps: the state, and AG-UI 1.0 activities (one per
// messageId, receive/activity_book.h). Other events pass through untouched.
enum class EventClass { StateSnapshot, StateDelta, ActivitySnapshot, ActivityDelta, Other };

struct SeqInfo {
  std::optional<uint64_t> seq;
  std::optional<uint64_t> baseSeq;
  std::optional<std::string> epoch;   // sender incarnation; a change means "counting restarted"
  std::optional<std::string> digest;  // "sha256:<hex>" of the whole state after this event
  std::vector<EditAck> acks;          // metadata.acks: the sender's verdicts on user edits (edits.h)
};

// What the engine needs of an event, parsed straight from the text (no DOM of
// the whole event is built; members it does not need are validated, not kept).
struct DecodedEvent {
  EventClass cls = EventClass::Other;
  std::string type;
  SeqInfo seq;
  // ACTIVITY_*: the activity's messageId and activityType; ACTIVITY_SNAPSHOT's
  // `replace` (AG-UI: false keeps an activity that already exists).
  std::string messageId, activityType;
  bool replace = true;
  // STATE_SNAPSHOT: the new state (ACTIVITY_SNAPSHOT: its content) and its nesting depth.
  nlohmann::json snapshot;
  size_t snapshotDepth = 0;
  // STATE_DELTA (ACTIVITY_DELTA: its `patch`): the operations, already checked for structure. A structural
  // problem (unknown op, bad pointer, ...) does not fail the decode: it is kept
  // in opsProblem and reported when the delta's turn to apply comes, like any
  // other patch that does not apply, so that sequencing still sees the event.
  PatchOps ops;
  PatchResult opsProblem;
  uint64_t deltaHash = 0;  // identity of the operations (duplicate verification)
};

struct DecodeError {
  Code code = Code::InvalidJson;  // InvalidJson | InvalidEvent | InvalidSeq | InvalidPatch | LimitExceeded
  std::string message;
  bool stateEvent = false;  // the event was (or may have been) a state event: an update was lost
  bool activityEvent = false;  // it was (or may have been) an ACTIVITY_* event: an activity's update was lost
  std::optional<std::string> activityId;  // ... of this messageId, when it could be read
};

// Best guess whether undecodable text was a state event, so that losing it
// triggers a resync. Errs on the side of "yes".
bool mayBeStateEvent(std::string_view text);
// The same for activity events (which activity is then unknown).
bool mayBeActivityEvent(std::string_view text);

// Returns true and fills `out`, or false and fills `err`. Never throws.
bool decodeEvent(std::string_view data, const Options& options, DecodedEvent& out, DecodeError& err);

}  // namespace agui_sync
