#include "edit/edit_layer.h"
#include "json/cold.h"

#include <algorithm>

#include "json/json_measure.h"
#include "json/json_write.h"
#include "wire/patch_code.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

std::optional<json> valueAt(const json& doc, const Tokens& path) {
  const json* v = resolvePointer(doc, path, path.size());
  return v ? std::optional<json>(*v) : std::nullopt;
}

std::optional<uint64_t> hashAt(const json& doc, const Tokens& path) {
  const json* v = resolvePointer(doc, path, path.size());
  return v ? std::optional<uint64_t>(contentHash(*v)) : std::nullopt;
}

// Every value here came through the engine's reader (the state, an edit's ops),
// so its strings are valid UTF-8 and the writer needs no replacement policy.
std::optional<std::string> optionalJsonText(const std::optional<json>& v) {
  return v ? std::optional<std::string>(jsonText(*v)) : std::nullopt;
}

Outcome editOutcome(OutcomeKind kind, const std::string& editId) {
  Outcome o;
  o.kind = kind;
  o.editId = editId;
  return o;
}

}  // namespace

AGUI_COLD bool EditLayer::configure(const EditPolicy& policy, std::string clientId, std::string& error) {
  if (!owners_.assign(policy.ownership, error)) return false;
  onConflict_ = policy.onConflict;
  clientId_ = std::move(clientId);
  return true;
}

AGUI_COLD void EditLayer::detach(json& doc) {
  (void)doc;  // each transaction holds its own reference to the document
  for (auto it = edits_.rbegin(); it != edits_.rend(); ++it) {
    if (!it->tx) continue;
    it->tx->rollback();
    it->tx.reset();
  }
}

AGUI_COLD bool EditLayer::applyEdit(json& doc, Edit& e, PatchResult* result) {
  auto tx = std::make_unique<PatchTransaction>(doc, maxDepth_);
  PatchResult r = tx->apply(e.ops);  // a copy: the edit is replayed again after every agent event
  if (result) *result = r;
  e.info.applies = r.ok();
  if (r.ok()) e.tx = std::move(tx);
  return r.ok();
}

AGUI_COLD void EditLayer::attach(json& doc) {
  for (Edit& e : edits_)
    if (!e.tx) applyEdit(doc, e);
}

AGUI_COLD std::optional<Failure> EditLayer::check(const json& doc, const json& ops, PatchOps& parsed,
                                        std::vector<Write>& writes) const {
  if (edits_.size() >= kMaxPendingEdits)
    return Failure{Code::LimitExceeded, "too many pending edits (" + std::to_string(kMaxPendingEdits) + ")", std::nullopt};
  if (ops.is_array() && serializedSize(ops, maxEditBytes_ + 1) > maxEditBytes_)
    return Failure{Code::LimitExceeded, "the edit is larger than maxEventBytes", std::nullopt};
  PatchResult r = toPatchOps(ops, parsed);
  if (!r.ok()) return Failure{patchCode(r.status), r.message, r.opIndex};
  if (parsed.empty()) return Failure{Code::InvalidPatch, "an edit needs at least one operation", std::nullopt};
  std::vector<std::pair<Tokens, size_t>> written;
  editWrites(doc, parsed, written);
  for (auto& [path, index] : written) {
    const Owner owner = owners_.writeOwner(path);
    if (owner == Owner::Agent)
      return Failure{Code::AgentOwned, "op " + std::to_string(index) + " writes '" + formatPointer(path) +
                                           "', which the agent owns", index};
    writes.push_back(Write{std::move(path), owner, std::nullopt, std::nullopt, std::nullopt});
  }
  return std::nullopt;
}

// The values an applied edit left where it writes (one pointer walk each).
AGUI_COLD void EditLayer::readMine(const json& doc, std::vector<Write>& writes) {
  for (Write& w : writes) {
    const json* v = resolvePointer(doc, w.path, w.path.size());
    w.mine = v ? std::optional<json>(*v) : std::nullopt;
    w.mineHash = v ? std::optional<uint64_t>(contentHash(*v)) : std::nullopt;
  }
}

