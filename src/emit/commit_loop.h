#pragma once
// A store-bound emitter's write loop, decided once for Node's and Python's
// DurableStateEmitter (js/src/server/store/durable-emitter.js,
// python/agui_state_sync/durable.py), sans-I/O: each step takes what happened
// to the write (it began, the local emitter computed its events, the store
// answered the append, the line was re-read, the store answered a reset) and
// returns the one thing to do next. The drivers keep the emitters, the store
// and the clock.
//
// The rules (docs/architecture.md#a-store-bound-emitters-write-loop; what a
// store-bound emitter promises: docs/concepts.md#durable-servers):
//  - a batch is appended only if the key is still where the emitter last saw
//    it; a lost race re-reads the winner's line and recomputes on it, at most
//    kMaxAttempts times in a row ('store-conflict'), each retry after a short
//    random wait (out of lockstep with the winner);
//  - the store failing mid-write: the emitter goes on alone under a fresh
//    epoch of its own, its snapshot first ('degrade'); the store is tried
//    again at most once per kRetryMs, before a write (or on a timer), and when
//    it answers, the emitter's line becomes the stored one, or, written
//    meanwhile, the stored line goes on with this emitter's state on top;
//  - a write cancelled while its append was under way (Python's task
//    cancellation): whether it landed is unknown, so the line is re-read
//    before the next write; a store that fails that re-read degrades.
#include <cstdint>
#include <string>

namespace agui_sync {

class CommitLoop {
 public:
  static constexpr int kMaxAttempts = 16;
  static constexpr int64_t kRetryMs = 1000;

  enum class Next {
    Recover,  // try to make this emitter's line the stored one (store.reset); then recovered(...)
    Reread,   // re-read the stored line (a cancelled write); then reread(ok)
    Apply,    // compute the write's events on the local emitter; then applied(n)
    Append,   // append them; then appended(...)
    Reload,   // the winner's line: re-read it and rebuild the local emitter; then reloaded(ok)
    Wait,     // wait `waitMs`, then Apply again
    Degrade,  // go on alone under a fresh epoch, the new line's snapshot first; then degradedNow()
    Return,   // return the events (committed, or the emitter is on its own line)
    Fail,     // give up: 'store-conflict', nothing was sent
    Raise,    // the write was cancelled: re-raise
  };
  enum class Answer { Ok, Conflict, Error, Cancelled };
  enum class Reset { Ok, WrittenMeanwhile, Unreachable };

  Next begin(int64_t now);
  Next recovered(Reset result);
  Next reread(bool ok);
  Next applied(size_t events);
  Next appended(Answer answer);
  // The driver degraded: a write whose re-read failed is applied on the new line (Apply), else Return.
  Next degradedNow();
  Next reloaded(bool ok, double random01);

  // A retry timer fired (or refresh() forced one): Recover when due, else Return.
  Next tick(int64_t now, bool force);

  bool degraded() const { return degraded_; }
  bool inFlight() const { return inFlight_; }
  bool stale() const { return stale_; }
  int64_t waitMs() const { return waitMs_; }
  int attempt() const { return attempt_; }

 private:
  Next startApply();
  Next degrade();

  bool degraded_ = false;
  bool stale_ = false;     // a cancelled write's append may have landed: re-read first
  bool inFlight_ = false;  // the local emitter is ahead of the stored line
  bool opening_ = false;   // the write follows a re-read that failed: its events start the emitter's own line
  int attempt_ = 0;
  int64_t now_ = 0;
  int64_t nextTry_ = 0;
  int64_t waitMs_ = 0;
};

}  // namespace agui_sync
