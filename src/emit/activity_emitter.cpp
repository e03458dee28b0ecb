#include "emit/activity_emitter.h"

#include <algorithm>
#include <utility>

namespace agui_sync {

using nlohmann::json;

json activityEvent(json stateEvent, const std::string& messageId, const std::string& activityType) {
  json out(json::value_t::object);
  auto& o = *out.get_ptr<json::object_t*>();
  const bool snapshot = stateEvent["type"] == "STATE_SNAPSHOT";
  o.emplace("type", snapshot ? "ACTIVITY_SNAPSHOT" : "ACTIVITY_DELTA");
  o.emplace("messageId", messageId);
  o.emplace("activityType", activityType);
  o.emplace(snapshot ? "content" : "patch", std::move(stateEvent[snapshot ? "snapshot" : "delta"]));
  o.emplace("metadata", std::move(stateEvent["metadata"]));
  return out;
}

ActivityEmitter::ActivityEmitter(EmitterOptions options, size_t maxActivities)
    : options_(std::move(options)), maxActivities_(std::max<size_t>(maxActivities, 1)) {
  options_.startSeq = 0;  // every activity counts from its own snapshot
  options_.guardedPaths.clear();
}

void ActivityEmitter::touch(const std::string& messageId) {
  recency_.remove(messageId);  // O(activities), at most maxActivities
  recency_.push_back(messageId);
}

ActivityEmitter::Line& ActivityEmitter::lineFor(const std::string& messageId, const std::string& activityType,
                                                json content, bool& created) {
  auto it = lines_.find(messageId);
  created = it == lines_.end();
  if (!created) return it->second;
  makeRoom();
  EmitterOptions options = options_;
  if (created_ > 0) options.epoch += "." + std::to_string(created_++);
  return lines_.emplace(messageId, Line{activityType, StateEmitter(options, std::move(content))}).first->second;
}

void ActivityEmitter::makeRoom() {
  if (lines_.size() < maxActivities_) return;
  lines_.erase(recency_.front());
  forgotten_.push_back(std::move(recency_.front()));
  recency_.pop_front();
  if (created_ == 0) created_ = 1;  // from now on a new line may be a forgotten one again
}

void ActivityEmitter::adopt(const std::string& messageId, const std::string& activityType, const std::string& epoch,
                            uint64_t seq, json content) {
  auto it = lines_.find(messageId);
  if (it == lines_.end()) makeRoom();
  EmitterOptions options = options_;
  options.epoch = epoch;
  options.startSeq = seq;
  Line line{activityType, StateEmitter(options, std::move(content)), ++adoptions_};
  if (it == lines_.end()) lines_.emplace(messageId, std::move(line));
  else it->second = std::move(line);
  touch(messageId);
}

void ActivityEmitter::forget(const std::string& messageId) {
  if (lines_.erase(messageId) == 0) return;
  recency_.remove(messageId);
  if (created_ == 0) created_ = 1;  // as makeRoom: it may come back, on a line of its own
}

uint64_t ActivityEmitter::generation(const std::string& messageId) const {
  auto it = lines_.find(messageId);
  return it == lines_.end() ? 0 : it->second.generation;
}

std::vector<json> ActivityEmitter::shaped(const std::string& messageId, const Line& line, std::vector<json> events) const {
  for (json& e : events) e = activityEvent(std::move(e), messageId, line.activityType);
  return events;
}

std::vector<json> ActivityEmitter::snapshot(const std::string& messageId, const std::string& activityType, json content,
                                            bool replace) {
  if (!replace && lines_.count(messageId)) return {};
  bool created = false;
  Line& line = lineFor(messageId, activityType, content, created);
  touch(messageId);
  if (!activityType.empty()) line.activityType = activityType;
  if (created) return shaped(messageId, line, {line.emitter.snapshot()});
  return shaped(messageId, line, line.emitter.update(std::move(content)));
}

PatchOutcome ActivityEmitter::patch(const std::string& messageId, const std::string& activityType, json ops) {
  auto it = lines_.find(messageId);
  if (it == lines_.end()) {
    PatchOutcome refused;
    refused.failure = Failure{Code::PatchFailed, "no activity " + messageId + " is held: send its ACTIVITY_SNAPSHOT first",
                              std::nullopt};
    return refused;
  }
  touch(messageId);
  if (!activityType.empty()) it->second.activityType = activityType;
  PatchOutcome out = it->second.emitter.patch(std::move(ops));
  out.events = shaped(messageId, it->second, std::move(out.events));
  return out;
}

std::vector<json> ActivityEmitter::catchUp(const std::string& messageId, std::optional<uint64_t> lastSeq,
                                           const std::string* epoch, const std::vector<uint64_t>& held) const {
  auto it = lines_.find(messageId);
  if (it == lines_.end()) return {};
  const StateEmitter& e = it->second.emitter;
  std::vector<json> events = lastSeq ? e.replaySince(*lastSeq, epoch, held) : std::vector<json>{e.catchUpSnapshot()};
  return shaped(messageId, it->second, std::move(events));
}

std::vector<json> ActivityEmitter::snapshots() const {
  std::vector<json> out;
  for (const auto& [id, line] : lines_) out.push_back(activityEvent(line.emitter.snapshot(), id, line.activityType));
  return out;
}

std::optional<json> ActivityEmitter::snapshotOf(const std::string& messageId) const {
  auto it = lines_.find(messageId);
  if (it == lines_.end()) return std::nullopt;
  return activityEvent(it->second.emitter.snapshot(), messageId, it->second.activityType);
}

const json* ActivityEmitter::content(const std::string& messageId) const {
  auto it = lines_.find(messageId);
  return it == lines_.end() ? nullptr : &it->second.emitter.state();
}

const std::string* ActivityEmitter::epoch(const std::string& messageId) const {
  auto it = lines_.find(messageId);
  return it == lines_.end() ? nullptr : &it->second.emitter.options().epoch;
}

std::vector<std::string> ActivityEmitter::ids() const {
  std::vector<std::string> out;
  out.reserve(lines_.size());
  for (const auto& entry : lines_) out.push_back(entry.first);
  return out;
}

std::optional<uint64_t> ActivityEmitter::seq(const std::string& messageId) const {
  auto it = lines_.find(messageId);
  if (it == lines_.end()) return std::nullopt;
  return it->second.emitter.seq();
}

}  // namespace agui_sync
