#pragma once
// StateEmitter: the backend half of the wire protocol. It owns the agent's
// shared state, turns each change into a sequenced AG-UI event, SSE-encodes it,
// and keeps a bounded replay buffer so a client that missed events can catch up.
//
// Events (valid @ag-ui/core 1.0 events; sequencing lives under one key of
// `metadata`, which @ag-ui/client keeps, so there are no extra top-level fields;
// docs/wire.md section 10):
//   {"type":"STATE_DELTA","delta":[...ops],"metadata":{"agui-state-sync":{"seq":n,
//                                       "baseSeq":n-1,"epoch"?:s,"digest"?:"sha256:..."}}}
//   {"type":"STATE_SNAPSHOT","snapshot":<state>,"metadata":{"agui-state-sync":{"seq":n,
//                                       "epoch"?:s,"digest"?:s}}}
// Every state event advances seq by exactly one (baseSeq = previous seq).
//
// Rules:
//  - update(newState) diffs the previous state against the new one (json_diff.h);
//    no difference emits nothing. patch(ops) applies the app's own RFC 6902 ops
//    atomically and emits exactly those ops; it never diffs or copies the state.
//  - digest: every `digestEvery`-th seq (seq % K == 0) carries the digest,
//    the RFC 8785 SHA-256 of the whole state after the event, so a receiver
//    that drifted is caught within K events even if every patch applied cleanly.
//    snapshot() always carries it (unless K == 0, which disables digests).
//  - snapshot fallback: a delta event whose serialized size exceeds
//    `snapshotRatio` x the size of the equivalent STATE_SNAPSHOT event is sent as
//    that snapshot instead. At 0.8 (the default) a delta that saves less than 20%
//    is not worth it: a snapshot is simpler to apply, cannot fail a precondition
//    and heals any drift. Sizes are exact serialized byte counts; the snapshot
//    is only measured up to deltaBytes / ratio, so the check is O(delta).
//    ratio >= 1: snapshot only when smaller than the delta; ratio <= 0: always.
//    Hence a delta event is never larger than its snapshot when ratio <= 1.
//  - replay: the last deltas are kept in a ring capped by `replayMaxEvents` and
//    `replayMaxBytes` (a fallback snapshot clears it). replaySince(s) returns the
//    deltas after s; nothing when s is current; one snapshot when s is older than
//    the ring, in the future, from another epoch, or when the deltas would cost
//    more than snapshotRatio x a snapshot.
//  - Values the wire cannot carry are repaired, not sent broken: invalid UTF-8
//    (strings and keys) becomes U+FFFD, NaN/Infinity become null, so the state
//    held here is exactly what receivers reconstruct. Nesting beyond maxDepth
//    (counting the op path, as the receiver does) is refused: no event, state
//    unchanged, lastFailure() says why.
//
// SSE framing: encode() -> "id: <seq>\ndata: <event JSON on one line>\n\n".
// heartbeat() -> ": hb <seq>\n\n", an SSE comment (EventSource ignores it; the
// engine counts it) carrying the current seq, so a client whose lastSeq is
// behind it knows it missed events even while the stream is otherwise idle.
//
// Exception-free (built with -fno-exceptions -DJSON_NOEXCEPTION); not
// thread-safe: one emitter per shared state, driven from one thread.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codes.h"
#include "edits.h"

