#pragma once
// Every code agui-state-sync reports, in one table: resync reasons, ignored
// reasons, error codes and guard reasons. The enum, the wire names, the JS
// module js/src/codes.js, the TypeScript unions in js/types/codes.d.ts and the
// table in docs/codes.md all come from AGUI_SYNC_CODES below
// (`agui-sync-codes --write .` regenerates them; ctest fails when they drift).
//
// A name may serve several categories (`limit-exceeded` is an error and the
// resync reason that follows it), so each row lists its categories as flags.
// For resync reasons, `cure` says what heals the client (docs/wire.md section 3):
//   Replay    the state is right but behind: the deltas from lastSeq heal it;
//   Snapshot  the state (or its history) is wrong: only a snapshot heals it,
//             and a server must answer with one;
//   Either    the position cannot be trusted: the server decides by seq/epoch.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace agui_sync {

enum CodeCategory : uint8_t {
  kResync = 1,   // Outcome{kind: resync}.reason, resyncRequest().reason
  kIgnored = 2,  // Outcome{kind: ignored}.reason
  kError = 4,    // Outcome{kind: error}.code, a facade failure's code, AguiSyncError.code
  kGuard = 8,    // a guard refusal's reason (view / approve / blocker)
  kEdit = 16,    // why an edit was refused or rejected (edit(), edit-rejected, metadata.acks)
};

enum class Cure : uint8_t { None, Replay, Snapshot, Either };

