#include "facade/activity_facade.h"

#include <map>
#include <utility>
#include <vector>

#include "emit/activity_cursor.h"
#include "emit/activity_emitter.h"
#include "emit/activity_record.h"
#include "facade/emitter_json.h"
#include "facade/facade_json.h"
#include "json/json_escape.h"
#include "json/json_write.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

constexpr size_t kOptionsDepth = 1024;
constexpr size_t kEventDepth = 4;         // event > patch > op > value, above the content's nesting
constexpr size_t kPositionDepth = 6;      // position > activities > entry > held
constexpr size_t kMaxPositions = 256;     // entries read from one position (the receiver keeps 64)
constexpr size_t kMaxHeaderBytes = 32768; // a longer X-AGUI-State-Activities value is ignored unread

// {"ok":true,"kind":...,"messageId":...}
std::string kindJson(const char* kind, const std::string& messageId) {
  std::string out = std::string("{\"ok\":true,\"kind\":\"") + kind + "\",\"messageId\":";
  appendJsonString(out, messageId);
  return out;
}

std::string writeJson(const ActivityWrite& w) {
  switch (w.kind) {
    case ActivityWrite::Kind::Pass:
      return R"({"ok":true,"kind":"pass"})";
    case ActivityWrite::Kind::NeedContent:
      return kindJson("content", w.messageId) + "}";
    case ActivityWrite::Kind::Drop: {
      std::string out = kindJson("drop", w.messageId) + ",\"reason\":\"" + w.reason + "\"";
      if (w.failure) out += ",\"failure\":" + failureJson(*w.failure);
      return out + "}";
    }
    case ActivityWrite::Kind::Write:
      break;
  }
  std::string events = eventsJson(w.events);  // {"ok":true,"events":[...]}
  return kindJson("write", w.messageId) + "," + events.substr(std::string("{\"ok\":true,").size());
}

bool validEntry(const json& e) {
  if (!e.is_object()) return false;
  auto id = e.find("messageId");
  if (id == e.end() || !id->is_string()) return false;
  auto seq = e.find("lastSeq");
  if (seq != e.end() && !seq->is_null() && (!seq->is_number_unsigned() || seq->get<uint64_t>() > kMaxSeq)) return false;
  auto epoch = e.find("epoch");
  if (epoch != e.end() && !epoch->is_null() && !epoch->is_string()) return false;
  std::vector<uint64_t> held;
  return readSeqList(e, "held", held);
}

// The client's entries by messageId (the first of each), or nullopt when it keeps no activities.
std::optional<std::map<std::string, const json*>> readEntries(const json& list) {
  if (!list.is_array()) return std::nullopt;
  std::map<std::string, const json*> out;
  size_t read = 0;
  for (const json& e : list) {
    if (++read > kMaxPositions) break;
    if (validEntry(e)) out.emplace(e["messageId"].get<std::string>(), &e);
  }
  return out;
}

// The position's `activities`: its array, or the header's value decoded into `storage`.
const json* activityList(const json& position, json& storage) {
  auto it = position.find("activities");
  if (it == position.end() || it->is_null()) return nullptr;
  if (it->is_array()) return &*it;
  if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxHeaderBytes) return nullptr;
  std::optional<std::string> text = percentDecode(it->get<std::string>());
  if (!text || parseBounded(*text, kPositionDepth, storage) || !storage.is_array()) return nullptr;
  return &storage;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percentDecode(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') {
      out.push_back(value[i]);
      continue;
    }
    if (i + 2 >= value.size()) return std::nullopt;
    const int hi = hexDigit(value[i + 1]), lo = hexDigit(value[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

ActivityFacade::ActivityFacade(const std::string& optionsJson) {
  json opts = json::object();
  std::string problem;
  if (!optionsJson.empty() && parseBounded(optionsJson, kOptionsDepth, opts)) opts = json();
  if (!opts.is_object()) {
    problem = "options must be a JSON object";
    opts = json::object();
  }
  EmitterOptions options = readEmitterOptions(opts, problem);
  size_t maxActivities = 64;
  if (auto failure = readPositive(opts, "maxActivities", maxActivities); failure && problem.empty()) problem = failure->message;
  maxDepth_ = options.maxDepth;
  epoch_ = options.epoch;
  auto record = opts.find("record");
  record_ = record != opts.end() && record->is_boolean() && record->get<bool>();
  recordOps_ = json::array();
  emitter_ = std::make_unique<ActivityEmitter>(std::move(options), maxActivities);
  cursor_ = std::make_unique<ActivityCursor>();
  initResult_ = problem.empty() ? okJson() : failureJson(Code::InvalidOptions, problem);
}

ActivityFacade::~ActivityFacade() = default;

std::string ActivityFacade::written(const std::string& eventJson, const std::string* contentJson, bool verified,
                                    ActivityStream* stream) {
  json event, content;
  if (auto failure = parseValue(eventJson, maxDepth_, kEventDepth, event)) return failureJson(*failure);
  if (contentJson != nullptr) {
    if (auto failure = parseValue(*contentJson, maxDepth_, 0, content)) return failureJson(*failure);
  }
  ActivityWrite w = contentJson ? cursor_->writeContent(*emitter_, std::move(event), std::move(content))
                                : cursor_->write(*emitter_, std::move(event), verified);
  if (w.kind == ActivityWrite::Kind::Write) keepRecordOps(w.events);
  if (stream != nullptr) stream->shape(*emitter_, w);
  return writeJson(w);
}

std::string ActivityFacade::write(const std::string& eventJson, bool verified) {
  return written(eventJson, nullptr, verified, nullptr);
}

std::string ActivityFacade::writeContent(const std::string& eventJson, const std::string& contentJson) {
  return written(eventJson, &contentJson, true, nullptr);
}

std::string ActivityFacade::snapshot(const std::string& messageId, const std::string& activityType,
                                     const std::string& contentJson, bool replace) {
  json content;
  if (auto failure = parseValue(contentJson, maxDepth_, 0, content)) return failureJson(*failure);
  std::vector<json> events = emitter_->snapshot(messageId, activityType, std::move(content), replace);
  keepRecordOps(events);
  return eventsJson(events);
}

std::string ActivityFacade::patch(const std::string& messageId, const std::string& activityType,
                                  const std::string& opsJson) {
  json ops;
  if (auto failure = parseValue(opsJson, maxDepth_, kEnvelopeDepth, ops)) return failureJson(*failure);
  PatchOutcome r = emitter_->patch(messageId, activityType, std::move(ops));
  if (!r.ok()) return failureJson(*r.failure);
  keepRecordOps(r.events);
  return eventsJson(r.events);
}

void ActivityFacade::keepRecordOps(const std::vector<json>& events) {
  std::vector<std::string> forgotten = emitter_->takeForgotten();  // taken always: it must not grow
  if (record_) appendRecordOps(recordOps_, events, forgotten);
}

std::string ActivityFacade::seedText() const {
  std::string out;
  for (json& event : emitter_->snapshots()) {
    event.erase("metadata");  // unsequenced: the receiver holds it as the run's starting content
    out += "data: " + jsonText(event) + "\n\n";
  }
  return out;
}

std::string ActivityFacade::takeRecordOps() {
  commits_.taken(!recordOps_.empty());
  std::string out = jsonText(recordOps_);
  recordOps_ = json::array();
  return out;
}

std::string ActivityFacade::settleRecord(const std::string& refusalCode) {
  switch (commits_.settle(refusalCode.empty() ? nullptr : refusalCode.c_str())) {
    case RecordCommits::Next::Done: return R"({"next":"done"})";
    case RecordCommits::Next::Adopt: return R"({"next":"adopt"})";
    case RecordCommits::Next::Raise: return R"({"next":"raise"})";
    case RecordCommits::Next::Fail: break;
  }
  return R"({"next":"fail","code":"store-conflict","message":"an activity write lost )" +
         std::to_string(RecordCommits::kMaxRecordTries) + R"( races to other instances' writes of it"})";
}

