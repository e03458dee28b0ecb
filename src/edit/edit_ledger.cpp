#include "edit/edit_ledger.h"

#include "edit/edit_acks.h"
#include "edit/edit_paths.h"

namespace agui_sync {

using nlohmann::json;

namespace {


void pack(const Tokens& path, std::string& out) {
  const std::string text = formatPointer(path);
  const uint32_t n = static_cast<uint32_t>(text.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += text;
}

// Calls fn(tokens) for each packed pointer until it returns true.
template <typename Fn>
bool anyPacked(const std::string& packed, Fn fn) {
  Tokens tokens;
  std::string error;
  for (size_t at = 0; at + sizeof(uint32_t) <= packed.size();) {
    uint32_t n = 0;
    packed.copy(reinterpret_cast<char*>(&n), sizeof n, at);
    at += sizeof n;
    tokens.clear();
    if (parsePointer(std::string_view(packed).substr(at, n), tokens, error) && fn(tokens)) return true;
    at += n;
  }
  return false;
}

// Erases `pointer` and every pointer below it ("/a" covers "/a/b", not "/ab").
// Below "/a" is exactly the key range ["/a/", "/a0"): '0' follows '/'.
void eraseSubtree(std::map<std::string, EditLedger::ClientWrite>& writes, const std::string& pointer) {
  if (pointer.empty()) return writes.clear();
  writes.erase(pointer);
  writes.erase(writes.lower_bound(pointer + "/"), writes.lower_bound(pointer + "0"));
}

}  // namespace

void EditLedger::noteClientWrites(const std::vector<Tokens>& paths, const std::string& origin, uint64_t seq) {
  for (const Tokens& p : paths) {
    const std::string pointer = formatPointer(p);
    eraseSubtree(clientWrites_, pointer);
    clientWrites_[pointer] = ClientWrite{origin, seq};
  }
  while (clientWrites_.size() > kMaxProvenance) {
    auto oldest = clientWrites_.begin();
    for (auto it = clientWrites_.begin(); it != clientWrites_.end(); ++it)
      if (it->second.seq < oldest->second.seq) oldest = it;
    clientWrites_.erase(oldest);
  }
}

void EditLedger::noteAgentWrites(const std::vector<Tokens>& paths) {
  if (clientWrites_.empty()) return;
  for (const Tokens& p : paths) eraseSubtree(clientWrites_, formatPointer(p));
}

void EditLedger::recordWrites(uint64_t seq, const std::string& origin, std::vector<Tokens> paths) {
  if (origin.empty()) noteAgentWrites(paths);
  record(seq, origin, std::move(paths));
}

void EditLedger::record(uint64_t seq, const std::string& origin, std::vector<Tokens> paths) {
  if (maxChanges_ == 0) {
    floor_ = seq;
    return;
  }
  std::string packed;
  for (const Tokens& p : paths) pack(p, packed);
  changes_.push_back(Change{seq, origin, std::move(packed)});
  while (changes_.size() > maxChanges_) {
    floor_ = changes_.front().seq;
    changes_.pop_front();
  }
}

bool EditLedger::writtenSince(std::optional<uint64_t> baseSeq, uint64_t currentSeq, const std::string& origin,
                              const std::vector<Tokens>& paths) const {
  const uint64_t from = baseSeq ? *baseSeq : startSeq_;
  if (from < floor_ || from > currentSeq) return true;  // history unknown: assume the worst
  for (auto it = changes_.rbegin(); it != changes_.rend() && it->seq > from; ++it) {
    if (it->origin == origin) continue;
    const bool hit = anyPacked(it->paths, [&](const Tokens& written) {
      for (const Tokens& p : paths)
        if (overlaps(written, p)) return true;
      return false;
    });
    if (hit) return true;
  }
  return false;
}

const EditAck* EditLedger::verdict(const std::string& editId) const {
  auto it = verdicts_.find(editId);
  return it == verdicts_.end() ? nullptr : &it->second;
}

void EditLedger::remember(const EditAck& ack) {
  if (maxVerdicts_ == 0) return;
  if (!verdicts_.emplace(ack.editId, ack).second) return;
  verdictOrder_.push_back(ack.editId);
  while (verdictOrder_.size() > maxVerdicts_) {
    verdicts_.erase(verdictOrder_.front());
    verdictOrder_.pop_front();
  }
}

json EditLedger::acksSince(std::optional<uint64_t> since, size_t max) const {
  std::vector<const EditAck*> picked;
  for (auto it = verdictOrder_.rbegin(); it != verdictOrder_.rend() && picked.size() < max; ++it) {
    const EditAck& ack = verdicts_.at(*it);
    if (since && ack.seq && *ack.seq <= *since) break;  // verdicts are remembered in seq order
    picked.push_back(&ack);
  }
  json out(json::value_t::array);
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) out.push_back(ackJson(**it, true));
  return out;
}

}  // namespace agui_sync
