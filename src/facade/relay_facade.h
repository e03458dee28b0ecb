#pragma once
// The proxy's upstream receiver, in the sender's module, so that the state it
// verified reaches the run's cursor and the thread's emitter as a parsed
// value (CursorFacade::writeReceived) instead of JSON text written out by one
// module and parsed again by the other. Plain C++, exception-free.
//
//   RelayFacade(optionsJson)  SyncFacade's options (the proxy's: initialState,
//                             maxEventBytes, maxStateBytes, activities); initResult()
//   inputBuffer(n), pushInput(n)
//                             frames the first n bytes of the scratch buffer
//                             (SyncEngine::push); nothing is handled yet
//   next()                    "" when no framed event is left; else the outcomes of the
//                             next one (SyncEngine::step), {"outcomes":[...]} as in
//                             SyncFacade's Result, except:
//                              - an applied STATE_SNAPSHOT / STATE_DELTA has no "event"
//                                (nobody outside reads it) but "ref": its number among
//                                the applied states so far (only the current step's are
//                                held: an older ref is refused), for writeReceived(), and
//                              - every applied outcome has "last": it is the step's last
//                                of its document (the state's, or its activity's), so the
//                                engine holds exactly what it led to (activityJson()).
//                             A step has more than one applied outcome of a document
//                             only when an event frees deltas held in the reorder window.
//   end()                     the stream ended: the framed events left, then a pending
//                             gap's resync, as one {"outcomes":[...]}
//   activityJson(messageId)   that activity's content now, or null
//
// The engine never has edits here (the proxy's clients' edits are the thread
// emitter's), so its visible state is the upstream's verified state.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>
#include <agui_sync/outcome.h>

#include "facade/sync_facade.h"

namespace agui_sync {

// One applied state of the current step, as CursorFacade::writeReceived reads it.
struct ReceivedState {
  bool snapshot = false;  // STATE_SNAPSHOT (else STATE_DELTA)
  bool last = false;      // the engine's state is the one this event led to
  std::string raw;        // the event's text (a delta's ops, or a snapshot that is not `last`)
};

class RelayFacade {
 public:
  explicit RelayFacade(const std::string& optionsJson) : sync_(optionsJson) {}
  const std::string& initResult() const { return sync_.initResult(); }
  uint8_t* inputBuffer(size_t n);
  void pushInput(size_t n);
  std::string next();
  std::string end();
  std::string activityJson(const std::string& messageId) const { return sync_.activityJson(messageId); }

  // The current step's applied state `ref`, or null when it has no such one.
  const ReceivedState* received(int ref) const;
  // The upstream's verified state, as the engine holds it now.
  const nlohmann::json& state();
  // The state's nesting limit (a raw event's parse allows the event's own levels on top).
  size_t maxDepth();

 private:
  std::string outcomesJson();

  SyncFacade sync_;  // its scratch buffer is the relay's input too
  std::vector<Outcome> outcomes_;      // the current step's
  std::vector<ReceivedState> states_;  // its applied states, from ref firstRef_ on
  // Refs count across steps, so that a ref of a step already left is refused,
  // never taken for another state of the current one.
  static constexpr uint64_t kMaxRef = 0x7fffffff - 4096;
  uint64_t firstRef_ = 0;
};

}  // namespace agui_sync