std::string ActivityFacade::adoptRecord(const std::string& recordJson) {
  json record;
  if (auto failure = parseValue(recordJson, maxDepth_, 2, record)) return failureJson(*failure);
  if (!record.is_object()) return failureJson(Code::InvalidJson, "the activity record must be a JSON object");
  emitter_->takeForgotten();  // forgotten before: the record says what it holds now
  const size_t changed = agui_sync::adoptRecord(*emitter_, record);
  commits_.adopted();
  // (an excess of the record's past maxActivities was forgotten: the next write's ops remove it)
  return "{\"ok\":true,\"changed\":" + std::to_string(changed) + "}";
}

std::string ActivityFacade::catchUp(const std::string& positionJson) const { return caughtUp(positionJson, nullptr); }

std::string ActivityFacade::caughtUp(const std::string& positionJson, ActivityStream* stream) const {
  json position, decoded;
  if (parseBounded(positionJson, kPositionDepth, position) || !position.is_object()) position = json::object();
  const json* list = activityList(position, decoded);
  std::optional<std::map<std::string, const json*>> entries;
  if (list != nullptr) entries = readEntries(*list);
  json modes(json::value_t::array);
  std::vector<json> events;
  if (entries) {
    for (const std::string& id : emitter_->ids()) {
      auto entry = entries->find(id);
      const std::string& ours = *emitter_->epoch(id);
      std::vector<json> answer;
      if (entry == entries->end() || needsSnapshot(*entry->second, ours)) {
        answer = emitter_->catchUp(id, std::nullopt, nullptr);
      } else {
        std::vector<uint64_t> held;
        readSeqList(*entry->second, "held", held);
        answer = emitter_->catchUp(id, (*entry->second)["lastSeq"].get<uint64_t>(), &ours, held);
      }
      modes.push_back({{"messageId", id}, {"mode", catchUpMode(answer)}});
      for (json& e : answer) events.push_back(std::move(e));
    }
    if (stream != nullptr) stream->caughtUp(*emitter_);
  }
  std::string out = eventsJson(events);
  out.pop_back();  // the closing brace: the modes go in the same object
  return out + ",\"activities\":" + jsonText(modes) + "}";
}

std::string ActivityFacade::contentJson(const std::string& messageId) const {
  const json* content = emitter_->content(messageId);
  return content == nullptr ? "null" : jsonText(*content);
}

double ActivityFacade::seq(const std::string& messageId) const {
  std::optional<uint64_t> s = emitter_->seq(messageId);
  return s ? static_cast<double>(*s) : -1.0;
}

double ActivityFacade::size() const { return static_cast<double>(emitter_->size()); }

ActivityStreamFacade::ActivityStreamFacade(const std::string&)
    : stream_(std::make_unique<ActivityStream>()), initResult_(okJson()) {}
ActivityStreamFacade::~ActivityStreamFacade() = default;

std::string ActivityStreamFacade::write(ActivityFacade& thread, const std::string& eventJson, bool verified) {
  return thread.written(eventJson, nullptr, verified, stream_.get());
}

std::string ActivityStreamFacade::writeContent(ActivityFacade& thread, const std::string& eventJson,
                                               const std::string& contentJson) {
  return thread.written(eventJson, &contentJson, true, stream_.get());
}

std::string ActivityStreamFacade::catchUp(ActivityFacade& thread, const std::string& positionJson) {
  return thread.caughtUp(positionJson, stream_.get());
}

}  // namespace agui_sync
