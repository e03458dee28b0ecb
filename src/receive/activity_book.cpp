#include "receive/activity_book.h"

#include <utility>

namespace agui_sync {

ActivityBook::ActivityBook(const Options& options) : lineOptions_(options), maxActivities_(options.maxActivities) {
  lineOptions_.maxStateBytes = options.maxActivityBytes;
}

const ActivityBook::Line* ActivityBook::find(const std::string& messageId) const {
  auto it = lines_.find(messageId);
  return it == lines_.end() ? nullptr : &it->second;
}

void ActivityBook::name(const std::string& messageId, std::vector<Outcome>& out, size_t from) {
  for (size_t i = from; i < out.size(); ++i) out[i].messageId = messageId;
}

// The line of ev's messageId, a new one if there is room.
ActivityBook::Line* ActivityBook::lineFor(const DecodedEvent& ev, std::vector<Outcome>& out) {
  auto it = lines_.find(ev.messageId);
  if (it != lines_.end()) return &it->second;
  if (lines_.size() >= maxActivities_) {
    Outcome o;
    o.kind = OutcomeKind::Error;
    o.reason = Code::LimitExceeded;
    o.detail = "activity " + ev.messageId + " not kept: " + std::to_string(maxActivities_) +
               " activities (maxActivities) are already held";
    o.messageId = ev.messageId;
    out.push_back(std::move(o));
    return nullptr;
  }
  Line line{ev.activityType, Receiver(lineOptions_)};
  return &lines_.emplace(ev.messageId, std::move(line)).first->second;
}

void ActivityBook::onEvent(DecodedEvent& ev, std::string raw, std::vector<Outcome>& out) {
  const bool snapshot = ev.cls == EventClass::ActivitySnapshot;
  const std::string messageId = ev.messageId;
  const size_t from = out.size();
  if (snapshot && !ev.replace && lines_.count(messageId)) {
    // AG-UI: `replace: false` keeps an activity that already exists.
    Outcome o;
    o.kind = OutcomeKind::Ignored;
    o.reason = Code::Duplicate;
    o.seq = ev.seq.seq;
    o.messageId = messageId;
    out.push_back(std::move(o));
    return;
  }
  const bool known = lines_.count(messageId) > 0;
  Line* line = lineFor(ev, out);
  if (!line) return;
  if (!ev.activityType.empty()) line->activityType = ev.activityType;
  // A delta for an activity never seen (its snapshot was lost, or the client
  // joined late) is what @ag-ui/client drops without a word: here the
  // activity asks for its snapshot, and the delta waits for it.
  if (!known && !snapshot)
    line->receiver.requireSnapshot(Code::Gap, "activity " + messageId + ": a delta before any snapshot", out);
  ev.cls = snapshot ? EventClass::StateSnapshot : EventClass::StateDelta;  // the line's document
  line->receiver.onEvent(std::move(ev), std::move(raw), out);
  for (size_t i = from; i < out.size(); ++i) {
    if (out[i].kind == OutcomeKind::Applied)
      out[i].type = out[i].type == "STATE_SNAPSHOT" ? "ACTIVITY_SNAPSHOT" : "ACTIVITY_DELTA";
    out[i].messageId = messageId;
  }
}

void ActivityBook::onLost(const DecodeError& error, std::vector<Outcome>& out) {
  for (auto& [id, line] : lines_) {
    if (error.activityId && id != *error.activityId) continue;
    const size_t from = out.size();
    line.receiver.onLostUpdate(error, out);
    name(id, out, from);
  }
}

void ActivityBook::onRunStarted() {
  for (auto& [id, line] : lines_) line.receiver.onRunStarted();
}

void ActivityBook::onStreamEnd(std::vector<Outcome>& out) {
  for (auto& [id, line] : lines_) {
    const size_t from = out.size();
    line.receiver.onStreamEnd(out);
    name(id, out, from);
  }
}

}  // namespace agui_sync
