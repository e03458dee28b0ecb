#pragma once
// consumeApproval and effectKey (js/src/server/approvals.js,
// python/agui_state_sync/approvals.py), decided here once: an approval is
// acted on once. The store the record goes in is the binding's (memory, Redis,
// any async store), so consuming is a step function, like the approval gate
// (facade/approval_gate.h) the proxy and the middleware use, with the same
// records and keys: the binding does what each step asks and asks again.
//
//   effectKeyJson(requestJson)
//     request  {"approval", "threadId": s|null, "interruptId": s|null}
//              (interruptId null: the approval's own interruptId, if any)
//     answer   {"ok":true,"effectKey":64 hex} | failure invalid-argument (not an approval
//              {path, seq, digest, epoch, messageId?}; an interruptId that is not a string)
//
//   consumeApprovalStepJson(requestJson)
//     request  {"threadId": s, "interruptId": s|null, "approval", "state" (absent: none
//               the binding could put in JSON), "activities": {messageId: content} (the
//               agent's content of the activity an approval with a messageId names; absent
//               or without it: none held), "record": null|s (absent until peeked),
//               "claimed": bool (this request's claim was won), "nowMs": n}
//     answer   {"ok":true,"step":"peek","recordId":s}: read the store's record, put it
//                (or null) in "record", and ask again
//              | {"ok":true,"step":"claim","recordId":s,"record":s}: claim it; won: set
//                "claimed", lost: put the existing record in "record"; ask again
//              | {"ok":true,"step":"answer","answer":{ok, decision, replayed, effectKey, reason?}}
//              | failure invalid-options (an interruptId that is not a non-empty string),
//                invalid-json, limit-exceeded
//   The answer, as consumeApproval returns it:
//     first time, verified      {ok:true, decision:'approved', replayed:false, effectKey}
//     the same approval again   the first decision, replayed:true (whatever the state is now)
//     another approval, same interrupt: refused 'already-consumed'
//     not verified              refused 'changed' ('invalid-token' when malformed; 'missing'
//                               when it names an activity the agent does not hold); nothing
//                               is recorded (a refusal consumes nothing)
//   Without an interruptId, each distinct approval is consumed once (its record id is
//   "approval:<effectKey>").
#include <string>

namespace agui_sync {

std::string effectKeyJson(const std::string& requestJson);
std::string consumeApprovalStepJson(const std::string& requestJson);

}  // namespace agui_sync
