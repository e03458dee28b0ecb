#pragma once
// String facade over the approval gate (facade/approval_gate.h) for the proxy
// and the Python middleware: their store I/O stays in the language, the
// decision is made here, once. Plain C++, exception-free.
//
//   judgeApprovalsJson(requestJson)
//     request  {"threadId": s, "resume": RunAgentInput.resume, "state": the thread's
//               vouched state (absent: none), "records": {interruptId: record | null}
//               (the store's, read so far), "claimed": {interruptId: record} (claimed by
//               this request, with the record it wrote), "nowMs": n}
//     answer   {"ok":true,"verdict":"pass"}
//              | {"ok":true,"verdict":"peek","interruptIds":[...]}
//              | {"ok":true,"verdict":"claim","claims":[{"interruptId","record"}]}
//              | {"ok":true,"verdict":"forward","interruptIds":[...]}
//              | {"ok":true,"verdict":"replay","interruptId":s}
//              | {"ok":true,"verdict":"refuse","code":s,"interruptId":s,"message":s}
//              | failure (invalid-json, limit-exceeded, invalid-request)
//     replay and refuse carry "releases":[{"interruptId","record"}] when this request's
//     claims must be dropped (the store's release(threadId, interruptId, record))
#include <string>

namespace agui_sync {

std::string judgeApprovalsJson(const std::string& requestJson);

}  // namespace agui_sync
