#pragma once
// String facade over the access gate (facade/access_gate.h) for the proxy and
// the Python middleware: the store, the hook and the backend stay in the
// language; the decision is made here. Plain C++, exception-free.
//
//   judgeAccessJson(requestJson)
//     request  {"kind": "attach" | "resume" | "start", "threadId": s,
//               "credentials": [the credential headers' values, string | null, in a fixed order],
//               "resume": RunAgentInput.resume as sent (its approvals read the thread),
//               "touchesThread": b, "looked": b, "granted": b, "hasAuthorizer": b,
//               "authorized": true | false | null, "upstreamStatus": n | null}
//     answer   {"ok":true,"verdict":"lookup"|"grant","scope":"grant","id":hex}
//              | {"ok":true,"verdict":"ask"|"serve"|"forward"}
//              | {"ok":true,"verdict":"refuse","status":403,"code":"not-authorized","message":s}
//              | {"ok":true,"verdict":"deny","status":n,"scope":"grant","id":hex}
//                (deny: the backend refused; the driver drops the grant it may hold)
//              | failure (invalid-json, limit-exceeded, invalid-request)
#include <string>

namespace agui_sync {

std::string judgeAccessJson(const std::string& requestJson);

}  // namespace agui_sync
