#pragma once
// String facade over the durable line's rules (emit/store_line.h) for a
// binding's store-bound emitter: the store's I/O stays in the language, the
// state at a stored line's head and when a write carries the state are
// decided here. It also keeps the committed state (at the store's seq), moved
// along each committed batch in O(its ops), which is what the emitter's
// `state` answers while a write is under way (its engine is then ahead): the
// binding never copies the whole state per write for it. One per
// store-bound emitter. Plain C++, exception-free.
//
//   StoreLineFacade(optionsJson)  {incremental: bool (true), replayMaxEvents, replayMaxBytes,
//                                  maxDepth}: the emitter's caps (the same defaults, 0 allowed
//                                  as the emitter allows it), which are also the log's;
//                                  initResult() says why options were refused
//   open(lineJson)                {"state": "<state JSON text>", "stateSeq": n,
//                                  "events": ["<event JSON text>", ...]} (a store's load(), oldest
//                                  first) -> {"ok":true,"events":n,"bytes":n} (logged after
//                                  stateSeq; the write rule restarts from them)
//                                  | failure (store-conflict, invalid-json, limit-exceeded);
//                                  the head's state becomes the committed state
//   headStateJson()               the state at the line's head after a successful open()
//                                  (handed over once: it is then forgotten)
//   needsState(events, bytes, snapshot)  whether a batch goes with the whole state
//   committed(withState, events, bytes)  the batch landed
//   restart()                     a new line with an empty log (a store's init or reset)
//   seed(stateJson)               the committed state is this one: {"ok":true} | failure
//   advance(eventsJson)           a committed batch ([events], oldest first) moves the committed
//                                  state: true, or false when one does not apply (it is then
//                                  unknown until the next seed() or open())
//   committedStateJson()          the committed state's JSON, or "" when unknown
//   maxEvents(), maxBytes()       the log's caps, for the store's append
#include <cstddef>
#include <string>

#include "emit/store_line.h"

namespace agui_sync {

class StoreLineFacade {
 public:
  explicit StoreLineFacade(const std::string& optionsJson);
  const std::string& initResult() const { return initResult_; }
  std::string open(const std::string& lineJson);
  std::string headStateJson();
  bool needsState(size_t events, size_t bytes, bool snapshot) const {
    return writes_.needsState(events, bytes, snapshot);
  }
  void committed(bool withState, size_t events, size_t bytes) { writes_.committed(withState, events, bytes); }
  void restart() { writes_.restart(); }
  std::string seed(const std::string& stateJson);
  bool advance(const std::string& eventsJson);
  std::string committedStateJson() const;
  size_t maxEvents() const { return writes_.maxEvents(); }
  size_t maxBytes() const { return writes_.maxBytes(); }

 private:
  StateWrites writes_{true, 0, 0};
  size_t maxDepth_ = 0;
  std::string head_;
  nlohmann::json committed_;
  bool committedKnown_ = false;
  std::string initResult_;
};

}  // namespace agui_sync
