#include "run/run_life.h"

#include <nlohmann/json.hpp>

#include "json/json_escape.h"
#include "json/json_reader.h"
#include "wire/wire_meta.h"

namespace agui_sync::run {

using nlohmann::json;

namespace {

std::string quoted(const std::string& s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}

}  // namespace

// A RUN_ERROR the run writes itself, as JSON text in AG-UI's field order.
std::string RunLife::runErrorText(const std::string& code, const std::string& message) {
  return "{\"type\":\"RUN_ERROR\",\"message\":" + quoted("agui-state-sync: " + message) + ",\"code\":" + quoted(code) + "}";
}

namespace {

Action send(std::vector<int64_t> clients, std::string text) {
  Action a(Do::Send);
  a.clients = std::move(clients);
  a.text = std::move(text);
  return a;
}

Action simple(Do what) { return Action(what); }

}  // namespace

RunLife::RunLife(RunConfig config) : config_(std::move(config)) {}

std::string RunLife::heartbeatLine() const {
  return sentSeq_ ? ": hb " + std::to_string(*sentSeq_) + "\n\n" : ": hb\n\n";
}

std::vector<Action> RunLife::event(const std::string& text) {
  std::vector<Action> out;
  if (!finished_ && !config_.followed) frame(text, out);
  return out;
}

// An event's type, messageId and metadata, read from its text without building
// the rest (a snapshot is skipped, not copied): what the log and a caught-up
// client's lines need of every event.
json envelope(const std::string& text, std::string& type) {
  JsonReader reader(text, 512);
  json event = json::object();
  bool done = false;
  if (!reader.enterObject()) return event;
  for (bool first = true;; first = false) {
    std::string key;
    if (!reader.nextMember(key, first, &done) || done) break;
    bool ok = true;
    if (key == "type") {
      ok = reader.readString(type);
      if (ok) event["type"] = type;
    } else if (key == "metadata" || key == "messageId") {
      ok = reader.readValue(event[key]);
    } else {
      ok = reader.skipValue();
    }
    if (!ok) break;
  }
  return event;
}

// Numbers and frames one of the agent's events, reading its type and wire seq from its text.
void RunLife::frame(const std::string& text, std::vector<Action>& out) {
  std::string type;
  json event = envelope(text, type);
  bool isState = type == "STATE_SNAPSHOT" || type == "STATE_DELTA";
  bool isActivity = type == "ACTIVITY_SNAPSHOT" || type == "ACTIVITY_DELTA";
  if (isState) {
    auto seq = wireSeq(event);
    seq_ = seq ? std::optional<int64_t>(static_cast<int64_t>(*seq)) : std::nullopt;
  }
  if (type == "RUN_STARTED") sawTerminal_ = false;
  LogEntry entry;
  // Numbers continue the log, whoever wrote its entries (a copy took them logged).
  if (nextN_ <= log_.lastN()) nextN_ = log_.lastN() + 1;
  entry.n = nextN_++;
  entry.text = frameText(config_.key, entry.n, text);
  entry.seq = seq_;
  entry.sequenced = isState || (isActivity && wireFields(event) != nullptr);
  entry.terminal = type == "RUN_FINISHED" || type == "RUN_ERROR";
  if (entry.terminal) sawTerminal_ = true;
  entry.started = type == "RUN_STARTED" && startedN_ == 0 && !startedPending_;
  if (entry.started) startedPending_ = true;
  commit(std::move(entry), out);
}

std::vector<Action> RunLife::comment(const std::string& line) {
  std::vector<Action> out;
  // A heartbeat after a catch-up names the seq the catch-up left the client at:
  // with a stored log it waits until what was framed before it is published.
  const uint64_t after = nextN_ - 1;
  if (config_.stored && after > log_.lastN()) comments_.emplace_back(after, line);
  else if (!clients_.empty() && !ended_) out.push_back(send({clients_.begin(), clients_.end()}, line));
  return out;
}

void RunLife::commit(LogEntry entry, std::vector<Action>& out) {
  if (!config_.stored) return publish(std::move(entry), out);
  uncommitted_.push_back(std::move(entry));
  if (appending_.empty()) flushAppend(out);
}

// The next batch to append: everything framed and not yet sent to the store.
void RunLife::flushAppend(std::vector<Action>& out) {
  if (uncommitted_.empty()) return;
  appending_ = std::move(uncommitted_);
  uncommitted_.clear();
  Action a(Do::Append);
  for (const auto& entry : appending_) a.entries.push_back(&entry);
  out.push_back(std::move(a));
}

std::vector<Action> RunLife::committed(uint64_t throughN) {
  std::vector<Action> out;
  // What the store took is published; the rest of the batch still waits for its answer.
  size_t took = 0;
  while (took < appending_.size() && appending_[took].n <= throughN) publish(std::move(appending_[took++]), out);
  appending_.erase(appending_.begin(), appending_.begin() + static_cast<std::ptrdiff_t>(took));
  if (appending_.empty()) flushAppend(out);
  if (finished_ && !ended_ && appending_.empty()) endStream(out);
  return out;
}

void RunLife::publish(LogEntry entry, std::vector<Action>& out) {
  bool first = entry.started && startedN_ == 0;
  if (first) {
    startedN_ = entry.n;
    startedText_ = entry.text;
  }
  sentSeq_ = entry.seq;
  if (!clients_.empty()) out.push_back(send({clients_.begin(), clients_.end()}, entry.text));
  const uint64_t n = entry.n;
  log_.append(std::move(entry));
  log_.trim(config_.maxEvents, config_.maxBytes);
  while (!comments_.empty() && comments_.front().first <= n) {
    if (!clients_.empty()) out.push_back(send({clients_.begin(), clients_.end()}, comments_.front().second));
    comments_.erase(comments_.begin());
  }
  if (!first) return;
  out.push_back(simple(Do::Started));
  for (int64_t client : waiting_) out.push_back(toClient(Do::Rejoin, client));
  waiting_.clear();
}

std::vector<Action> RunLife::ended(const std::optional<std::string>& failure, const std::string& code) {
  std::vector<Action> out;
  if (finished_ || config_.followed) return out;
  if (failure) finish(runErrorText(code == "engine-failed" ? code : "upstream-failed", *failure), out);
  else if (!sawTerminal_) finish(runErrorText("upstream-failed", "the agent's stream ended before RUN_FINISHED or RUN_ERROR"), out);
  else finish(std::nullopt, out);
  return out;
}

void RunLife::finish(const std::optional<std::string>& terminal, std::vector<Action>& out) {
  if (terminal) frame(*terminal, out);
  finished_ = true;
  if (armed_) {
    armed_ = false;
    out.push_back(simple(Do::Disarm));
  }
  if (appending_.empty() && uncommitted_.empty()) endStream(out);
}

void RunLife::endStream(std::vector<Action>& out) {
  if (ended_) return;
  finished_ = ended_ = true;
  if (!clients_.empty()) {
    Action close(Do::Close);
    close.clients.assign(clients_.begin(), clients_.end());
    out.push_back(std::move(close));
    clients_.clear();
  }
  for (int64_t client : waiting_) out.push_back(toClient(Do::Rejoin, client));
  waiting_.clear();
  out.push_back(simple(Do::Done));
}

std::vector<Action> RunLife::lost(std::vector<LogEntry> tail) {
  std::vector<Action> out;
  if (ended_ || config_.followed) return out;  // a copy has no lease to lose: its holder's run-lost arrives logged
  out.push_back(simple(Do::StopUpstream));
  finished_ = true;
  uncommitted_.clear();
  appending_.clear();
  bool terminal = false;
  for (auto& entry : tail) {
    if (entry.n != log_.lastN() + 1) continue;
    terminal = terminal || entry.terminal;
    publish(std::move(entry), out);
  }
  if (!terminal) {
    LogEntry own;
    own.n = log_.lastN() + 1;
    own.text = frameText(config_.key, own.n, runErrorText("run-lost", "the run's log could not be written to the store; the run cannot go on"));
    own.seq = sentSeq_;
    own.terminal = true;
    publish(std::move(own), out);
  }
  endStream(out);
  return out;
}

size_t RunLife::trim(size_t toBytes) {
  const size_t before = log_.bytes();
  log_.trim(static_cast<size_t>(-1), toBytes);
  return before - log_.bytes();
}

size_t RunLife::clear() {
  const size_t before = log_.bytes();
  log_.clear();
  return before;
}

void RunLife::seed(uint64_t afterN, std::optional<int64_t> seq, uint64_t startedN, const std::string& startedText) {
  if (afterN > 0) log_.startAfter(afterN, seq);
  if (afterN > 0) sentSeq_ = seq;
  if (startedN > 0 && startedN <= afterN) {
    startedN_ = startedN;  // the RUN_STARTED was trimmed from the stored log: its text is kept beside it
    startedText_ = startedText;
  }
}

std::vector<Action> RunLife::logged(std::vector<LogEntry> entries) {
  std::vector<Action> out;
  if (!config_.followed) return out;  // a held run's log is its own: nothing read elsewhere goes in it
  // The stored log was trimmed past what this copy holds (it read too late): it cannot go on
  // exactly. Its streams end without an event; each client resumes from its last id on a
  // fresh copy, which answers it 'lost' with the EVENTS_LOST notice.
  if (!ended_ && !entries.empty() && entries.front().n > log_.lastN() + 1) {
    out.push_back(Action(Do::StopUpstream));
    endStream(out);
    return out;
  }
  for (auto& entry : entries) {
    if (ended_ || entry.n != log_.lastN() + 1) continue;
    bool terminal = entry.terminal;
    publish(std::move(entry), out);
    if (!terminal) continue;
    out.push_back(simple(Do::StopUpstream));
    endStream(out);
  }
  return out;
}

}  // namespace agui_sync::run
