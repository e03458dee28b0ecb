#include "emit/activity_record.h"

#include <algorithm>
#include <map>
#include <utility>

#include "emit/activity_emitter.h"
#include "json/json_pointer.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

const json* member(const json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

json op(const char* name, std::string path, json value) {
  return json{{"op", name}, {"path", std::move(path)}, {"value", std::move(value)}};
}

// An event's op moved under `root` (its path and from).
json rooted(json o, const std::string& root) {
  for (const char* key : {"path", "from"}) {
    auto it = o.find(key);
    if (it != o.end() && it->is_string()) *it = root + it->get<std::string>();
  }
  return o;
}

void eventOps(json& ops, const json& event) {
  const json* id = member(event, "messageId");
  const json* meta = member(event, "metadata");
  const json* wire = meta ? member(*meta, kWireKey) : nullptr;
  const json* seq = wire ? member(*wire, "seq") : nullptr;
  const json* epoch = wire ? member(*wire, "epoch") : nullptr;
  if (!id || !id->is_string() || !seq || !seq->is_number_unsigned() || !epoch || !epoch->is_string()) return;
  std::string entry;
  appendPointerToken(entry, id->get_ref<const std::string&>());
  const uint64_t n = seq->get<uint64_t>();
  const bool snapshot = event.value("type", "") == "ACTIVITY_SNAPSHOT";
  if (!snapshot || n > 0) {  // the line it continues must be the stored one
    const json* base = wire ? member(*wire, "baseSeq") : nullptr;
    ops.push_back(op("test", entry + "/epoch", *epoch));
    ops.push_back(op("test", entry + "/seq", snapshot || !base ? json(n - 1) : *base));
  }
  if (snapshot) {
    json value{{"activityType", event.value("activityType", "")}, {"epoch", *epoch}, {"seq", n},
               {"content", event.contains("content") ? event["content"] : json()}};
    ops.push_back(op(n == 0 ? "add" : "replace", entry, std::move(value)));
    return;
  }
  ops.push_back(op("replace", entry + "/seq", n));
  const json* patch = member(event, "patch");
  if (patch && patch->is_array())
    for (const json& o : *patch) ops.push_back(rooted(o, entry + "/content"));
}

// The entry's line, or false when it is malformed.
bool readEntry(const json& entry, std::string& type, std::string& epoch, uint64_t& seq) {
  const json* e = member(entry, "epoch");
  const json* s = member(entry, "seq");
  const json* t = member(entry, "activityType");
  if (!e || !e->is_string() || !s || !s->is_number_unsigned() || s->get<uint64_t>() > kMaxSeq || !member(entry, "content"))
    return false;
  epoch = e->get<std::string>();
  seq = s->get<uint64_t>();
  type = t && t->is_string() ? t->get<std::string>() : std::string();
  return true;
}

}  // namespace

std::string sideLineKey(const std::string& name, const std::string& threadKey) {
  return std::string(1, '\0') + name + ":" + threadKey;
}

std::string activityRecordKey(const std::string& threadKey) { return sideLineKey("activities", threadKey); }

void appendRecordOps(json& ops, const std::vector<json>& events, const std::vector<std::string>& forgotten) {
  for (const std::string& id : forgotten) {
    std::string path;
    appendPointerToken(path, id);
    ops.push_back(json{{"op", "remove"}, {"path", std::move(path)}});
  }
  for (const json& event : events) eventOps(ops, event);
}

RecordCommits::Next RecordCommits::settle(const char* refusal) {
  if (refusal == nullptr) {
    pending_ = false;
    tries_ = 0;
    return Next::Done;
  }
  const std::string code = refusal;
  if (code != "precondition-failed" && code != "patch-failed") {  // not a lost race: the store's own failure
    tries_ = 0;
    return Next::Raise;
  }
  if (++tries_ < kMaxRecordTries) return Next::Adopt;
  tries_ = 0;
  return Next::Fail;
}

size_t adoptRecord(ActivityEmitter& emitter, const json& record) {
  struct Entry {
    std::string type, epoch;
    uint64_t seq = 0;
    const json* content = nullptr;
  };
  std::map<std::string, Entry> held;
  if (record.is_object()) {
    for (const auto& [id, entry] : record.items()) {
      Entry e;
      if (readEntry(entry, e.type, e.epoch, e.seq)) held.emplace(id, Entry{e.type, e.epoch, e.seq, &entry["content"]});
    }
  }
  size_t changed = 0;
  // First what the record no longer holds, so that adopting makes room only among the record's own.
  for (const std::string& id : emitter.ids()) {
    if (held.count(id)) continue;
    emitter.forget(id);
    ++changed;
  }
  // Then the record's: those held stay, others while there is room; the excess (the record
  // took more than this emitter keeps) is forgotten here and removed by the next write.
  size_t room = emitter.capacity() - std::min(emitter.capacity(), emitter.size());
  for (const auto& [id, e] : held) {
    const std::string* ours = emitter.epoch(id);
    if (!ours && room == 0) {
      emitter.excess(id);
      continue;
    }
    if (!ours) --room;
    // The content too: a write whose commit lost a race moved the line past what the record holds.
    if (ours && *ours == e.epoch && emitter.seq(id) == e.seq && *emitter.content(id) == *e.content) continue;
    emitter.adopt(id, e.type, e.epoch, e.seq, *e.content);
    ++changed;
  }
  return changed;
}

}  // namespace agui_sync
