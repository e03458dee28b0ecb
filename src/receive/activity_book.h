#pragma once
// Activity documents beside the state: AG-UI 1.0's second JSON Patch channel,
// ACTIVITY_SNAPSHOT {messageId, activityType, content, replace?} and
// ACTIVITY_DELTA {messageId, activityType, patch}, which generative UI renders
// from (forms, progress cards, A2UI surfaces).
//
// Each messageId is its own sequenced document with its own line of seqs
// (docs/wire.md section 11 says why), so each gets a Receiver of its own: the
// state's rules -- gaps, duplicates and bounded reorder, atomic patches, a
// resync that says why, digests, epochs -- apply to it unchanged, decided in
// one place. Outcomes of an activity event name its messageId.
//
// Limits: at most `maxActivities` documents (a new messageId past that is an
// error `limit-exceeded` and is not kept: the app hears of it, nothing is
// half-kept), each at most `maxActivityBytes` (the line's maxStateBytes: a
// snapshot or patch over it is refused and that activity resyncs).
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <agui_sync/options.h>
#include <agui_sync/outcome.h>

#include "receive/event_decoder.h"
#include "receive/receiver.h"

namespace agui_sync {

class ActivityBook {
 public:
  struct Line {
    std::string activityType;
    Receiver receiver;
  };

  explicit ActivityBook(const Options& options);

  // An ACTIVITY_SNAPSHOT or ACTIVITY_DELTA (ev.cls says which).
  void onEvent(DecodedEvent& ev, std::string raw, std::vector<Outcome>& out);
  // An activity event that could not be decoded (the caller reported the
  // error): its line resyncs, or every line when the messageId could not be
  // read (a lost update is never shown as verified).
  void onLost(const DecodeError& error, std::vector<Outcome>& out);
  // A new run: an adopted (half-sequenced) position is dropped, as for the state.
  void onRunStarted();
  // The stream ended: a gap still open in a line becomes its resync.
  void onStreamEnd(std::vector<Outcome>& out);

  const std::map<std::string, Line>& lines() const { return lines_; }
  const Line* find(const std::string& messageId) const;
  size_t size() const { return lines_.size(); }

 private:
  Line* lineFor(const DecodedEvent& ev, std::vector<Outcome>& out);
  static void name(const std::string& messageId, std::vector<Outcome>& out, size_t from);

  Options lineOptions_;
  size_t maxActivities_;
  std::map<std::string, Line> lines_;
};

}  // namespace agui_sync