// X(Enumerator, "wire-name", categories, cure, "meaning")
#define AGUI_SYNC_CODES(X)                                                                                     \
  /* --- resync reasons ------------------------------------------------------------------------------ */     \
  X(Gap, "gap", kResync, Cure::Replay, "a delta is missing and did not arrive within the reorder limits")      \
  X(StaleBase, "stale-base", kResync, Cure::Replay, "a delta's baseSeq is behind lastSeq but its seq is ahead") \
  X(EpochChanged, "epoch-changed", kResync, Cure::Either, "a delta came from a new sender epoch")              \
  X(SeqRegression, "seq-regression", kResync, Cure::Either,                                                    \
    "a run of state events all below lastSeq: the sender's counter went backwards")                            \
  X(SeqConflict, "seq-conflict", kResync, Cure::Snapshot, "one seq arrived twice with different content")      \
  X(DigestMismatch, "digest-mismatch", kResync, Cure::Snapshot,                                                \
    "the state does not match the digest the sender stamped")                                                  \
  X(PatchFailed, "patch-failed", kResync | kError | kEdit, Cure::Snapshot, "a patch operation did not apply")          \
  X(PreconditionFailed, "precondition-failed", kResync | kError | kEdit, Cure::Snapshot,                               \
    "a `test` operation did not match")                                                                        \
  X(Malformed, "malformed", kResync, Cure::Snapshot, "a state event could not be decoded, so an update was lost") \
  X(LimitExceeded, "limit-exceeded", kResync | kError | kEdit, Cure::Snapshot,                                         \
    "an input is over a configured limit (size, depth, window)")                                               \
  X(Restored, "restored", kResync, Cure::Replay,                                                              \
    "the state came from a checkpoint (a reload): a replay from its lastSeq brings it up to date")            \
  X(AnchorMismatch, "anchor-mismatch", kResync, Cure::Snapshot,                                                \
    "a delta from before the position adopted for an unsequenced snapshot arrived: the guess was wrong")        \
  /* --- ignored reasons ----------------------------------------------------------------------------- */     \
  X(Duplicate, "duplicate", kIgnored, Cure::None, "the seq was already applied (verified by content)")         \
  X(Reordered, "reordered", kIgnored, Cure::None, "held in the reorder window until its gap fills")            \
  X(StaleSnapshot, "stale-snapshot", kIgnored, Cure::None, "a sequenced snapshot older than the state")        \
  X(AwaitingSnapshot, "awaiting-snapshot", kIgnored, Cure::None,                                               \
    "resyncing: deltas wait for the snapshot that answers the resync")                                         \
  X(StaleEpoch, "stale-epoch", kIgnored, Cure::None, "a late event from an epoch the receiver moved away from") \
  /* --- errors ---------------------------------------------------------------------------------------- */   \
  X(InvalidJson, "invalid-json", kError, Cure::None, "the text is not valid JSON")                             \
  X(InvalidEvent, "invalid-event", kError, Cure::None, "valid JSON, but not a valid AG-UI event")              \
  X(InvalidSeq, "invalid-seq", kError, Cure::None, "seq/baseSeq/epoch/digest metadata is malformed")           \
  X(InvalidPatch, "invalid-patch", kError | kEdit, Cure::None, "an operation is not a valid RFC 6902 operation")       \
  X(InvalidOptions, "invalid-options", kError, Cure::None, "an option has a wrong type or value")              \
  X(InvalidArgument, "invalid-argument", kError, Cure::None, "a call got an argument of the wrong type or shape") \
  X(InvalidCheckpoint, "invalid-checkpoint", kError, Cure::None,                                              \
    "a stored checkpoint is malformed or its digest does not match it (corrupt or tampered storage)")         \
  X(InvalidRequest, "invalid-request", kError | kEdit, Cure::None,                                                    \
    "a request is malformed: a catch-up, or a RunAgentInput or header sent to the proxy")                     \
  X(SeqExhausted, "seq-exhausted", kError, Cure::None, "the sender's seq reached 2^53-1; start a new epoch")    \
  X(NotLoaded, "not-loaded", kError, Cure::None, "no WebAssembly engine is loaded yet: await initEngine()")     \
  X(LoadFailed, "load-failed", kError, Cure::None, "the WebAssembly engine could not be loaded")                \
  X(HttpError, "http-error", kError, Cure::None, "the stream request was answered with an HTTP error status")  \
  X(IdleTimeout, "idle-timeout", kError, Cure::None, "the stream delivered no byte within idleTimeoutMs")       \
  X(RunActive, "run-active", kError, Cure::None, "not allowed while a run is active (e.g. setState during a run)") \
  X(RunAborted, "run-aborted", kError, Cure::None,                                                             \
    "the run was aborted: by the client's explicit abort, or no client came back within the grace period")     \
  X(UpstreamFailed, "upstream-failed", kError, Cure::None,                                                     \
    "the upstream agent could not be reached, answered an error, or ended its stream early")                   \
  X(RunLost, "run-lost", kError, Cure::None,                                                                   \
    "the proxy instance holding the run's upstream connection is gone (or lost its store): the run cannot go on") \
  X(StoreUnavailable, "store-unavailable", kError, Cure::None,                                                 \
    "the emitter's store (e.g. Redis) could not be reached, or lost the key in the middle of an operation")     \
  X(StoreConflict, "store-conflict", kError, Cure::None,                                                       \
    "another writer won every retry of a store write; nothing was sent")                                        \
  /* --- edit rejection reasons (patch-failed, precondition-failed, invalid-patch, limit-exceeded too) */     \
  X(AgentOwned, "agent-owned", kEdit | kError, Cure::None, "the edit writes a path the agent owns")             \
  X(Conflict, "conflict", kEdit, Cure::None,                                                                    \
    "the agent wrote an overlapping shared path since the edit's baseSeq, and the agent wins")                \
  /* --- guard reasons (disposed and engine-failed are errors too) ----------------------------------- */    \
  X(Resyncing, "resyncing", kGuard, Cure::None, "the state is being resynced")                                 \
  X(Unverified, "unverified", kGuard, Cure::None, "the state has no seq to verify it by")                      \
  X(Disconnected, "disconnected", kGuard, Cure::None, "the stream broke and no byte has arrived since")        \
  X(Stale, "stale", kGuard, Cure::None, "no byte, not even a heartbeat, within staleAfterMs")                  \
  X(GapPending, "gap-pending", kGuard, Cure::None, "deltas wait in the reorder window for a gap")              \
  X(Changed, "changed", kGuard, Cure::None, "the value differs from the one the token was issued for")        \
  X(Missing, "missing", kGuard, Cure::None,                                                                   \
    "the path does not resolve in the state, or in the activity named (none held: also missing)")             \
  X(InvalidToken, "invalid-token", kGuard, Cure::None, "the token or path is malformed")                      \
  X(EditPending, "edit-pending", kGuard, Cure::None,                                                          \
    "an edit the agent has not acknowledged touches the path: the agent does not hold that value")           \
  X(AlreadyConsumed, "already-consumed", kGuard | kError, Cure::None,                                          \
    "the interrupt was already resolved by another approval (consumeApproval, the proxy)")                     \
  X(ApprovalStale, "approval-stale", kError, Cure::None,                                                     \
    "a resume's approval is not of the thread's current value: the proxy or the middleware did not forward it") \
  X(UnknownInterrupt, "unknown-interrupt", kGuard, Cure::None, "no open interrupt has that id")               \
  X(NotAuthorized, "not-authorized", kError, Cure::None,                                                     \
    "the backend has not accepted this requester for the thread: nothing of it was read or changed")           \
  X(Disposed, "disposed", kGuard | kError, Cure::None, "the object was disposed")                              \
  X(EngineFailed, "engine-failed", kGuard | kError, Cure::None,                                                \
    "the WebAssembly engine failed (abort or trap); the object is unusable")

enum class Code : uint8_t {
#define AGUI_SYNC_CODE_ENUM(id, name, categories, cure, meaning) id,
  AGUI_SYNC_CODES(AGUI_SYNC_CODE_ENUM)
#undef AGUI_SYNC_CODE_ENUM
};

struct CodeInfo {
  Code code;
  const char* name;
  uint8_t categories;  // CodeCategory flags
  Cure cure;
  const char* meaning;
};

// The whole table, in declaration order.
const CodeInfo* codeTable(size_t* count);
const CodeInfo& codeInfo(Code code);
// The wire name ("gap", "limit-exceeded", ...).
const char* codeName(Code code);
// The code with that wire name, if any.
std::optional<Code> codeFromName(std::string_view name);
inline bool inCategory(Code code, CodeCategory category) { return (codeInfo(code).categories & category) != 0; }
// Prints the wire name (logs, test failure messages).
inline std::ostream& operator<<(std::ostream& os, Code code) { return os << codeName(code); }
// A resync reason that a replay from lastSeq heals (the state is right, only behind).
inline bool healableByReplay(Code reason) { return codeInfo(reason).cure == Cure::Replay; }

// A failure as data: what every facade call returns instead of throwing.
struct Failure {
  Code code = Code::InvalidArgument;
  std::string message;                // human-readable why; never parsed
  std::optional<size_t> opIndex;      // the failing operation of a patch
};

}  // namespace agui_sync
