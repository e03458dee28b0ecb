#pragma once
// What one run's stream has sent, for Last-Event-ID resumption: the framed
// bytes of each event in order ("id: <key>:<n>\ndata: <json>\n\n"), with the
// state position a client holds once it has received that event. Bounded by
// events and bytes: the oldest entries go first, and a resume from before the
// oldest one held is told so (after() answers nullopt).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace agui_sync::run {

// One sent event. `seq`: the seq a client holds after it (nullopt: no position yet).
struct LogEntry {
  uint64_t n = 0;
  std::string text;
  std::optional<int64_t> seq;
  bool sequenced = false;  // a state or activity event the sequencer stamped ("s")
  bool terminal = false;   // RUN_FINISHED / RUN_ERROR ("t")
  bool started = false;    // the run's first RUN_STARTED ("r")
};

// The store's flags string for an entry ("s", "t", "r", in that order), as run-append.lua keeps it.
std::string entryFlags(const LogEntry& entry);

// One framed event: "id: <key>:<n>\ndata: <json>\n\n" (JSON text holds no raw line break).
std::string frameText(const std::string& key, uint64_t n, const std::string& data);

class RunLog {
 public:
  uint64_t lastN() const { return lastN_; }
  uint64_t firstN() const { return entries_.empty() ? lastN_ + 1 : entries_.front().n; }
  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }
  const LogEntry* last() const { return entries_.empty() ? nullptr : &entries_.back(); }

  // A log that begins after event n, where a client held `seq` (a stored log already trimmed).
  void startAfter(uint64_t n, std::optional<int64_t> seq);
  void append(LogEntry entry);
  // The entries after event n, oldest first; nullopt when some were trimmed (a resume cannot be exact).
  std::optional<std::vector<const LogEntry*>> after(uint64_t n) const;
  std::vector<const LogEntry*> all() const;
  // The seq after event n: {known, seq}; known is false when n was trimmed long ago or never sent.
  std::pair<bool, std::optional<int64_t>> seqAt(uint64_t n) const;
  // Drops the oldest entries while more than maxEvents or maxBytes are held (the newest always stays).
  void trim(size_t maxEvents, size_t maxBytes);
  void clear();

 private:
  std::deque<LogEntry> entries_;
  uint64_t lastN_ = 0;
  size_t bytes_ = 0;
  std::optional<int64_t> trimmedSeq_;  // seq after the newest trimmed entry
};

}  // namespace agui_sync::run
