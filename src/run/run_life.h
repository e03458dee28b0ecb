#pragma once
// The life of one run's stream, decided once for the Node proxy and the Python
// middleware (docs/architecture.md#a-runs-life-the-run-machine), in the
// sans-I/O shape of h11: each step takes what happened (an event from the
// agent, a client came or went, the store answered, a timer fired) and
// returns what to do, in order. The driver owns the sockets, the store, the
// clock and the agent's task; this never waits, never reads a clock, and
// never fails across its boundary.
//
// Two kinds of run share it:
//  - held: this process runs the agent. Its events are numbered and framed
//    ("id: <key>:<n>"), committed (appended to the store first when the run's
//    log is stored), then published to every attached client;
//  - followed: another instance holds it; its stored log's entries arrive as
//    read, and are published as they are.
// A client that leaves is not an abort: once none is left, the grace period
// starts; when it is over with still none here (and, for a stored log, none at
// another instance), a held run is aborted ('run-aborted') and a followed copy
// dropped. A run that carries a consumed approval is never abandoned: its
// effect completes once, whoever is still reading.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run_log.h"

namespace agui_sync::run {

struct RunConfig {
  std::string key;             // the stream key in every event id
  std::string requester;       // the starter's requester digest: an abort must come from it
  bool stored = false;         // the log is committed to a store before it is published
  bool followed = false;       // another instance holds the agent (entries come from its log)
  bool keep = false;           // carries a consumed approval: never abandoned
  int64_t graceMs = 30000;
  size_t maxEvents = 10000;
  size_t maxBytes = 8u << 20;
  size_t maxClients = 64;
};

// Where a resuming client says its state is (X-AGUI-State-* / forwardedProps.stateSync).
// An event's type (also into `type`), messageId and metadata from its JSON text,
// the rest skipped unbuilt (run_life.cpp).
nlohmann::json envelope(const std::string& text, std::string& type);

struct Position {
  std::optional<int64_t> lastSeq;
  std::optional<std::string> epoch;
  std::optional<std::string> reason;
  bool activityResyncing = false;  // one of its activities says it resyncs
  bool activities = false;         // it keeps activity positions
  // Where it says each activity is (messageId -> lastSeq, epoch), as far as it says.
  std::map<std::string, std::pair<std::optional<int64_t>, std::optional<std::string>>> activityAt;
};

struct Join {
  int64_t client = 0;
  uint64_t afterN = 0;      // Last-Event-ID's n (0: from the start)
  bool attach = false;      // X-AGUI-Attach rather than a resume of its own stream
  bool starter = false;     // the run's own first client: everything, live, no preamble
  Position position;
  std::optional<std::string> epoch;                       // the thread's epoch now
  std::optional<int64_t> seq;                             // the thread's seq now
  std::optional<std::vector<std::string>> catchUp;        // the client's catch-up events (JSON), once asked
};

enum class Do {
  Send,          // write `text` to `clients`
  Head,          // answer `client`'s request: 200, X-AGUI-Resume: `mode` (before its first Send)
  Append,        // commit `entries` to the store, then step committed(lastN)
  CatchUp,       // compute `client`'s catch-up (its Join's position) and join it again with it
  Rejoin,        // `client` waited for RUN_STARTED: join it again now
  Arm,           // step timer() once the clock reaches `at` (one timer: a new Arm replaces it)
  Disarm,
  AskPresent,    // stored: is a client of this run served at another instance? step present()
  StopUpstream,  // cancel the agent's run (held) / stop following the stored log (followed)
  AskAbort,      // followed: ask the holder to abort, through the store
  Close,         // end `clients`' streams (after what was sent)
  Refuse,        // answer `client` with `status` `code` `message`; nothing of the run was sent
  Defer,         // `client` resumed before RUN_STARTED: the run's own catch-up is now for its position
  Started,       // the run's RUN_STARTED is out
  Done,          // the run is over and delivered (or dropped): forget it
};

struct Action {
  explicit Action(Do w) : what(w) {}
  Do what;
  std::vector<int64_t> clients;
  std::string text;   // Send: bytes; Head: mode; Refuse: message
  std::string code;   // Refuse
  int status = 0;     // Refuse
  int64_t at = 0;     // Arm
  std::vector<const LogEntry*> entries;  // Append (valid until the next step)
};

// An action addressed to one client.
inline Action toClient(Do what, int64_t client) {
  Action a(what);
  a.clients = {client};
  return a;
}

class RunLife {
 public:
  explicit RunLife(RunConfig config);

