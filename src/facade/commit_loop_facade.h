#pragma once
// String facade over a store-bound emitter's write loop (emit/commit_loop.h)
// for Node's and Python's DurableStateEmitter. Plain C++, exception-free.
//
//   CommitLoopFacade()
//   step(inputJson)   {"on": "begin", "now": ms} | {"on": "tick", "now": ms, "force": b}
//                     {"on": "recovered", "result": "ok" | "written-meanwhile" | "unreachable"}
//                     {"on": "reread", "ok": b} | {"on": "applied", "events": n} | {"on": "degraded"}
//                     {"on": "appended", "answer": "ok" | "conflict" | "error" | "cancelled"}
//                     {"on": "reloaded", "ok": b, "random": [0, 1]}
//   answer            {"ok":true,"next": "recover" | "reread" | "apply" | "append" | "reload" | "wait"
//                      | "degrade" | "return" | "fail" | "raise", "waitMs": n, "degraded": b,
//                      "inFlight": b, "stale": b[, "code", "message"]} | failure (invalid-json, invalid-request)
// (reread also answers a line re-read outside a write: it clears `stale`.)
#include <string>

#include "emit/commit_loop.h"

namespace agui_sync {

class CommitLoopFacade {
 public:
  std::string step(const std::string& inputJson);

 private:
  CommitLoop loop_;
};

}  // namespace agui_sync
