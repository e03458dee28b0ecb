#include "emit/commit_loop.h"

namespace agui_sync {

CommitLoop::Next CommitLoop::begin(int64_t now) {
  now_ = now;
  attempt_ = 1;
  opening_ = false;
  if (degraded_ && now >= nextTry_) {
    nextTry_ = now + kRetryMs;
    return Next::Recover;
  }
  if (stale_ && !degraded_) return Next::Reread;
  return Next::Apply;
}

CommitLoop::Next CommitLoop::tick(int64_t now, bool force) {
  if (!degraded_ || (!force && now < nextTry_)) return Next::Return;
  now_ = now;
  nextTry_ = now + kRetryMs;
  return Next::Recover;
}

CommitLoop::Next CommitLoop::recovered(Reset result) {
  if (result == Reset::Unreachable) return stale_ && !degraded_ ? Next::Reread : Next::Apply;
  degraded_ = false;
  stale_ = false;
  // Written meanwhile: the driver re-read the stored line and writes its own state on top.
  return Next::Apply;
}

CommitLoop::Next CommitLoop::reread(bool ok) {
  stale_ = false;
  if (ok) return Next::Apply;
  opening_ = true;
  degraded_ = true;
  nextTry_ = now_ + kRetryMs;
  return Next::Degrade;  // the emitter's own line starts with its snapshot, before the write's events
}

CommitLoop::Next CommitLoop::applied(size_t events) {
  if (events == 0 || degraded_) return Next::Return;
  inFlight_ = true;
  return Next::Append;
}

CommitLoop::Next CommitLoop::appended(Answer answer) {
  switch (answer) {
    case Answer::Ok:
      inFlight_ = false;
      return Next::Return;
    case Answer::Conflict:
      return Next::Reload;  // still in flight: `state` answers the committed one meanwhile
    case Answer::Cancelled:
      inFlight_ = false;
      stale_ = true;
      return Next::Raise;
    case Answer::Error:
      break;
  }
  return degrade();
}

CommitLoop::Next CommitLoop::reloaded(bool ok, double random01) {
  inFlight_ = false;
  if (!ok) return degrade();
  if (attempt_ >= kMaxAttempts) return Next::Fail;
  if (random01 < 0 || random01 > 1) random01 = 0.5;
  waitMs_ = static_cast<int64_t>(random01 * attempt_ * 2);
  ++attempt_;
  return Next::Wait;
}

CommitLoop::Next CommitLoop::degradedNow() {
  const bool apply = opening_;
  opening_ = false;
  return apply ? Next::Apply : Next::Return;
}

CommitLoop::Next CommitLoop::degrade() {
  inFlight_ = false;
  degraded_ = true;
  nextTry_ = now_ + kRetryMs;
  return Next::Degrade;
}

}  // namespace agui_sync
