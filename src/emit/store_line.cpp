#include "emit/store_line.h"

#include <string>
#include <utility>

#include "json/json_patch.h"
#include "wire/wire_meta.h"

namespace agui_sync {

namespace {

// An event's wire seq, when it names one after `from` (events without a seq
// never move the state).
bool after(const nlohmann::json& event, uint64_t from) {
  auto seq = wireSeq(event);
  return seq && *seq > from;
}

std::string seqText(const nlohmann::json& event) { return std::to_string(wireSeq(event).value_or(0)); }

Failure conflict(const nlohmann::json& event, const std::string& why) {
  return Failure{Code::StoreConflict,
                 "the stored log does not apply to the stored state at seq " + seqText(event) + " (" + why + ")",
                 std::nullopt};
}

}  // namespace

LineHead lineHead(nlohmann::json state, uint64_t stateSeq, const std::vector<LoggedEvent>& log, size_t maxDepth) {
  LineHead head;
  head.state = std::move(state);
  for (const auto& logged : log) {
    const auto& event = logged.event;
    if (!after(event, stateSeq)) continue;
    head.after.events++;
    head.after.bytes += logged.bytes;
    auto type = event.find("type");
    if (type != event.end() && *type == "STATE_SNAPSHOT") {
      auto snapshot = event.find("snapshot");
      if (snapshot == event.end()) {
        head.failure = conflict(event, "a STATE_SNAPSHOT without a snapshot");
        return head;
      }
      head.state = *snapshot;
      continue;
    }
    auto delta = event.find("delta");
    PatchResult applied = delta == event.end() ? PatchResult{PatchStatus::Malformed, 0, "no delta"}
                                               : applyPatch(head.state, *delta, maxDepth);
    if (!applied.ok()) {
      head.failure = conflict(event, applied.message);
      return head;
    }
  }
  return head;
}

// Twice the count against the cap, not the count against half of it: the JS
// twin compares with maxEvents / 2 in floating point, which this equals for odd caps too.
bool StateWrites::needsState(size_t events, size_t bytes, bool snapshot) const {
  if (!incremental_ || snapshot) return true;
  return 2 * (since_.events + events) > maxEvents_ || 2 * (since_.bytes + bytes) > maxBytes_;
}

void StateWrites::committed(bool withState, size_t events, size_t bytes) {
  if (withState) {
    since_ = {};
    return;
  }
  since_.events += events;
  since_.bytes += bytes;
}

}  // namespace agui_sync