namespace agui_sync {

struct EmitterOptions {
  uint64_t startSeq = 0;                   // seq of the initial state
  std::string epoch;                       // sender incarnation ("" = none); set a fresh random id per process
  size_t digestEvery = 16;                 // K: digest on every K-th seq (0 = never)
  std::vector<std::string> guardedPaths;   // JSON Pointers (e.g. "/proposal") whose overwrites update() guards with `test`
  bool testAll = false;                    // `test` before every replace/remove update() emits
  double snapshotRatio = 0.8;              // send a snapshot when delta bytes > ratio x snapshot bytes
  size_t replayMaxEvents = 1024;           // replay ring caps
  size_t replayMaxBytes = 4u << 20;
  size_t maxDepth = 128;                   // nesting limit of the state (as Options::maxDepth)
  size_t editHistory = 4096;               // seqs whose written paths are kept for edits' three-way check
  size_t ackHistory = 4096;                // edit verdicts kept (re-sent edits apply once)
};

// A pointer whose current value a client edit wrote (provenance()).
struct ClientWrite {
  std::string path;
  std::string origin;  // the edit's origin (editOrigin())
  uint64_t seq = 0;    // the event that wrote it
};

// What applyEdits() did: one verdict per edit, in order (seq = the event that
// carries it, or for a re-sent edit the one that first did), and the events.
struct EditsOutcome {
  std::optional<Failure> failure;  // the call itself was refused (invalid-options, seq-exhausted)
  std::vector<EditAck> results;
  std::vector<nlohmann::json> events;
};

struct PatchOutcome {
  // Set when the patch was refused (the state is unchanged): code invalid-patch,
  // patch-failed, precondition-failed or limit-exceeded, and the failing op's index.
  std::optional<Failure> failure;
  std::vector<nlohmann::json> events;  // empty on failure or for an empty patch
  bool ok() const { return !failure.has_value(); }
};

struct EmitterStats {
  uint64_t deltas = 0;          // STATE_DELTA events emitted
  uint64_t snapshots = 0;       // fallback STATE_SNAPSHOT events emitted by update()/patch()
  uint64_t digests = 0;         // events stamped with a digest
  uint64_t repaired = 0;        // updates/patches whose values had to be repaired (UTF-8, NaN)
  uint64_t rejected = 0;        // updates/patches refused (depth, seq exhausted, bad patch)
  uint64_t replays = 0;         // replaySince calls answered with deltas
  uint64_t replaySnapshots = 0; // replaySince calls and catch-ups answered with a snapshot
};

struct DiffOptions;  // the differ's options (src/json/json_diff.h)

class StateEmitter {
 public:
  explicit StateEmitter(EmitterOptions options = EmitterOptions{},
                        nlohmann::json initialState = nlohmann::json::object());
  ~StateEmitter();
  StateEmitter(StateEmitter&&) noexcept;
  StateEmitter& operator=(StateEmitter&&) noexcept;
  StateEmitter(const StateEmitter&) = delete;
  StateEmitter& operator=(const StateEmitter&) = delete;

  // "" when the options and initial state were accepted. A bad guarded path is
  // dropped, a too-deep initial state is replaced by {}; the message says which.
  const std::string& configError() const;

  // Diff the previous state -> newState. Returns the event (one delta or one
  // fallback snapshot), or nothing when nothing changed or the update was
  // refused (then lastFailure() says why -- seq-exhausted or limit-exceeded --
  // and the state is unchanged).
  // By const reference nothing is copied: the diff's ops are applied to the
  // held state, so an app that keeps its own state object pays the diff
  // (O(state) comparisons, no allocation) plus O(delta). An rvalue is adopted.
  std::vector<nlohmann::json> update(const nlohmann::json& newState);
  std::vector<nlohmann::json> update(nlohmann::json&& newState);
  // Why the last update() or patch() was refused; empty when it was not.
  const std::optional<Failure>& lastFailure() const;

  // update() for a binding that holds the new state as a value of its own
  // language (a Python dict) and not as JSON: `diff` appends the ops that turn
  // `state` into it, diffed under `options` (src/json/json_diff_impl.h), so the
  // new state is never written out and parsed back. Returns update()'s events,
  // and in *ops a copy of the ops it applied; or nothing, with nothing changed,
  // when it declines: `diff` failed (a value with no JSON form), a value would
  // need repair, or update() would refuse. The caller then takes update()'s
  // route with JSON, which says why.
  using DiffFn = std::function<bool(const nlohmann::json& state, const DiffOptions& options,
                                    nlohmann::json::array_t& ops)>;
  std::optional<std::vector<nlohmann::json>> updateByDiff(const DiffFn& diff, nlohmann::json* ops = nullptr);

  // Validate and apply the app's RFC 6902 ops atomically (all or nothing) and
  // emit exactly them. Pass an rvalue to save a copy. Cost: O(ops + paths),
  // plus a digest every K events and the snapshot fallback when it triggers.
  PatchOutcome patch(nlohmann::json ops);

