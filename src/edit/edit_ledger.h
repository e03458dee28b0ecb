#pragma once
// The sender's memory for user edits (edits.h, docs/wire.md section 9):
//  - the change log: which pointers each recent seq wrote, and who wrote them
//    ("" = the agent, else an edit's origin), for the three-way check: an edit
//    made at baseSeq conflicts only with writes since baseSeq;
//  - the verdicts: every edit's ack by editId, so that an edit re-sent after a
//    reconnect applies once and its ack can be sent again.
//  - provenance: which pointers a client edit wrote last (the agent has not
//    overwritten them since), so a prompt can mark user-written text untrusted.
// All are bounded. Past the change log's reach the history is unknown, and an
// edit made there counts as overlapping (the safe answer); an edit whose
// verdict was forgotten would be judged afresh.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/edits.h>

#include "json/json_pointer.h"

namespace agui_sync {

class EditLedger {
 public:
  EditLedger(uint64_t startSeq, size_t maxChanges, size_t maxVerdicts)
      : floor_(startSeq), startSeq_(startSeq), maxChanges_(maxChanges), maxVerdicts_(maxVerdicts) {}

  // Writes made by `origin` at `seq` (writesOf()); the agent's also end the
  // provenance of client-written values there.
  void recordWrites(uint64_t seq, const std::string& origin, std::vector<Tokens> paths);
  void record(uint64_t seq, const std::string& origin, std::vector<Tokens> paths);
  // The change log starts over: every write after `floor` is recorded next.
  void restartChanges(uint64_t floor) {
    changes_.clear();
    floor_ = floor;
  }

  // Someone other than `origin` wrote a pointer overlapping one of `paths` after
  // `baseSeq` (null: the edit had no position) -- or the history cannot tell.
  bool writtenSince(std::optional<uint64_t> baseSeq, uint64_t currentSeq, const std::string& origin,
                    const std::vector<Tokens>& paths) const;

  // Provenance (see top): an edit by `origin` wrote `paths` at `seq`; the agent
  // wrote `paths` (which it then owns again, subtrees included).
  void noteClientWrites(const std::vector<Tokens>& paths, const std::string& origin, uint64_t seq);
  void noteAgentWrites(const std::vector<Tokens>& paths);
  struct ClientWrite {
    std::string origin;
    uint64_t seq = 0;
  };
  // Pointer -> its last client writer, at most maxProvenance of them (the
  // oldest forgotten first).
  const std::map<std::string, ClientWrite>& clientWrites() const { return clientWrites_; }

  const EditAck* verdict(const std::string& editId) const;
  void remember(const EditAck& ack);
  // The verdicts given after `since` (all remembered ones when null), the most
  // recent `max` of them, oldest first, as metadata.acks entries with seq.
  nlohmann::json acksSince(std::optional<uint64_t> since, size_t max) const;

 private:
  struct Change {
    uint64_t seq;
    std::string origin;
    // The written pointers, each as [uint32 length][pointer text]: one
    // allocation per seq, read back only when an edit is judged.
    std::string paths;
  };
  std::deque<Change> changes_;
  uint64_t floor_;  // every write after this seq is in changes_
  uint64_t startSeq_;
  size_t maxChanges_;
  size_t maxVerdicts_;
  std::unordered_map<std::string, EditAck> verdicts_;
  std::deque<std::string> verdictOrder_;  // oldest first, for eviction and acksSince
  std::map<std::string, ClientWrite> clientWrites_;  // by pointer text: a subtree is a contiguous range
  static constexpr size_t kMaxProvenance = 1024;
};

}  // namespace agui_sync
