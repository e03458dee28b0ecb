#pragma once
// The durable line of a store-bound emitter (docs/wire.md section 3, "An epoch
// is a line of seqs"): a store keeps a thread's state at some seq (stateSeq)
// and the log of the events after it, so a write costs its events, not the
// state. Two rules every binding's store-bound emitter needs, decided here
// once so that a Node and a Python emitter writing one key agree on them
// (js/src/server/store/durable-line.js and durable-emitter.js are the JS twin):
//
//  - lineHead(): the state at the line's head, the stored state with the
//    logged events after stateSeq applied. Those were committed by an emitter
//    that computed them from exactly that state, so they apply; one that does
//    not means the store was changed behind the writers' backs (store-conflict).
//  - StateWrites: when a write carries the whole state. With every snapshot
//    (it empties the log) and before the events logged since the stored state
//    could reach half the log's caps, so that trimming the log by those caps
//    never needs an event the state at seq is built from; always, for a store
//    that cannot take a write without it (not `incremental`).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>

namespace agui_sync {

// Events of a line's log and their bytes (the UTF-8 length of their JSON text).
struct LogShare {
  size_t events = 0;
  size_t bytes = 0;
};

struct LoggedEvent {
  nlohmann::json event;
  size_t bytes = 0;  // of the text it was read from, as the store counts it
};

struct LineHead {
  std::optional<Failure> failure;  // store-conflict: the log does not apply
  nlohmann::json state;            // at the line's seq
  LogShare after;                  // logged after stateSeq (what the state write rule counts)
};

// The state at the head of a line: `state` is at `stateSeq`, `log` oldest first.
LineHead lineHead(nlohmann::json state, uint64_t stateSeq, const std::vector<LoggedEvent>& log, size_t maxDepth);

class StateWrites {
 public:
  StateWrites(bool incremental, size_t maxEvents, size_t maxBytes)
      : incremental_(incremental), maxEvents_(maxEvents), maxBytes_(maxBytes) {}

  // Whether a batch of `events` (`bytes` of JSON, `snapshot` if one is a
  // STATE_SNAPSHOT) goes with the whole state.
  bool needsState(size_t events, size_t bytes, bool snapshot) const;
  // The batch landed (with the state or not).
  void committed(bool withState, size_t events, size_t bytes);
  // The stored state is `since` behind the line's seq (a reload; {} for a new line).
  void restart(LogShare since = {}) { since_ = since; }
  LogShare since() const { return since_; }
  size_t maxEvents() const { return maxEvents_; }
  size_t maxBytes() const { return maxBytes_; }

 private:
  bool incremental_;
  size_t maxEvents_;
  size_t maxBytes_;
  LogShare since_;
};

}  // namespace agui_sync
