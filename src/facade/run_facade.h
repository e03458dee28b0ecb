#pragma once
// String facade over one run's life (run/run_life.h) for the Node proxy and
// the Python middleware: the sockets, the store, the clock and the agent's
// task stay in the language; every decision is made here. Plain C++,
// exception-free: a bad input is a failure with a code, and nothing changes.
//
//   requesterJson(credentialsJson)  the requester digest of credential values (hex), as a JSON string
//   RunFacade(optionsJson)   {key, credentials: [the starter's credential values] | requester: hex,
//                             stored, followed, keep, graceMs, maxEvents, maxBytes,
//                             maxClients, maxEventBytes}; initResult()
//   feed(bytes)              the agent's sequenced SSE (any chunking): its events are
//                            numbered, framed and committed; comment lines go live
//   event(json)              one event's JSON text, numbered, framed and committed
//   step(inputJson)          {"on": "ended", "failure": s | null, "code": "upstream-failed" | "engine-failed"}
//                            {"on": "position", "seq": n | null}: the stream stands there (an empty catch-up)
//                            {"on": "trim", "toBytes": n} | {"on": "clear"}: the log's oldest events dropped
//                            {"on": "committed", "n": n}
//                            {"on": "lost" | "logged", "entries": [{n, seq, flags, text}]}
//                            {"on": "seed", "afterN", "seq", "startedN", "startedText"}
//                            {"on": "join", "client", "afterN", "attach", "starter",
//                             "position": {lastSeq, epoch, reason, activities}, "epoch",
//                             "catchUp": [event JSON text] (once asked)}
//                            {"on": "left", "client", "now"} | {"on": "timer", "now"}
//                            {"on": "present", "elsewhere", "now"}
//                            {"on": "abort", "reason": "client" | "closed", "credentials": [...] | "requester": hex}
//                            {"on": "heartbeat"}
//   every answer             {"ok":true,"actions":[{"do": "send", "to": [client], "text"}
//                            | {"do": "head", "to": [client], "mode"} | {"do": "append", "entries"}
//                            | {"do": "catch-up" | "rejoin" | "close", "to": [...]}
//                            | {"do": "arm", "at"} | {"do": "disarm" | "ask-present" | "stop-upstream"
//                               | "ask-abort" | "started" | "done"} | {"do": "defer", "to": [client]}
//                            | {"do": "refuse", "to": [client], "status", "code", "message"}]}
//                            ], "at": {lastN (published), framedN, startedN, sentSeq, logBytes, finished,
//                                      ended, clients}}
//                            | failure (invalid-json, limit-exceeded, invalid-request)
//   infoJson()               {lastN, firstN, startedN, sentSeq, finished, clients}
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "receive/sse_framer.h"
#include "run/run_life.h"

namespace agui_sync {

std::string requesterJson(const std::string& credentialsJson);

class RunFacade {
 public:
  explicit RunFacade(const std::string& optionsJson);
  const std::string& initResult() const { return init_; }
  std::string feed(const std::string& bytes);
  std::string event(const std::string& json);
  std::string step(const std::string& inputJson);
  std::string infoJson() const;

 private:
  std::string init_;
  std::unique_ptr<run::RunLife> life_;
  SseFramer framer_;
  std::vector<SseItem> items_;
};

}  // namespace agui_sync
