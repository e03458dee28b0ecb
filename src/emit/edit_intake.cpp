// StateEmitter::applyEdits: user edits judged and applied (state_emitter.h,
// edits.h, docs/wire.md section 9).
#include <algorithm>

#include "edit/edit_acks.h"
#include "emit/emitter_impl.h"
#include "json/json_patch.h"
#include "wire/patch_code.h"
#include "json/json_measure.h"
#include "wire/wire.h"
#include "wire/wire_meta.h"

namespace agui_sync {

namespace {

constexpr size_t kMaxEditIdBytes = 256;

// Edits grouped by origin, in first-seen order: each group is one event.
std::vector<std::vector<const EditRequest*>> byOrigin(const std::vector<EditRequest>& edits) {
  std::vector<std::string> origins;
  std::vector<std::vector<const EditRequest*>> groups;
  for (const EditRequest& e : edits) {
    const std::string origin = editOrigin(e.editId);
    size_t i = 0;
    while (i < origins.size() && origins[i] != origin) ++i;
    if (i == origins.size()) {
      origins.push_back(origin);
      groups.emplace_back();
    }
    groups[i].push_back(&e);
  }
  return groups;
}

}  // namespace

EditAck StateEmitter::Impl::judge(const EditRequest& edit, const OwnershipMap& owners, ConflictPolicy policy,
                                  json& accepted, std::vector<Tokens>& written) {
  EditAck ack;
  ack.editId = edit.editId;
  auto reject = [&](Code code) {
    ack.applied = false;
    ack.reason = code;
    return ack;
  };
  const std::string origin = editOrigin(edit.editId);
  // An empty origin would pass for the agent's own writes in the change log.
  if (origin.empty() || edit.editId.size() > kMaxEditIdBytes) return reject(Code::InvalidRequest);
  PatchOps parsed;
  PatchResult v = toPatchOps(edit.ops, parsed);
  if (!v.ok()) return reject(patchCode(v.status));
  if (parsed.empty()) return reject(Code::InvalidPatch);
  std::vector<std::pair<Tokens, size_t>> writes;
  editWrites(state_, parsed, writes);
  std::vector<Tokens> shared;
  for (auto& [path, index] : writes) {
    const Owner owner = owners.writeOwner(path);
    if (owner == Owner::Agent) return reject(Code::AgentOwned);
    if (owner == Owner::Shared) shared.push_back(path);
  }
  if (policy == ConflictPolicy::AgentWins && !shared.empty() &&
      ledger_.writtenSince(edit.baseSeq, seq_, origin, shared))
    return reject(Code::Conflict);
  json ops = edit.ops;
  if (auto failure = prepareOps(ops)) return reject(failure->code);
  PatchTransaction tx(state_, options_.maxDepth);
  PatchResult r = tx.apply(ops);  // a copy: `ops` goes on the wire
  if (!r.ok()) return reject(patchCode(r.status));
  tx.commit();
  for (auto& [path, index] : writes) written.push_back(std::move(path));
  for (json& op : *ops.get_ptr<json::array_t*>()) accepted.push_back(std::move(op));
  ack.applied = true;
  return ack;
}

EditsOutcome StateEmitter::Impl::applyEdits(const std::vector<EditRequest>& edits, const EditPolicy& policy) {
  lastFailure_.reset();
  EditsOutcome out;
  OwnershipMap owners;
  std::string error;
  if (!owners.assign(policy.ownership, error)) {
    out.failure = Failure{Code::InvalidOptions, error, std::nullopt};
    return out;
  }
  const auto groups = byOrigin(edits);
  if (groups.size() > kMaxSeq - std::min(seq_, kMaxSeq)) {  // one event per origin: all of them, or none
    out.failure = Failure{Code::SeqExhausted, "seq reached 2^53-1; start a new epoch", std::nullopt};
    return out;
  }
  for (const auto& group : groups) {
    const uint64_t next = seq_ + 1;
    json accepted(json::value_t::array), acks(json::value_t::array);
    std::vector<Tokens> written;
    for (const EditRequest* edit : group) {
      EditAck ack;
      const EditAck* known = ledger_.verdict(edit->editId);
      if (known) {
        ack = *known;  // re-sent: the first verdict again, with the seq it was given at
      } else {
        ack = judge(*edit, owners, policy.onConflict, accepted, written);
        ack.seq = next;
        // An id no client of ours could have made is answered to the caller
        // only: echoing it would put an unbounded string in every snapshot.
        if (edit->editId.size() > kMaxEditIdBytes) {
          out.results.push_back(std::move(ack));
          continue;
        }
        ledger_.remember(ack);
      }
      acks.push_back(ackJson(ack, known != nullptr));
      out.results.push_back(std::move(ack));
    }
    ledger_.noteClientWrites(written, editOrigin(group.front()->editId), next);
    ledger_.record(next, editOrigin(group.front()->editId), std::move(written));
    for (json& ev : emit(std::move(accepted), false, &acks)) out.events.push_back(std::move(ev));
  }
  return out;
}

}  // namespace agui_sync

namespace agui_sync {

// The events' writes and verdicts enter the ledger; deltas enter the ring.
void StateEmitter::Impl::adoptEvent(const json& event, uint64_t seq) {
  const json* meta = wireFields(event);  // present: adoptHistory() found a seq in it
  std::vector<EditAck> acks;
  if (meta->contains("acks")) readAcks((*meta)["acks"], acks);
  std::string origin;  // an event that carries fresh verdicts holds that origin's edits
  for (EditAck& ack : acks) {
    if (!ack.seq) {
      ack.seq = seq;
      origin = editOrigin(ack.editId);
    }
    if (!ledger_.verdict(ack.editId)) ledger_.remember(ack);
  }
  if (event.value("type", "") != "STATE_DELTA" || !event.contains("delta")) {
    ring_.clear();  // a snapshot: replay from before it is served by a snapshot
    ringBytes_ = 0;
    floor_ = seq;
    ledger_.record(seq, origin, {{}});  // it may have written anything
    return;
  }
  // Adopted events have already changed the state: their writes are taken
  // coarsely (the ops' own paths), which can only make edits conflict more.
  std::vector<Tokens> written;
  for (const json& op : event["delta"]) {
    Tokens t;
    std::string error;
    if (op.is_object() && op.contains("path") && op["path"].is_string() &&
        parsePointer(op["path"].get<std::string>(), t, error))
      written.push_back(writtenPath(state_, t));
  }
  if (!origin.empty()) ledger_.noteClientWrites(written, origin, seq);
  ledger_.recordWrites(seq, origin, std::move(written));
  remember(event, serializedSize(event));
}

size_t StateEmitter::Impl::adoptHistory(const std::vector<json>& events) {
  // The consecutive run that ends at seq_: walk back from the newest.
  size_t first = events.size();
  uint64_t expect = seq_;
  while (first > 0 && wireSeq(events[first - 1]) == expect && expect > 0) {
    --first;
    --expect;
  }
  floor_ = expect;
  ledger_.restartChanges(expect);
  ring_.clear();
  ringBytes_ = 0;
  for (size_t i = first; i < events.size(); ++i) adoptEvent(events[i], *wireSeq(events[i]));
  return events.size() - first;
}

size_t StateEmitter::adoptHistory(const std::vector<json>& events) { return impl_->adoptHistory(events); }

std::vector<ClientWrite> StateEmitter::provenance() const {
  std::vector<ClientWrite> out;
  for (const auto& [path, w] : impl_->ledger_.clientWrites()) out.push_back(ClientWrite{path, w.origin, w.seq});
  return out;
}

}  // namespace agui_sync