// The agent's values where the new edit writes: read with the pending edits
// rolled back, since an earlier pending edit may have changed those places.
AGUI_COLD void EditLayer::readBases(json& doc, std::vector<Write>& writes) {
  detach(doc);
  for (Write& w : writes) w.base = hashAt(doc, w.path);
  attach(doc);
}

AGUI_COLD std::optional<Failure> EditLayer::edit(json& doc, json ops, std::optional<uint64_t> baseSeq, std::string& editId) {
  // A checkpoint stores the counter as a seq (readCheckpoint refuses more):
  // one past it would make the engine's own checkpoint unrestorable.
  if (counter_ >= kMaxSeq)
    return Failure{Code::LimitExceeded, "no editId left: the edit counter reached 2^53-1", std::nullopt};
  Edit e;
  if (auto failure = check(doc, ops, e.ops, e.writes)) return failure;
  readBases(doc, e.writes);
  PatchResult r;
  if (!applyEdit(doc, e, &r)) return Failure{patchCode(r.status), r.message, r.opIndex};
  readMine(doc, e.writes);
  e.info.editId = clientId_ + ":" + std::to_string(++counter_);
  e.info.baseSeq = baseSeq;
  e.info.ops = std::move(ops);
  editId = e.info.editId;
  edits_.push_back(std::move(e));
  return std::nullopt;
}

AGUI_COLD void EditLayer::restore(json& doc, std::vector<PendingEdit> edits, std::string clientId, uint64_t counter,
                                  std::vector<Outcome>& out) {
  detach(doc);
  edits_.clear();
  if (!clientId.empty()) clientId_ = std::move(clientId);
  counter_ = counter;
  for (PendingEdit& stored : edits) {
    Edit e;
    if (auto failure = check(doc, stored.ops, e.ops, e.writes)) {
      Outcome o = editOutcome(OutcomeKind::EditRejected, stored.editId);
      o.reason = failure->code;
      out.push_back(std::move(o));
      continue;
    }
    readBases(doc, e.writes);
    applyEdit(doc, e);  // one that no longer applies stays pending, skipped
    readMine(doc, e.writes);
    e.info.editId = std::move(stored.editId);
    e.info.baseSeq = stored.baseSeq;
    e.info.ops = std::move(stored.ops);
    edits_.push_back(std::move(e));
  }
}

AGUI_COLD std::vector<PendingEdit> EditLayer::pending() const {
  std::vector<PendingEdit> out;
  out.reserve(edits_.size());
  for (const Edit& e : edits_) out.push_back(e.info);
  return out;
}

AGUI_COLD bool EditLayer::pendingAt(const Tokens& path) const {
  for (const Edit& e : edits_)
    for (const Write& w : e.writes)
      if (overlaps(w.path, path)) return true;
  return false;
}

AGUI_COLD void EditLayer::rebase(const json& doc, std::vector<Outcome>& out, size_t from) {
  if (from >= out.size()) return;
  std::vector<Outcome> tail(std::make_move_iterator(out.begin() + static_cast<std::ptrdiff_t>(from)),
                            std::make_move_iterator(out.end()));
  out.resize(from);
  for (Outcome& o : tail) {
    out.push_back(std::move(o));
    if (out.back().kind == OutcomeKind::Applied) onApplied(doc, out.back(), out);
  }
}

// `applied` lives in `out`: copy what is needed before appending to it.
AGUI_COLD void EditLayer::onApplied(const json& doc, const Outcome& applied, std::vector<Outcome>& out) {
  const Outcome event = applied;
  const bool ours = takeAcks(event, out);
  if (!edits_.empty()) checkWrites(doc, event, ours, out);
}

