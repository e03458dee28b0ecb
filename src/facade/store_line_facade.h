#pragma once
// String facade over the durable line's rules (emit/store_line.h) for a
// binding's store-bound emitter: the store's I/O stays in the language, the
// state at a stored line's head and when a write carries the state are
// decided here. One per store-bound emitter. Plain C++, exception-free.
//
//   StoreLineFacade(optionsJson)  {incremental: bool (true), replayMaxEvents, replayMaxBytes,
//                                  maxDepth}: the emitter's caps (the same defaults), which are
//                                  also the log's; initResult() says why options were refused
//   open(lineJson)                {"state": "<state JSON text>", "stateSeq": n,
//                                  "events": ["<event JSON text>", ...]} (a store's load(), oldest
//                                  first) -> {"ok":true,"events":n,"bytes":n} (logged after
//                                  stateSeq; the write rule restarts from them)
//                                  | failure (store-conflict, invalid-json, limit-exceeded)
//   headStateJson()               the state at the line's head after a successful open()
//                                  (handed over once: it is then forgotten)
//   needsState(events, bytes, snapshot)  whether a batch goes with the whole state
//   committed(withState, events, bytes)  the batch landed
//   restart()                     a new line with an empty log (a store's init or reset)
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
  size_t maxEvents() const { return writes_.maxEvents(); }
  size_t maxBytes() const { return writes_.maxBytes(); }

 private:
  StateWrites writes_{true, 0, 0};
  size_t maxDepth_ = 0;
  std::string head_;
  std::string initResult_;
};

}  // namespace agui_sync
