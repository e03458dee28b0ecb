#pragma once
// The approval gate: what the proxy (js/src/proxy/approvals.js) and the Python
// middleware (python/agui_state_sync/_asgi_approvals.py) do with a resume that
// carries our approvals (docs/wire.md sections 7 and 8), decided once, here.
// The store the approvals are consumed in is the binding's (memory, Redis, any
// async store), so the gate is a step function over what the binding has read
// and written so far; the binding does what each verdict asks and asks again:
//
//   Pass     no resume entry carries one of our approvals: the run goes on
//   Peek     read the store's records of `interruptIds` (null when none), and the
//            thread's content of each activity in `activities` (null when it holds
//            none: an approval with a messageId is of that activity, docs/wire.md
//            section 7), and ask again
//   Claim    claim each of `claims` in order, with its record; stop at the first one
//            that is lost (another consumer was first) and put its existing record
//            into the records; then ask again
//   Forward  every approval verified and claimed by this request: start the run
//            (the one that carries `interruptIds`)
//   Replay   `interruptIds[0]` was forwarded before with this very approval (a resume
//            re-sent after a cut): do not forward again; attach to the first run
//   Refuse   nothing is forwarded: `code` (approval-stale, already-consumed,
//            invalid-request) for `interruptIds[0]`, with `message`
//
// A Replay or Refuse after this request claimed some interrupts (its claims
// raced another request's) lists them in `releases`: the binding drops each
// record it wrote (the store's optional release()), so an approval that was not
// forwarded is not left consumed.
//
// The order of the checks is the contract: a record of another approval refuses
// (already-consumed) before anything else, a replay wins over a stale fresh entry
// (a re-sent resume after the first run moved the state is still a replay), and
// only fresh entries are verified: against the state, or with a messageId against
// the thread's content of that activity (none held: approval-stale, never the
// state). A refusal claims nothing.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>

namespace agui_sync {

enum class GateVerdict { Pass, Peek, Claim, Forward, Replay, Refuse };

struct GateClaim {
  std::string interruptId;
  std::string record;  // {"at","decision":"approved","effectKey"}: consumeApproval's record
};

struct GateDecision {
  GateVerdict verdict = GateVerdict::Pass;
  std::vector<std::string> interruptIds;
  std::vector<std::string> activities;  // Peek: the activities' contents to read
  std::vector<GateClaim> claims;    // Claim: to write
  std::vector<GateClaim> releases;  // Replay, Refuse: this request's claims to drop
  Code code = Code::InvalidRequest;  // Refuse only
  std::string message;               // Refuse only
};

struct GateInput {
  std::string threadId;
  const nlohmann::json* resume = nullptr;   // RunAgentInput.resume, as sent
  const nlohmann::json* state = nullptr;    // the thread's vouched state; null: none
  const nlohmann::json* records = nullptr;  // {interruptId: record text | null} read so far
  const nlohmann::json* activities = nullptr;  // {messageId: content | null} read so far
  std::map<std::string, std::string> claimed;  // interrupt -> the record this request claimed it with
  double nowMs = 0;                         // the records' "at"
};

GateDecision judgeApprovals(const GateInput& input);

// Whether RunAgentInput.resume (as sent) has an entry carrying one of our
// approvals: the entries judgeApprovals judges (every other entry passes).
bool carriesApprovals(const nlohmann::json* resume);

// consumeApproval's effect key (facade/approval_consume.h): 64 hex digits of the
// SHA-256 of the canonical JSON of {v:1, threadId, interruptId, path, seq, digest,
// epoch}; threadId and interruptId are strings or null, a seq that is not a safe
// integer and an epoch that is not a string count as null. An approval of an
// activity adds its messageId to that object (so a state approval's key is what it
// always was). `approval` must have string path and digest.
std::string approvalEffectKey(const nlohmann::json& approval, const nlohmann::json& threadId,
                              const nlohmann::json& interruptId);

// The record an approval is consumed with, the gate's and consumeApproval's:
// {"at":nowMs,"decision":"approved","effectKey":key}. Only its effectKey is read back.
std::string approvalRecord(const std::string& effectKey, double nowMs);

}  // namespace agui_sync
