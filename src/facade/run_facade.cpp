#include "facade/run_facade.h"

#include <algorithm>
#include <cctype>

#include <agui_sync/options.h>

#include "facade/access_gate.h"
#include "facade/facade_json.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;
using run::Action;
using run::Do;

namespace {

const size_t kMaxInputDepth = 16;

const char* doName(Do what) {
  switch (what) {
    case Do::Send: return "send";
    case Do::Head: return "head";
    case Do::Append: return "append";
    case Do::CatchUp: return "catch-up";
    case Do::Rejoin: return "rejoin";
    case Do::Arm: return "arm";
    case Do::Disarm: return "disarm";
    case Do::AskPresent: return "ask-present";
    case Do::StopUpstream: return "stop-upstream";
    case Do::AskAbort: return "ask-abort";
    case Do::Close: return "close";
    case Do::Refuse: return "refuse";
    case Do::Defer: return "defer";
    case Do::Started: return "started";
    case Do::Done: return "done";
  }
  return "done";
}

json entryJson(const run::LogEntry& e) {
  return {{"n", e.n}, {"seq", e.seq ? json(*e.seq) : json()}, {"flags", run::entryFlags(e)}, {"text", e.text}};
}

// Where the run stands after a step, so that a driver mirrors it without asking.
json atJson(const run::RunLife& life) {
  auto seq = life.sentSeq();
  return {{"lastN", life.log().lastN()}, {"framedN", std::max<uint64_t>(life.framedN(), life.log().lastN())},
          {"startedN", life.startedN()}, {"sentSeq", seq ? json(*seq) : json()},
          {"logBytes", life.log().bytes()}, {"finished", life.finished()}, {"ended", life.ended()},
          {"clients", life.clientCount()}};
}

std::string actionsJson(const std::vector<Action>& actions, const run::RunLife& life) {
  json list = json::array();
  for (const Action& a : actions) {
    json one = {{"do", doName(a.what)}};
    if (!a.clients.empty() || a.what == Do::Send || a.what == Do::Close) one["to"] = a.clients;
    if (a.what == Do::Send) one["text"] = a.text;
    if (a.what == Do::Head) one["mode"] = a.text;
    if (a.what == Do::Arm) one["at"] = a.at;
    if (a.what == Do::Append) {
      json entries = json::array();
      for (const run::LogEntry* e : a.entries) entries.push_back(entryJson(*e));
      one["entries"] = std::move(entries);
    }
    if (a.what == Do::Refuse) {
      one["status"] = a.status;
      one["code"] = a.code;
      one["message"] = a.text;
    }
    list.push_back(std::move(one));
  }
  return jsonText(json{{"ok", true}, {"actions", std::move(list)}, {"at", atJson(life)}});
}

std::optional<int64_t> optInt(const json& o, const char* name) {
  auto it = o.find(name);
  if (it == o.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::optional<std::string> optString(const json& o, const char* name) {
  auto it = o.find(name);
  if (it == o.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

bool flag(const json& o, const char* name) {
  auto it = o.find(name);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

// A stored entry {n, seq, flags, text}, or nullopt when it is malformed.
std::optional<run::LogEntry> entryOf(const json& e) {
  auto n = optInt(e, "n");
  auto text = optString(e, "text");
  auto flags = optString(e, "flags");
  if (!e.is_object() || !n || *n <= 0 || !text || !flags) return std::nullopt;
  run::LogEntry entry;
  entry.n = static_cast<uint64_t>(*n);
  entry.text = *text;
  entry.seq = optInt(e, "seq");
  entry.sequenced = flags->find('s') != std::string::npos;
  entry.terminal = flags->find('t') != std::string::npos;
  entry.started = flags->find('r') != std::string::npos;
  return entry;
}

std::optional<std::vector<run::LogEntry>> entriesOf(const json& input) {
  auto it = input.find("entries");
  if (it == input.end() || !it->is_array()) return std::nullopt;
  std::vector<run::LogEntry> out;
  for (const json& e : *it) {
    auto entry = entryOf(e);
    if (!entry) return std::nullopt;
    out.push_back(std::move(*entry));
  }
  return out;
}

// X-AGUI-State-Activities is percent-encoded JSON (docs/wire.md section 11).
std::string percentDecoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

constexpr size_t kMaxActivityPositions = 256;  // as the activities' catch-up reads them

// Whether a position keeps activity positions, and whether one of them resyncs (the header's text, or
// stateSync.activities itself).
void readActivities(const json& position, run::Position& out) {
  auto it = position.find("activities");
  if (it == position.end()) return;
  json list = *it;
  if (it->is_string() && parseBounded(percentDecoded(it->get<std::string>()), kMaxInputDepth, list)) return;
  if (!list.is_array()) return;
  out.activities = !list.empty();
  for (const json& a : list) {
    if (!a.is_object()) continue;
    if (a.contains("reason") && a["reason"].is_string()) out.activityResyncing = true;
    auto id = a.find("messageId");
    if (id == a.end() || !id->is_string() || out.activityAt.size() >= kMaxActivityPositions) continue;
    out.activityAt.emplace(id->get<std::string>(), std::make_pair(optInt(a, "lastSeq"), optString(a, "epoch")));
  }
}

std::optional<run::Join> joinOf(const json& input) {
  auto client = optInt(input, "client");
  auto afterN = optInt(input, "afterN");
  if (!client || (afterN && *afterN < 0)) return std::nullopt;
  run::Join join;
  join.client = *client;
  join.afterN = afterN ? static_cast<uint64_t>(*afterN) : 0;
  join.attach = flag(input, "attach");
  join.starter = flag(input, "starter");
  join.epoch = optString(input, "epoch");
  join.seq = optInt(input, "seq");
  if (auto p = input.find("position"); p != input.end() && p->is_object()) {
    join.position.lastSeq = optInt(*p, "lastSeq");
    join.position.epoch = optString(*p, "epoch");
    join.position.reason = optString(*p, "reason");
    readActivities(*p, join.position);
  }
  if (auto c = input.find("catchUp"); c != input.end() && c->is_array()) {
    std::vector<std::string> events;
    for (const json& e : *c) {
      if (!e.is_string()) return std::nullopt;
      events.push_back(e.get<std::string>());
    }
    join.catchUp = std::move(events);
  }
  return join;
}

}  // namespace

std::string requesterJson(const std::string& credentialsJson) {
  json credentials;
  if (auto failure = parseBounded(credentialsJson, 4, credentials)) return failureJson(*failure);
  if (!credentials.is_array()) return failureJson(Code::InvalidRequest, "credentials are a list of header values");
  return jsonText(json(requesterOf(credentials)));
}

RunFacade::RunFacade(const std::string& optionsJson) {
  json options;
  if (auto failure = parseBounded(optionsJson, kMaxInputDepth, options)) {
    init_ = failureJson(*failure);
    return;
  }
  run::RunConfig config;
  auto key = options.is_object() ? optString(options, "key") : std::nullopt;
  size_t graceMs = static_cast<size_t>(config.graceMs), maxEventBytes = 32u << 20;  // a snapshot may be large
  std::optional<Failure> bad;
  if (!key || key->empty() || key->size() > 64) bad = Failure{Code::InvalidOptions, "RunFacade needs a stream key", std::nullopt};
  if (!bad) bad = readPositive(options, "graceMs", graceMs);
  if (!bad) bad = readPositive(options, "maxEvents", config.maxEvents);
  if (!bad) bad = readPositive(options, "maxBytes", config.maxBytes);
  if (!bad) bad = readPositive(options, "maxClients", config.maxClients);
  if (!bad) bad = readPositive(options, "maxEventBytes", maxEventBytes);
  if (bad) {
    init_ = failureJson(*bad);
    return;
  }
  config.key = *key;
  config.graceMs = static_cast<int64_t>(graceMs);
  config.stored = flag(options, "stored");
  config.followed = flag(options, "followed");
  config.keep = flag(options, "keep");
  auto credentials = options.find("credentials");
  config.requester = optString(options, "requester").value_or(
      requesterOf(credentials != options.end() && credentials->is_array() ? *credentials : json::array()));
  life_ = std::make_unique<run::RunLife>(std::move(config));
  framer_ = SseFramer(maxEventBytes);
  init_ = okJson();
}

std::string RunFacade::feed(const std::string& bytes) {
  if (!life_) return init_;
  items_.clear();
  framer_.feed(bytes, items_);
  std::vector<Action> actions;
  for (const SseItem& item : items_) {
    std::vector<Action> more;
    if (item.kind == SseItem::Kind::Event && !item.oversized) more = life_->event(item.data);
    else if (item.kind == SseItem::Kind::Comment) {
      // ": hb <seq>" right after a catch-up says where it left the client (docs/wire.md section 4).
      if (item.data.rfind("hb ", 0) == 0 && item.data.size() > 3 && item.data.size() < 20 &&
          item.data.find_first_not_of("0123456789", 3) == std::string::npos)
        life_->position(std::stoll(item.data.substr(3)));
      more = life_->comment(":" + std::string(item.data.empty() ? "" : " ") + item.data + "\n\n");
    }
    for (auto& a : more) actions.push_back(std::move(a));
  }
  return actionsJson(actions, *life_);
}

std::string RunFacade::step(const std::string& inputJson) {
  if (!life_) return init_;
  json input;
  if (auto failure = parseBounded(inputJson, kMaxInputDepth, input)) return failureJson(*failure);
  auto on = input.is_object() ? optString(input, "on") : std::nullopt;
  if (!on) return failureJson(Code::InvalidRequest, "a run step is {on: <what happened>, ...}");
  const int64_t now = optInt(input, "now").value_or(0);
  run::RunLife& life = *life_;
  if (*on == "join") {
    auto join = joinOf(input);
    if (!join) return failureJson(Code::InvalidRequest, "join needs {client, afterN >= 0, position, catchUp: [event JSON text]}");
    return actionsJson(life.join(*join), life);
  }
  if (*on == "left") return actionsJson(life.left(optInt(input, "client").value_or(-1), now), life);
  if (*on == "timer") return actionsJson(life.timer(now), life);
  if (*on == "present") return actionsJson(life.present(flag(input, "elsewhere"), now), life);
  if (*on == "heartbeat") return actionsJson(life.heartbeat(), life);
  if (*on == "event") {
    auto event = optString(input, "event");
    if (!event) return failureJson(Code::InvalidRequest, "event needs {event: JSON text}");
    return actionsJson(life.event(*event), life);
  }
  if (*on == "ended") return actionsJson(life.ended(optString(input, "failure"), optString(input, "code").value_or("upstream-failed")), life);
  if (*on == "position") {
    life.position(optInt(input, "seq"));
    return actionsJson({}, life);
  }
  if (*on == "trim" || *on == "clear") {
    auto toBytes = optInt(input, "toBytes");
    if (*on == "trim" && (!toBytes || *toBytes < 0)) return failureJson(Code::InvalidRequest, "trim needs {toBytes >= 0}");
    *on == "trim" ? life.trim(static_cast<size_t>(*toBytes)) : life.clear();
    return actionsJson({}, life);
  }
  if (*on == "committed") {
    auto n = optInt(input, "n");
    if (!n || *n < 0) return failureJson(Code::InvalidRequest, "committed needs {n >= 0}");
    return actionsJson(life.committed(static_cast<uint64_t>(*n)), life);
  }
  if (*on == "abort") {
    auto credentials = input.find("credentials");
    std::string requester = optString(input, "requester").value_or(
        requesterOf(credentials != input.end() && credentials->is_array() ? *credentials : json::array()));
    return actionsJson(life.abort(optString(input, "reason").value_or("client"), requester), life);
  }
  if (*on == "lost" || *on == "logged") {
    auto entries = entriesOf(input);
    if (!entries) return failureJson(Code::InvalidRequest, *on + " needs {entries: [{n > 0, seq, flags, text}]}");
    return actionsJson(*on == "lost" ? life.lost(std::move(*entries)) : life.logged(std::move(*entries)), life);
  }
  if (*on == "seed") {
    life.seed(static_cast<uint64_t>(std::max<int64_t>(0, optInt(input, "afterN").value_or(0))), optInt(input, "seq"),
              static_cast<uint64_t>(std::max<int64_t>(0, optInt(input, "startedN").value_or(0))),
              optString(input, "startedText").value_or(""));
    return actionsJson({}, life);
  }
  return failureJson(Code::InvalidRequest, "unknown run step '" + *on + "'");
}

std::string RunFacade::event(const std::string& json) {
  if (!life_) return init_;
  return actionsJson(life_->event(json), *life_);
}

std::string RunFacade::infoJson() const {
  if (!life_) return init_;
  const run::RunLog& log = life_->log();
  auto seq = life_->sentSeq();
  return jsonText(json{{"lastN", log.lastN()}, {"firstN", log.firstN()}, {"startedN", life_->startedN()},
                       {"sentSeq", seq ? json(*seq) : json()}, {"finished", life_->finished()},
                       {"clients", life_->clientCount()}});
}

}  // namespace agui_sync