  // Held: an event the agent's run produced, stamped (its JSON text). The
  // type and the wire seq are read from it: nothing the driver claims.
  std::vector<Action> event(const std::string& json);
  // A comment line from the agent's stream (a heartbeat after a catch-up): live clients only.
  std::vector<Action> comment(const std::string& line);
  // Held: the agent's run ended (`failure`: why it failed, or nullopt; `code`: upstream-failed | engine-failed).
  std::vector<Action> ended(const std::optional<std::string>& failure, const std::string& code = "upstream-failed");
  // Held: where the stream's state position stands now without a state event (a catch-up that was empty).
  void position(std::optional<int64_t> seq) { seq_ = seq; }
  // The log's bytes over `toBytes` are dropped, oldest first (the newest stays): the bytes freed.
  size_t trim(size_t toBytes);
  size_t clear();
  // Held, stored: the store took the appended entries through n (a lease it refused is lost()).
  std::vector<Action> committed(uint64_t throughN);
  // The stored log is lost: `tail` are the entries the store ends it with (its run-lost RUN_ERROR).
  std::vector<Action> lost(std::vector<LogEntry> tail);
  // Followed: entries of the stored log, in order (`startedText`: the run's RUN_STARTED when trimmed there).
  std::vector<Action> logged(std::vector<LogEntry> entries);
  void seed(uint64_t afterN, std::optional<int64_t> seq, uint64_t startedN, const std::string& startedText);

  std::vector<Action> join(const Join& join);
  std::vector<Action> left(int64_t client, int64_t now);
  std::vector<Action> timer(int64_t now);
  std::vector<Action> present(bool elsewhere, int64_t now);
  // reason: "client" (X-AGUI-Abort: `requester` must be the starter's), "closed" (shutdown).
  std::vector<Action> abort(const std::string& reason, const std::string& requester);
  std::vector<Action> heartbeat() const;

  const RunLog& log() const { return log_; }
  bool finished() const { return finished_; }
  bool started() const { return startedN_ > 0 || ended_; }
  uint64_t startedN() const { return startedN_; }
  std::optional<int64_t> sentSeq() const { return sentSeq_; }
  bool ended() const { return ended_; }
  uint64_t framedN() const { return nextN_ - 1; }
  size_t clientCount() const { return clients_.size(); }

 private:
  void frame(const std::string& json, std::vector<Action>& out);
  void commit(LogEntry entry, std::vector<Action>& out);
  void publish(LogEntry entry, std::vector<Action>& out);
  void flushAppend(std::vector<Action>& out);
  void finish(const std::optional<std::string>& terminalJson, std::vector<Action>& out);
  void endStream(std::vector<Action>& out);
  void abandon(std::vector<Action>& out);
  void arm(int64_t deadline, std::vector<Action>& out);
  std::string preamble(const Join& join, std::string& mode, bool& needCatchUp);
  std::string heartbeatLine() const;
  static std::string runErrorText(const std::string& code, const std::string& message);

  RunConfig config_;
  RunLog log_;
  std::vector<LogEntry> uncommitted_;  // stored: appended, not yet confirmed
  std::vector<LogEntry> appending_;    // the batch the driver is appending now
  std::vector<std::pair<uint64_t, std::string>> comments_;  // stored: lines held until entry n is published
  std::set<int64_t> clients_;
  std::set<int64_t> waiting_;          // joined before RUN_STARTED
  uint64_t nextN_ = 1;
  uint64_t startedN_ = 0;
  std::string startedText_;
  std::optional<int64_t> seq_;         // after the last event framed
  std::optional<int64_t> sentSeq_;     // after the last event published
  bool sawTerminal_ = false;
  bool startedPending_ = false;       // the first RUN_STARTED is framed (maybe not committed yet)
  bool finished_ = false;              // no event will be added
  bool ended_ = false;                 // ...and every one is published: streams are closed
  bool armed_ = false;
  int64_t deadline_ = 0;
};

}  // namespace agui_sync::run
