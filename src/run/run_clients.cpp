// RunLife's clients: who joins with which preamble, who leaves, and what the
// grace period decides once none is left (run_life.h). The resume rules are
// docs/wire.md section 8's:
//  - 'exact': the logged events after n, byte for byte, when the client's state
//    position is the one they continue from (it is at the seq the stream had
//    reached at event n, same epoch, not resyncing), or it keeps none at all;
//  - 'caught-up': the client's catch-up (the thread's), then the logged events
//    after n that are not sequenced ones, and the sequenced ones past where the
//    catch-up left their line: deltas never replay on a wrong base, and none
//    the catch-up did not cover is left out;
//  - 'lost': events after n were already dropped: the catch-up, one CUSTOM
//    EVENTS_LOST, then every logged event that is not a sequenced one.
// Events written only for this connection (the catch-up, the notice) carry the
// id "<key>:<n>" again: a client cut during them resumes from the same point.
#include <nlohmann/json.hpp>

#include <map>

#include "run/event_lanes.h"
#include "run/run_life.h"
#include "wire/wire_meta.h"

namespace agui_sync::run {

using nlohmann::json;

namespace {

// A logged event's JSON text: its framed text without "id: ...\ndata: " and the closing blank line.
std::string loggedText(const LogEntry& entry) {
  size_t start = entry.text.find("\ndata: ");
  if (start == std::string::npos || entry.text.size() < start + 9) return std::string();
  start += 7;
  return entry.text.substr(start, entry.text.size() - 2 - start);
}

json loggedEvent(const LogEntry& entry) { return json::parse(loggedText(entry), nullptr, false); }

// A sequenced line's position: the state's ("") or an activity's (its messageId).
struct LinePosition {
  std::optional<int64_t> seq;
  std::optional<std::string> epoch;
};
using Lines = std::map<std::string, LinePosition>;

// The line a sequenced event is on, and its seq and epoch; false when it names none.
bool lineOf(const json& event, std::string& line, LinePosition& at) {
  if (!event.is_object()) return false;
  const std::string type = event.value("type", "");
  if (type == "ACTIVITY_SNAPSHOT" || type == "ACTIVITY_DELTA") {
    auto id = event.find("messageId");
    if (id == event.end() || !id->is_string()) return false;
    line = id->get<std::string>();
  } else if (type == "STATE_SNAPSHOT" || type == "STATE_DELTA") {
    line.clear();
  } else {
    return false;
  }
  auto seq = wireSeq(event);
  const json* wire = wireFields(event);
  if (!seq || wire == nullptr) return false;
  at.seq = static_cast<int64_t>(*seq);
  auto epoch = wire->find("epoch");
  if (epoch != wire->end() && epoch->is_string()) at.epoch = epoch->get<std::string>();
  return true;
}

// Where a client is on each line once its catch-up is applied: its catch-up's
// last event of a line, else where it said it was.
Lines caughtUpLines(const std::vector<std::string>& catchUp, const Position& p) {
  Lines lines;
  if (p.lastSeq) lines[""] = LinePosition{p.lastSeq, p.epoch};
  for (const auto& [id, at] : p.activityAt)
    if (at.first) lines[id] = LinePosition{at.first, at.second};
  for (const std::string& text : catchUp) {
    std::string line;
    LinePosition at;
    std::string type;
    if (lineOf(envelope(text, type), line, at)) lines[line] = at;
  }
  return lines;
}

// A sequenced logged event a caught-up client still needs: one past where its
// catch-up left that line, in the same epoch. (A followed copy's catch-up is
// read from the store, which may be behind the copy's log: what the log has
// past it must still reach the client, or its last change of an activity,
// which no heartbeat names, would never come.)
bool pastCatchUp(const LogEntry& entry, const Lines& lines) {
  std::string line;
  LinePosition at;
  std::string type;
  if (!lineOf(envelope(loggedText(entry), type), line, at)) return false;
  auto held = lines.find(line);
  if (held == lines.end() || !held->second.seq) return false;
  return at.epoch == held->second.epoch && *at.seq > *held->second.seq;
}

Action refuse(int64_t client, int status, const char* code, std::string message) {
  Action a = toClient(Do::Refuse, client);
  a.status = status;
  a.code = code;
  a.text = std::move(message);
  return a;
}

}  // namespace

// True when replaying the logged events after n verbatim leaves this client consistent,
// and, for a run that ended, current: once the thread moved on past the run's last
// state (another run's writes, a lost run's last write), the client is caught up on
// the thread instead. So is a client of an ended run that keeps activities: another
// run may have moved one without moving the state, and the log cannot tell.
static bool fitsExactly(const RunLog& log, const Join& join, bool ended) {
  const Position& p = join.position;
  if (p.activityResyncing || (ended && p.activities)) return false;
  if (ended && join.seq) {
    auto [known, last] = log.seqAt(log.lastN());
    if (!known || (last && *last != *join.seq)) return false;
  }
  if (!p.lastSeq && !p.epoch && !p.reason) return !join.attach;  // keeps no state position
  if (p.reason) return false;
  auto [known, seq] = log.seqAt(join.afterN);
  return known && seq && p.lastSeq && *seq == *p.lastSeq && p.epoch && join.epoch && *p.epoch == *join.epoch;
}

std::vector<Action> RunLife::join(const Join& join) {
  std::vector<Action> out;
  if (join.starter) {  // the run's own client: everything, live
    clients_.insert(join.client);
    return out;
  }
  if (join.afterN > log_.lastN()) {
    out.push_back(refuse(join.client, 400, "invalid-request", "Last-Event-ID names an event this stream has not sent"));
    return out;
  }
  if (clients_.size() >= config_.maxClients) {
    out.push_back(refuse(join.client, 503, "limit-exceeded", "the run has " + std::to_string(config_.maxClients) + " connections attached"));
    return out;
  }
  if (!started() && join.attach) {  // its catch-up must follow RUN_STARTED: it joins once that is out
    waiting_.insert(join.client);
    return out;
  }
  if (!started()) {  // the run's own client, back before RUN_STARTED: the run's catch-up becomes its own
    const bool exact = fitsExactly(log_, join, ended_);
    if (armed_) {
      armed_ = false;
      out.push_back(Action(Do::Disarm));
    }
    Action head = toClient(Do::Head, join.client);
    head.text = exact ? "exact" : "caught-up";
    out.push_back(std::move(head));
    if (!exact) out.push_back(toClient(Do::Defer, join.client));
    clients_.insert(join.client);
    return out;
  }
  std::string mode;
  bool needCatchUp = false;
  std::string text = preamble(join, mode, needCatchUp);
  if (needCatchUp) {
    out.push_back(toClient(Do::CatchUp, join.client));
    return out;
  }
  if (armed_) {
    armed_ = false;
    out.push_back(Action(Do::Disarm));
  }
  Action head = toClient(Do::Head, join.client);
  head.text = mode;
  out.push_back(std::move(head));
  Action send = toClient(Do::Send, join.client);
  send.text = std::move(text) + heartbeatLine();
  out.push_back(std::move(send));
  if (ended_) out.push_back(toClient(Do::Close, join.client));
  else clients_.insert(join.client);
  return out;
}

// The text that brings a client resuming after event n up to date; needCatchUp
// when it takes the thread's catch-up and the join did not bring it yet.
std::string RunLife::preamble(const Join& join, std::string& mode, bool& needCatchUp) {
  const uint64_t n = join.afterN;
  auto entries = log_.after(n);
  std::vector<std::string> parts;
  bool nothingLeft = entries && entries->empty();
  if (entries && fitsExactly(log_, join, ended_)) {
    mode = "exact";
    for (const LogEntry* e : *entries) parts.push_back(e->text);
  } else {
    if (!join.catchUp) {
      needCatchUp = true;
      return "";
    }
    mode = entries ? "caught-up" : "lost";
    std::vector<std::string> catchUp;
    for (const auto& event : *join.catchUp) catchUp.push_back(frameText(config_.key, n, event));
    if (!entries) {
      catchUp.push_back(frameText(config_.key, n, "{\"type\":\"CUSTOM\",\"name\":\"agui-state-sync.events-lost\",\"value\":{\"after\":" +
                                                      std::to_string(n) + ",\"resumedAt\":" + std::to_string(log_.firstN()) + "}}"));
    }
    std::vector<const LogEntry*> rest = entries ? *entries : log_.all();
    bool startedHeld = false;
    for (const LogEntry* e : rest) startedHeld = startedHeld || e->n == startedN_;
    // AG-UI clients take nothing before RUN_STARTED: one that has not seen it gets it first, its catch-up right after.
    if (!startedHeld) parts = catchUp;
    bool fresh = join.attach && n == 0;  // a client that saw nothing of this run
    if (fresh && !startedHeld && startedN_ > 0) parts.insert(parts.begin(), startedText_);
    std::optional<OpenLanes> lanes;
    if (fresh && !entries) lanes.emplace();
    const Lines lines = caughtUpLines(*join.catchUp, join.position);
    for (const LogEntry* e : rest) {
      if (e->sequenced ? !pastCatchUp(*e, lines) : (lanes && !lanes->see(loggedEvent(*e)))) continue;
      parts.push_back(e->text);
      if (e->n == startedN_) parts.insert(parts.end(), catchUp.begin(), catchUp.end());
    }
    nothingLeft = rest.empty();
  }
  // A run that is over and fully delivered repeats its terminal event: a client cut right after it learns the run ended.
  const LogEntry* last = log_.last();
  if (finished_ && nothingLeft && last && last->terminal) parts.push_back(last->text);
  std::string text;
  for (const auto& part : parts) text += part;
  return text;
}

std::vector<Action> RunLife::left(int64_t client, int64_t now) {
  std::vector<Action> out;
  waiting_.erase(client);
  if (clients_.erase(client) == 0 || !clients_.empty() || finished_ || config_.keep) return out;
  arm(now + config_.graceMs, out);
  return out;
}

// The grace period runs until `deadline`: the driver steps timer() then.
void RunLife::arm(int64_t deadline, std::vector<Action>& out) {
  armed_ = true;
  deadline_ = deadline;
  Action a(Do::Arm);
  a.at = deadline;
  out.push_back(std::move(a));
}

std::vector<Action> RunLife::timer(int64_t now) {
  std::vector<Action> out;
  if (!armed_ || finished_) return out;
  if (now < deadline_) {  // woken early: the same deadline stands
    arm(deadline_, out);
    return out;
  }
  armed_ = false;
  if (!clients_.empty() || !waiting_.empty()) return out;
  if (config_.followed) {  // the run goes on at its holder: the copy here is dropped
    out.push_back(Action(Do::StopUpstream));
    finished_ = ended_ = true;
    out.push_back(Action(Do::Done));
  } else if (config_.stored) {
    out.push_back(Action(Do::AskPresent));
  } else {
    abandon(out);
  }
  return out;
}

std::vector<Action> RunLife::present(bool elsewhere, int64_t now) {
  std::vector<Action> out;
  // (A followed copy never asks: the run goes on at its holder, which alone may abandon it.)
  if (finished_ || !clients_.empty() || config_.followed) return out;
  if (!elsewhere) {
    abandon(out);
    return out;
  }
  arm(now + config_.graceMs, out);
  return out;
}

void RunLife::abandon(std::vector<Action>& out) {
  out.push_back(Action(Do::StopUpstream));
  std::string why = "no client reconnected within " + std::to_string(config_.graceMs) + " ms";
  finish(runErrorText("run-aborted", why), out);
}

std::vector<Action> RunLife::abort(const std::string& reason, const std::string& requester) {
  std::vector<Action> out;
  if (finished_) return out;
  if (reason == "client" && requester != config_.requester) {
    out.push_back(refuse(0, 403, "not-authorized", "only the requester that started the run may abort it"));
    return out;
  }
  if (config_.followed) {
    if (reason == "client") {
      out.push_back(Action(Do::AskAbort));
      return out;
    }
    out.push_back(Action(Do::StopUpstream));
    endStream(out);  // this process shuts down: its clients resume elsewhere
    return out;
  }
  out.push_back(Action(Do::StopUpstream));
  finish(runErrorText("run-aborted", reason == "client" ? "the run was aborted by the client" : "the server is shutting down"), out);
  return out;
}

std::vector<Action> RunLife::heartbeat() const {
  std::vector<Action> out;
  if (clients_.empty() || ended_) return out;
  Action a(Do::Send);
  a.clients.assign(clients_.begin(), clients_.end());
  a.text = heartbeatLine();
  out.push_back(std::move(a));
  return out;
}

}  // namespace agui_sync::run
