#pragma once
// String-in/string-out facade over StateEmitter for language bindings, the
// backend counterpart of facade.h. Plain C++, exception-free.
//
//   EmitterFacade(optionsJson)  {startSeq, epoch, digestEvery, guardedPaths, testAll,
//                                snapshotRatio, replayMaxEvents, replayMaxBytes, maxDepth,
//                                editHistory, ackHistory, initialState}; unknown keys ignored.
// A failure is always {"ok":false,"code":<codes.h name>,"message":s[,"opIndex":n]}.
//   initResult()                {"ok":true}, or a failure (invalid-options) saying why the
//                               options were refused.
//   update(stateJson)           {"ok":true,"events":[...]} | failure (invalid-json,
//                               limit-exceeded, seq-exhausted)
//   patch(opsJson)              {"ok":true,"events":[...]} | failure with opIndex (invalid-patch,
//                               patch-failed, precondition-failed, limit-exceeded), or seq-exhausted
//   applyEdits(editsJson, policyJson, clientEpochJson)
//                               edits [{editId, baseSeq, ops}], policy {ownership, onConflict},
//                               the epoch the client's baseSeqs count in (a JSON string; null or
//                               "" = ours; another epoch's edits are judged as made at our first seq)
//                               -> {"ok":true,"events":[...],"results":[{editId,status,reason?,seq?}]}
//                               | failure (invalid-request, invalid-options, seq-exhausted);
//                               StateEmitter::applyEdits. An edit's own problems are its result.
//   adoptHistory(eventsJson)    the stored log's latest events, oldest first (a restart or another
//                               instance): {"ok":true,"adopted":n} | failure (invalid-json,
//                               limit-exceeded, invalid-request); StateEmitter::adoptHistory
//   provenanceJson()            [{path, writer:"client", origin, seq}]: the pointers whose values a
//                               client edit wrote last (StateEmitter::provenance)
//   snapshot()                  the STATE_SNAPSHOT event JSON at the current seq
//   replay(requestJson)         {"seq":n,"epoch"?:s|null,"skip"?:[n,...]} -> {"ok":true,"events":[...]},
//                               or an invalid-request failure. {"snapshot":true}: a catch-up that
//                               must be a snapshot (counted as one). epoch absent or null = don't
//                               check ("" is an epoch like any other); skip: the seqs the client
//                               holds (StateEmitter::replaySince, docs/wire.md section 3).
//   catchUp(positionJson)       {"lastSeq":n|null,"epoch":s|null,"reason":s|null,"held":[n,...]}, where
//                               a (re)connecting client says it is (docs/wire.md section 3) ->
//                               {"ok":true,"mode":"current"|"replay"|"snapshot","events":[...]}: a
//                               snapshot for no seq, another epoch (null counts as ""), or a reason
//                               whose cure is a snapshot; else the replay (which may still be a
//                               snapshot when cheaper or too old). invalid-request for a bad position.
//   renderPrompt(optionsJson)   the prompt render of the emitter's own state (renderPromptPartsOf,
//                               facade/prompt_facade.h: no JSON text of the state is written or
//                               read); the options' userWritten defaults to provenance()
//   heartbeat()                 ": hb <seq>\n\n"
//   stateJson(), seq(), epoch(), statsJson()
#include <memory>
#include <optional>
#include <string>

#include <agui_sync/codes.h>

namespace agui_sync {

class StateEmitter;

class EmitterFacade {
 public:
  explicit EmitterFacade(const std::string& optionsJson);
  ~EmitterFacade();
  EmitterFacade(const EmitterFacade&) = delete;
  EmitterFacade& operator=(const EmitterFacade&) = delete;

  const std::string& initResult() const { return initResult_; }
  // The same for native callers: why the options were refused, if they were.
  const std::optional<Failure>& initFailure() const { return initFailure_; }
  std::string update(const std::string& stateJson);
  std::string patch(const std::string& opsJson);
  // update() by this writer's change only (a store-bound emitter's
  // update(next, { rebase })): the rebase diff from `fromJson`, the state the
  // writer last gave, to `toJson`, fitted to the state as it is now
  // (emit/rebase_fit.h); the whole `toJson` only where that does not apply.
  // patch()'s / update()'s answer.
  std::string updateRebased(const std::string& fromJson, const std::string& toJson);
  std::string applyEdits(const std::string& editsJson, const std::string& policyJson,
                         const std::string& clientEpochJson);
  std::string provenanceJson() const;
  std::string adoptHistory(const std::string& eventsJson);
  std::string snapshot() const;
  std::string replay(const std::string& requestJson) const;
  std::string catchUp(const std::string& positionJson) const;
  std::string renderPrompt(const std::string& optionsJson) const;
  std::string heartbeat() const;
  std::string stateJson() const;
  double seq() const;
  std::string epoch() const;
  std::string statsJson() const;

 private:
  friend class CursorFacade;  // planWrite(): the cursor writes a parsed event into a plain emitter
  std::unique_ptr<StateEmitter> emitter_;
  std::optional<Failure> initFailure_;
  std::string initResult_;  // {"ok":true} or initFailure_ as JSON
};

}  // namespace agui_sync
