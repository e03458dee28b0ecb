#pragma once
// String-in/string-out facade over StateEmitter for language bindings, the
// backend counterpart of facade.h. Plain C++, exception-free.
//
//   EmitterFacade(optionsJson)  {startSeq, epoch, digestEvery, guardedPaths, testAll,
//                                snapshotRatio, replayMaxEvents, replayMaxBytes, maxDepth,
//                                initialState}; unknown keys ignored.
//   initError()                 "" or why the options were refused.
//   update(stateJson)           {"ok":true,"events":[...]} | {"ok":false,"error":s}
//   patch(opsJson)              {"ok":true,"events":[...]} | {"ok":false,"code":s,"error":s,"opIndex":n}
//   snapshot()                  the STATE_SNAPSHOT event JSON at the current seq
//   replay(requestJson)         {"seq":n,"epoch"?:s|null,"skip"?:[n,...]} -> {"events":[...]}, or
//                               {"error":s} for a bad request. epoch absent or null = don't
//                               check ("" is an epoch like any other); skip: the seqs the client
//                               holds (StateEmitter::replaySince, docs/wire.md section 3).
//   heartbeat()                 ": hb <seq>\n\n"
//   stateJson(), seq(), epoch(), statsJson()
#include <memory>
#include <string>

namespace agui_sync {

class StateEmitter;

class EmitterFacade {
 public:
  explicit EmitterFacade(const std::string& optionsJson);
  ~EmitterFacade();
  EmitterFacade(const EmitterFacade&) = delete;
  EmitterFacade& operator=(const EmitterFacade&) = delete;

  const std::string& initError() const { return initError_; }
  std::string update(const std::string& stateJson);
  std::string patch(const std::string& opsJson);
  std::string snapshot() const;
  std::string replay(const std::string& requestJson) const;
  std::string heartbeat() const;
  std::string stateJson() const;
  double seq() const;
  std::string epoch() const;
  std::string statsJson() const;

 private:
  std::unique_ptr<StateEmitter> emitter_;
  std::string initError_;
};

}  // namespace agui_sync