// Removes the edits the event acknowledges; true when any of them was ours.
AGUI_COLD bool EditLayer::takeAcks(const Outcome& event, std::vector<Outcome>& out) {
  bool ours = false;
  for (const EditAck& ack : event.acks) {
    auto it = std::find_if(edits_.begin(), edits_.end(), [&](const Edit& e) { return e.info.editId == ack.editId; });
    if (it == edits_.end()) {
      // An edit we dropped after a conflict the agent won, that the agent
      // applied after all: say so rather than keep quiet.
      auto lost = std::find(lostToAgent_.begin(), lostToAgent_.end(), ack.editId);
      if (lost != lostToAgent_.end() && ack.applied) {
        lostToAgent_.erase(lost);
        Outcome o = editOutcome(OutcomeKind::EditAcked, ack.editId);
        o.seq = ack.seq ? ack.seq : event.seq;
        out.push_back(std::move(o));
      }
      continue;
    }
    ours = true;
    Outcome o = editOutcome(ack.applied ? OutcomeKind::EditAcked : OutcomeKind::EditRejected, ack.editId);
    if (ack.applied) o.seq = ack.seq ? ack.seq : event.seq;
    else o.reason = ack.reason;
    out.push_back(std::move(o));
    edits_.erase(it);
  }
  return ours;
}

// An agent write over a pending edit's write: masked on user-owned paths, a
// conflict on shared ones. Whether the agent changed the value there is told
// by comparing it with the one the edit was made over (a snapshot says
// nothing of where it wrote; a delta narrows the places to look).
// An event that acknowledges our own edits wrote our values: no conflict.
AGUI_COLD void EditLayer::checkWrites(const json& doc, const Outcome& event, bool ours, std::vector<Outcome>& out) {
  const bool snapshot = event.type == "STATE_SNAPSHOT";
  std::vector<Tokens> changed;
  if (!snapshot) {
    for (const std::string& p : event.changedPaths) {
      Tokens t;
      std::string err;
      if (parsePointer(p, t, err)) changed.push_back(writtenPath(doc, t));
    }
  }
  for (size_t i = 0; i < edits_.size();) {
    Edit& e = edits_[i];
    const Write* clash = nullptr;
    for (Write& w : e.writes) {
      // A delta says where it wrote, but coarsely (a diff may replace a whole
      // object to change one member): the value there decides, as the
      // emitter's fine-grained change log does (edit_paths.h, writesOf).
      const bool near = snapshot || std::any_of(changed.begin(), changed.end(),
                                                [&](const Tokens& c) { return overlaps(c, w.path); });
      if (!near) continue;
      const std::optional<uint64_t> now = hashAt(doc, w.path);
      if (now == w.base) continue;
      w.base = now;
      // The agent's value is the user's own (their edit, applied in an event
      // whose ack has not arrived yet, or the same value by chance): nothing
      // for the user to resolve.
      if (!ours && w.owner == Owner::Shared && clash == nullptr && w.base != w.mineHash) clash = &w;
    }
    if (clash == nullptr) {
      ++i;
      continue;
    }
    const size_t before = edits_.size();
    conflict(e, *clash, doc, event.seq, out);
    if (edits_.size() == before) ++i;
  }
}

AGUI_COLD void EditLayer::conflict(Edit& e, const Write& w, const json& doc, std::optional<uint64_t> seq,
                         std::vector<Outcome>& out) {
  Outcome o = editOutcome(OutcomeKind::Conflict, e.info.editId);
  o.seq = seq;
  o.path = formatPointer(w.path);
  o.mine = optionalJsonText(w.mine);
  o.theirs = optionalJsonText(valueAt(doc, w.path));
  o.resolution = onConflict_ == ConflictPolicy::UserWins ? Resolution::UserWins : Resolution::AgentWins;
  out.push_back(std::move(o));
  if (onConflict_ == ConflictPolicy::UserWins) return;
  lostToAgent_.push_back(e.info.editId);
  if (lostToAgent_.size() > kMaxPendingEdits) lostToAgent_.erase(lostToAgent_.begin());
  edits_.erase(edits_.begin() + (&e - edits_.data()));
}

}  // namespace agui_sync