  // User edits from a client (RunAgentInput.forwardedProps.stateSync.edits;
  // edits.h, docs/wire.md section 9). Each edit is judged on its own, in order:
  //  - an editId seen before gets its earlier verdict again (never applied twice);
  //  - a write to an agent-owned path: rejected `agent-owned`;
  //  - under AgentWins, a write to a shared path that someone else (the agent,
  //    or another client) wrote since the edit's baseSeq: rejected `conflict`
  //    (writes to user-owned paths never conflict);
  //  - else its ops apply atomically, or it is rejected with the patch's code.
  // The edits of one origin (editOrigin()) go out as one STATE_DELTA of the
  // applied ops -- possibly empty -- whose metadata.acks carries every verdict.
  // The agent's own writes are never in those events, so a client can tell its
  // edits' writes from the agent's.
  EditsOutcome applyEdits(const std::vector<EditRequest>& edits, const EditPolicy& policy);
  // The same for edits whose baseSeqs count in `clientEpoch`, the epoch the
  // client says it is in (nullptr: ours). A client of another epoch (an
  // earlier incarnation, or another store's line) names seqs that cannot be
  // placed here, so its edits are judged as made at our first seq: every
  // write since counts as a possible conflict, and past the change log the
  // history is unknown and they conflict under AgentWins.
  EditsOutcome applyEdits(const std::vector<EditRequest>& edits, const EditPolicy& policy,
                          const std::string* clientEpoch);
  // Where the state holds user-written values: the pointers a client edit wrote
  // last (an agent write at or above one takes it back), sorted, at most 1024
  // (the oldest forgotten first). Everything else was written by the agent.
  // A prompt renderer marks these untrusted (prompt_render.h, untrusted 'auto').
  std::vector<ClientWrite> provenance() const;

  // Continues a log that another process wrote (a restart, or another
  // instance sharing a store): construct with the stored state, startSeq and
  // epoch, then pass the log's latest events, oldest first, the last one at
  // seq(). They become the replay ring and the edit ledger (change log,
  // verdicts, provenance) as if this emitter had sent them, so a client that
  // reconnects gets a replay and a re-sent edit still applies once. Events
  // that do not end a consecutive run at seq() are left out; returns how many
  // were adopted.
  size_t adoptHistory(const std::vector<nlohmann::json>& events);

  // STATE_SNAPSHOT of the current state at the current seq (for a new client
  // or a resync). Its metadata.acks repeats the latest edit verdicts.
  nlohmann::json snapshot() const;

  // The events a client whose state is at `seq` needs to be current (see top).
  std::vector<nlohmann::json> replaySince(uint64_t seq) const;
  // Same, but a client whose epoch differs from ours gets a snapshot.
  std::vector<nlohmann::json> replaySince(uint64_t seq, const std::string& epoch) const;
  // The general form. `epoch`: nullptr = don't check (any string, "" included,
  // must equal ours). `skip`: seqs the client says it already holds in its
  // reorder window (docs/wire.md, section 3); a replay leaves those deltas out
  // and weighs only the ones it sends against a snapshot. The first delta after
  // `seq` is never left out (a client holding it would have applied it), so a
  // client that is behind always gets something that moves it on.
  std::vector<nlohmann::json> replaySince(uint64_t seq, const std::string* epoch,
                                          const std::vector<uint64_t>& skip) const;
  // snapshot(), answering a catch-up that no replay could serve (the client
  // knows no seq, or its resync reason says its state is wrong): counted in
  // stats().replaySnapshots like replaySince()'s own snapshot answers.
  nlohmann::json catchUpSnapshot() const;

  // "id: <metadata.seq>\ndata: <json>\n\n" (no id line without a seq or when !withId).
  static std::string encode(const nlohmann::json& event, bool withId = true);
  static std::string encodeAll(const std::vector<nlohmann::json>& events, bool withId = true);
  // ": hb <seq>\n\n".
  std::string heartbeat() const;

  // SSE bytes ready to write.
  std::string updateSse(const nlohmann::json& newState) { return encodeAll(update(newState)); }
  std::string updateSse(nlohmann::json&& newState) { return encodeAll(update(std::move(newState))); }
  std::string patchSse(nlohmann::json ops, PatchOutcome* outcome = nullptr);
  std::string snapshotSse() const { return encode(snapshot()); }
  std::string replaySse(uint64_t seq) const { return encodeAll(replaySince(seq)); }
  std::string replaySse(uint64_t seq, const std::string& epoch) const { return encodeAll(replaySince(seq, epoch)); }

  uint64_t seq() const;
  const nlohmann::json& state() const;
  const EmitterOptions& options() const;
  const EmitterStats& stats() const;
  // Replay ring: it can serve any client seq in [replayFloor(), seq()].
  uint64_t replayFloor() const;
  size_t replayEvents() const;
  size_t replayBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agui_sync
