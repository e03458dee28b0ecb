#include "run/run_log.h"

namespace agui_sync::run {

std::string entryFlags(const LogEntry& entry) {
  std::string flags;
  if (entry.sequenced) flags += 's';
  if (entry.terminal) flags += 't';
  if (entry.started) flags += 'r';
  return flags;
}

std::string frameText(const std::string& key, uint64_t n, const std::string& data) {
  return "id: " + key + ":" + std::to_string(n) + "\ndata: " + data + "\n\n";
}

void RunLog::startAfter(uint64_t n, std::optional<int64_t> seq) {
  if (!entries_.empty() || lastN_ > 0) return;
  lastN_ = n;
  trimmedSeq_ = seq;
}

void RunLog::append(LogEntry entry) {
  bytes_ += entry.text.size();
  lastN_ = entry.n;
  entries_.push_back(std::move(entry));
}

std::optional<std::vector<const LogEntry*>> RunLog::after(uint64_t n) const {
  if (n + 1 < firstN()) return std::nullopt;
  std::vector<const LogEntry*> out;
  for (size_t i = n + 1 - firstN(); i < entries_.size(); ++i) out.push_back(&entries_[i]);
  return out;
}

std::vector<const LogEntry*> RunLog::all() const {
  std::vector<const LogEntry*> out;
  out.reserve(entries_.size());
  for (const auto& entry : entries_) out.push_back(&entry);
  return out;
}

std::pair<bool, std::optional<int64_t>> RunLog::seqAt(uint64_t n) const {
  if (n == 0) return {true, std::nullopt};
  if (n > lastN_) return {false, std::nullopt};
  if (n < firstN()) return {n == firstN() - 1, n == firstN() - 1 ? trimmedSeq_ : std::nullopt};
  return {true, entries_[n - firstN()].seq};
}

void RunLog::trim(size_t maxEvents, size_t maxBytes) {
  while (entries_.size() > 1 && (entries_.size() > maxEvents || bytes_ > maxBytes)) {
    bytes_ -= entries_.front().text.size();
    trimmedSeq_ = entries_.front().seq;
    entries_.pop_front();
  }
}

void RunLog::clear() {
  if (!entries_.empty()) trimmedSeq_ = entries_.back().seq;
  entries_.clear();
  bytes_ = 0;
}

}  // namespace agui_sync::run
