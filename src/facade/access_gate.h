#pragma once
// The access gate: whether a request may read, change or consume a thread
// (SECURITY.md, docs/wire.md section 12), decided once, here, for the Node
// proxy (js/src/proxy/access.js) and the Python middleware
// (python/agui_state_sync/_access.py).
//
// The backend's own authentication is the authority. A requester is the
// digest of the credentials that are forwarded to the backend (Authorization
// and Cookie), so it is exactly what the backend judges. A requester is
// authorized for a thread once the backend accepted (2xx) a request of theirs
// for that thread, or once the deployer's authorize hook said so; the grant is
// kept in the store (every instance of a fleet sees it) and expires.
//
// The gate does no I/O: the driver reads and writes the grant, calls the hook,
// forwards the request, and asks again with what it learned:
//
//   Lookup   read the grant of (thread, requester): the store's record under
//            grantScope()/grantId(); then ask again with `looked`
//   Ask      call the deployer's authorize hook; ask again with its answer
//   Serve    authorized: the request is served as the thread's (its state, its
//            edits, its approvals). A run is still forwarded first, and the
//            gate asked again with the backend's status
//   Forward  not authorized yet, and the request needs nothing of the thread:
//            forward the client's own RunAgentInput unchanged (none of the
//            thread's state, no edits, no claims), create nothing, and ask again
//            with the backend's status
//   Grant    write the grant (then the request goes on as Serve)
//   Refuse   403 not-authorized: nothing of the thread, nothing changed. The
//            answer is the same whether or not the thread exists
//   Deny     the backend refused the forwarded request: its status and body go
//            to the client, this request's claims are released, nothing else
//            changes
//
// The order is the contract: the backend's answer decides first (a refusal
// denies even a requester who held a grant), then a stored grant, then the
// hook (only its yes authorizes: a hook that says nothing denies, as LangGraph
// Platform's auth handlers do). A requester neither grants: only a run that
// carries nothing of the thread is forwarded, for the backend to judge.
#include <string>

#include <nlohmann/json.hpp>

namespace agui_sync {

enum class AccessVerdict { Lookup, Ask, Serve, Forward, Grant, Refuse, Deny };

enum class AccessKind {
  Attach,  // X-AGUI-Attach: reads the thread
  Resume,  // Last-Event-ID, or a POST of a runId that is live: reads a run of the thread
  Start,   // a POST that starts a run
};

// What the driver knows so far; each answer fills one more field.
struct AccessInput {
  AccessKind kind = AccessKind::Start;
  // A Start that reads the thread: approvals (resume entries), whose verdict
  // tells the thread's value. (Edits of a requester the gate does not know
  // are not applied: the driver forwards the client's own state.)
  bool touchesThread = false;
  bool looked = false;   // the store was read ...
  bool granted = false;  // ... and holds an unexpired grant of (thread, requester)
  bool hasAuthorizer = false;
  int authorized = -1;      // the hook's answer: -1 not asked, 0 no, 1 yes
  int upstreamStatus = 0;   // the backend's status for the forwarded request; 0: not forwarded
};

struct AccessDecision {
  AccessVerdict verdict = AccessVerdict::Refuse;
  int status = 0;  // Refuse: 403; Deny: the backend's
};

AccessDecision judgeAccess(const AccessInput& in);

// The requester: 64 hex digits of SHA-256 over the canonical JSON array of the
// credential headers' values (null for one that is absent), so every language
// names the same requester the same way.
std::string requesterOf(const nlohmann::json& credentials);

// Where a grant lives in a store's records (the claim/peek/release contract):
// scope "grant", id = 64 hex digits of SHA-256 over the canonical JSON
// [threadId, requester], so no threadId can name another kind of key.
const char* grantScope();
std::string grantId(const std::string& threadId, const std::string& requester);

}  // namespace agui_sync
