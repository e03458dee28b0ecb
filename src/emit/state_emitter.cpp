#include <agui_sync/state_emitter.h>

#include "emit/emitter_impl.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include <agui_sync/canonical_json.h>

#include "json/json_diff.h"
#include "json/json_measure.h"
#include "json/json_patch.h"
#include "json/utf8.h"
#include "wire/patch_code.h"
#include "wire/wire.h"
#include "wire/wire_meta.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// --- values the wire cannot carry -------------------------------------------

bool wireSafeScalar(const json& v) {
  switch (v.type()) {
    case json::value_t::string: return validUtf8(*v.get_ptr<const json::string_t*>());
    case json::value_t::number_float: return std::isfinite(*v.get_ptr<const json::number_float_t*>());
    case json::value_t::binary:
    case json::value_t::discarded: return false;
    default: return true;
  }
}

// False when `v` nests deeper than `budget` levels ([] is one level). Sets
// `dirty` when it holds something repair() would change. Recursion is bounded
// by `budget`.
bool inspect(const json& v, size_t budget, bool& dirty) {
  if (v.is_object()) {
    if (budget == 0) return false;
    for (const auto& kv : *v.get_ptr<const json::object_t*>()) {
      if (!validUtf8(kv.first)) dirty = true;
      if (!inspect(kv.second, budget - 1, dirty)) return false;
    }
    return true;
  }
  if (v.is_array()) {
    if (budget == 0) return false;
    for (const auto& item : *v.get_ptr<const json::array_t*>())
      if (!inspect(item, budget - 1, dirty)) return false;
    return true;
  }
  if (!wireSafeScalar(v)) dirty = true;
  return true;
}

// Makes `v` wire-safe (see state_emitter.h). Only called on values inspect()
// accepted, so the recursion is bounded by the depth limit.
void repair(json& v) {
  if (v.is_object()) {
    auto& obj = *v.get_ptr<json::object_t*>();
    bool badKey = false;
    for (auto& kv : obj) {
      repair(kv.second);
      if (!validUtf8(kv.first)) badKey = true;
    }
    if (badKey) {
      json::object_t fixed;
      for (auto& kv : obj) fixed[repairUtf8(kv.first)] = std::move(kv.second);  // a collision keeps the later key
      obj = std::move(fixed);
    }
    return;
  }
  if (v.is_array()) {
    for (auto& item : *v.get_ptr<json::array_t*>()) repair(item);
    return;
  }
  if (wireSafeScalar(v)) return;
  if (v.is_string()) v = repairUtf8(*v.get_ptr<const json::string_t*>());
  else v = nullptr;  // NaN / Infinity (which dump() prints as null anyway), binary, discarded
}

const std::string* member(const json& obj, const char* name) {
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

// Checks the ops of a diff: every added/replaced value must fit the depth limit
// below its path, and every value and path must be wire-safe (else `dirty`).
bool inspectDiffOps(const json::array_t& ops, size_t maxDepth, bool& dirty) {
  for (const json& op : ops) {
    const std::string* name = member(op, "op");
    const std::string* path = member(op, "path");
    if (!name || !path) continue;  // unreachable: the differ writes both
    if (*name == "test") continue;  // a value of the previous state, already checked
    if (!validUtf8(*path)) dirty = true;
    const size_t tokens = pointerTokens(*path);
    if (tokens > maxDepth) return false;
    auto v = op.find("value");
    if (v != op.end() && !inspect(*v, maxDepth - tokens, dirty)) return false;
  }
  return true;
}

}  // namespace


StateEmitter::Impl::Impl(EmitterOptions options, json initialState)
    : options_(std::move(options)),
      state_(std::move(initialState)),
      ledger_(options_.startSeq > kMaxSeq ? 0 : options_.startSeq, options_.editHistory, options_.ackHistory) {
  if (options_.startSeq > kMaxSeq) {
    configError_ = "startSeq is above 2^53-1; using 0";
    options_.startSeq = 0;
  }
  seq_ = floor_ = options_.startSeq;
  if (!validUtf8(options_.epoch)) options_.epoch = repairUtf8(options_.epoch);
  for (const std::string& p : options_.guardedPaths) {
    Tokens t;
    std::string err;
    if (parsePointer(p, t, err)) diffOptions_.guardedPaths.push_back(std::move(t));
    else configError_ += (configError_.empty() ? "" : "; ") + ("guarded path '" + p + "' ignored: " + err);
  }
  diffOptions_.testAll = options_.testAll;
  diffOptions_.maxDepth = options_.maxDepth;
  bool dirty = false;
  if (!inspect(state_, options_.maxDepth, dirty)) {
    configError_ += (configError_.empty() ? "" : "; ") + std::string("initial state nests deeper than maxDepth; using {}");
    state_ = json::object();
  } else if (dirty) {
    repair(state_);
    ++stats_.repaired;
  }
}

json StateEmitter::Impl::metadata(uint64_t seq, const uint64_t* baseSeq, const std::string* digest,
                                  const json* acks) const {
  json meta(json::value_t::object);
  auto& m = *meta.get_ptr<json::object_t*>();
  m.emplace("seq", seq);
  if (baseSeq) m.emplace("baseSeq", *baseSeq);
  if (!options_.epoch.empty()) m.emplace("epoch", options_.epoch);
  if (digest) m.emplace("digest", *digest);
  if (acks && !acks->empty()) m.emplace("acks", *acks);
  return wireMetadata(std::move(meta));
}

json StateEmitter::Impl::snapshotEvent(uint64_t seq, const std::string* digest, const json* acks) const {
  json ev(json::value_t::object);
  auto& e = *ev.get_ptr<json::object_t*>();
  e.emplace("type", "STATE_SNAPSHOT");
  e.emplace("snapshot", state_);
  e.emplace("metadata", metadata(seq, nullptr, digest, acks));
  return ev;
}

size_t StateEmitter::Impl::snapshotEventBytes(const json& meta, size_t limit) const {
  // {"metadata":<meta>,"snapshot":<state>,"type":"STATE_SNAPSHOT"}
  const size_t envelope = 2 + 2 + 3 + 10 + 10 + 6 + 16 + serializedSize(meta);
  return envelope + serializedSize(state_, limit > envelope ? limit - envelope : 0);
}

// The snapshot fallback rule (see state_emitter.h): deltas of `deltaBytes`
// weigh more than snapshotRatio x a snapshot carrying `snapshotMeta`. The
// snapshot is measured only up to deltaBytes / ratio, so this is O(delta).
bool StateEmitter::Impl::snapshotCheaper(size_t deltaBytes, const json& snapshotMeta) const {
  const double ratio = options_.snapshotRatio;
  if (!(ratio > 0)) return true;  // NaN too
  const double limitD = static_cast<double>(deltaBytes) / ratio;
  const size_t limit = limitD >= 1e18 ? SIZE_MAX : static_cast<size_t>(limitD) + 1;
  const size_t snapBytes = snapshotEventBytes(snapshotMeta, limit);
  return static_cast<double>(deltaBytes) > ratio * static_cast<double>(snapBytes);
}

void StateEmitter::Impl::refuse(Code code, std::string message, std::optional<size_t> opIndex) {
  lastFailure_ = Failure{code, std::move(message), opIndex};
  ++stats_.rejected;
}

void StateEmitter::Impl::remember(json event, size_t bytes) {
  ring_.push_back(Stored{std::move(event), bytes});
  ringBytes_ += bytes;
  while (!ring_.empty() && (ring_.size() > options_.replayMaxEvents || ringBytes_ > options_.replayMaxBytes)) {
    ringBytes_ -= ring_.front().bytes;
    ring_.pop_front();
    ++floor_;
  }
}

// How many recent verdicts a snapshot for a client of unknown position repeats.
constexpr size_t kSnapshotAcks = 64;

std::vector<json> StateEmitter::Impl::emit(json ops, bool forceSnapshot, const json* acks) {
  const uint64_t base = seq_, next = seq_ + 1;
  const bool withDigest = options_.digestEvery != 0 && next % options_.digestEvery == 0;
  std::string digest;
  if (withDigest) digest = stateDigest(state_);  // O(state), every K-th event only
  const std::string* digestPtr = withDigest ? &digest : nullptr;

  json ev(json::value_t::object);
  {
    auto& e = *ev.get_ptr<json::object_t*>();
    e.emplace("type", "STATE_DELTA");
    e.emplace("delta", std::move(ops));
    e.emplace("metadata", metadata(next, &base, digestPtr, acks));
  }
  const size_t deltaBytes = serializedSize(ev);
  const bool useSnapshot = forceSnapshot || snapshotCheaper(deltaBytes, metadata(next, nullptr, digestPtr, acks));
  seq_ = next;
  if (withDigest) ++stats_.digests;
  std::vector<json> events;
  if (useSnapshot) {
    // A snapshot can be the first thing a client sees after missing events, so
    // like every snapshot it repeats the recent verdicts (this event's among them).
    json recent = ledger_.acksSince(std::nullopt, kSnapshotAcks);
    if (acks) {  // this event's own verdicts may be older ones, repeated for a re-sent edit
      for (const json& mine : *acks) {
        bool present = false;
        for (const json& r : recent) present = present || r["editId"] == mine["editId"];
        if (present) continue;
        json entry = mine;
        if (!entry.contains("seq")) entry["seq"] = next;
        recent.push_back(std::move(entry));
      }
    }
    events.push_back(snapshotEvent(next, digestPtr, &recent));
    ring_.clear();  // replay from before this point is served by a snapshot
    ringBytes_ = 0;
    floor_ = next;
    ++stats_.snapshots;
    return events;
  }
  remember(ev, deltaBytes);
  events.push_back(std::move(ev));
  ++stats_.deltas;
  return events;
}


std::vector<json> StateEmitter::Impl::updateImpl(const json& target, json* owned) {
  lastFailure_.reset();
  if (seq_ >= kMaxSeq) {
    refuse(Code::SeqExhausted, "seq reached 2^53-1; start a new epoch");
    return {};
  }
  json ops(json::value_t::array);
  auto& list = *ops.get_ptr<json::array_t*>();
  appendDiff(state_, target, diffOptions_, list);
  if (list.empty()) return {};
  // Only what the diff emits is new: the rest equals the previous state, which
  // was checked when it was emitted. So this costs O(delta), not O(state).
  bool dirty = false;
  if (!inspectDiffOps(list, options_.maxDepth, dirty)) {
    refuse(Code::LimitExceeded, "the new state nests deeper than maxDepth (" + std::to_string(options_.maxDepth) + ")");
    return {};
  }
  const json* next = &target;
  json repaired;
  if (dirty) {  // rare: repair the new state (bounded: its new parts passed the depth check) and diff again
    if (!owned) {
      repaired = target;
      owned = &repaired;
    }
    repair(*owned);
    next = owned;
    ++stats_.repaired;
    list.clear();
    appendDiff(state_, *next, diffOptions_, list);
    if (list.empty()) return {};
  }
  std::vector<Tokens> writes = writesOf(state_, ops);  // before the state changes: fine-grained
  if (owned) {
    state_ = std::move(*owned);
    return emitAgent(std::move(ops), std::move(writes));
  }
  if (!applyInPlace(ops)) {  // cannot happen (a diff applies to its source); never send a wrong delta
    state_ = *next;
    return emitAgent(std::move(ops), {{}}, /*forceSnapshot=*/true);
  }
  return emitAgent(std::move(ops), std::move(writes));
}

bool StateEmitter::Impl::applyInPlace(const json& ops) {
  PatchTransaction tx(state_, options_.maxDepth);
  if (!tx.apply(ops).ok()) return false;
  tx.commit();
  return true;
}

// updateImpl's steps with the diff taken by the caller; every case in which
// updateImpl would refuse, repair or fall back declines instead, untouched.
std::optional<std::vector<json>> StateEmitter::Impl::updateByDiff(const StateEmitter::DiffFn& diff, json* opsOut) {
  if (seq_ >= kMaxSeq) return std::nullopt;
  json ops(json::value_t::array);
  auto& list = *ops.get_ptr<json::array_t*>();
  if (!diff(state_, diffOptions_, list)) return std::nullopt;
  bool dirty = false;
  if (!list.empty() && (!inspectDiffOps(list, options_.maxDepth, dirty) || dirty)) return std::nullopt;
  lastFailure_.reset();
  if (list.empty()) return std::vector<json>{};
  std::vector<Tokens> writes = writesOf(state_, ops);  // before the state changes
  if (!applyInPlace(ops)) return std::nullopt;
  if (opsOut) *opsOut = ops;
  return emitAgent(std::move(ops), std::move(writes));
}

std::optional<Failure> StateEmitter::Impl::prepareOps(json& ops) {
  auto& list = *ops.get_ptr<json::array_t*>();
  // An op object is one level, so its value may use maxDepth more; the exact
  // path + value rule for add/replace is the transaction's (as in the receiver).
  bool dirty = false;
  for (size_t i = 0; i < list.size(); ++i)
    if (!inspect(list[i], options_.maxDepth + 1, dirty))
      return Failure{Code::LimitExceeded, "op " + std::to_string(i) + ": value nests deeper than maxDepth", i};
  if (dirty) {
    repair(ops);
    ++stats_.repaired;
  }
  return std::nullopt;
}

PatchOutcome StateEmitter::Impl::patch(json ops) {
  lastFailure_.reset();
  PatchOutcome out;
  auto failed = [&](Failure f) {
    refuse(f.code, std::move(f.message), f.opIndex);
    out.failure = lastFailure_;
    return out;
  };
  PatchResult v = validatePatch(ops);
  if (!v.ok()) return failed(Failure{patchCode(v.status), v.message, v.opIndex});
  if (seq_ >= kMaxSeq)  // as update() reports it: no operation is at fault
    return failed(Failure{Code::SeqExhausted, "seq reached 2^53-1; start a new epoch", std::nullopt});
  if (ops.empty()) return out;
  if (auto f = prepareOps(ops)) return failed(std::move(*f));
  std::vector<Tokens> writes = writesOf(state_, ops);  // before the state changes: fine-grained
  PatchTransaction tx(state_, options_.maxDepth);
  PatchResult r = tx.apply(ops);  // a copy: the values move into the state, `ops` goes on the wire
  if (!r.ok()) return failed(Failure{patchCode(r.status), r.message, r.opIndex});  // already rolled back
  tx.commit();
  out.events = emitAgent(std::move(ops), std::move(writes));
  return out;
}

// The agent's own writes: remembered for edits' three-way check, then sent.
std::vector<json> StateEmitter::Impl::emitAgent(json ops, std::vector<Tokens> writes, bool forceSnapshot) {
  ledger_.recordWrites(seq_ + 1, std::string(), std::move(writes));
  return emit(std::move(ops), forceSnapshot);
}

json StateEmitter::Impl::snapshot(std::optional<uint64_t> since) const {
  const json acks = ledger_.acksSince(since, since ? options_.ackHistory : kSnapshotAcks);
  if (options_.digestEvery == 0) return snapshotEvent(seq_, nullptr, &acks);
  const std::string digest = stateDigest(state_);
  return snapshotEvent(seq_, &digest, &acks);
}


std::vector<json> StateEmitter::Impl::replaySince(uint64_t seq, const std::string* epoch,
                                            const std::vector<uint64_t>& skip) const {
  std::vector<json> events;
  if (epoch && *epoch != options_.epoch) {
    ++stats_.replaySnapshots;
    events.push_back(snapshot(std::nullopt));
    return events;
  }
  if (seq == seq_) return events;
  bool useSnapshot = seq > seq_ || seq < floor_;
  const size_t first = useSnapshot ? 0 : static_cast<size_t>(seq - floor_);
  std::vector<uint64_t> held;
  if (!useSnapshot && !skip.empty()) {
    for (uint64_t s : skip)
      if (s > seq + 1 && s <= seq_) held.push_back(s);  // never the first missed delta
    std::sort(held.begin(), held.end());
  }
  // ring_[i] has seq floor_ + i + 1.
  auto skipped = [&](size_t i) { return !held.empty() && std::binary_search(held.begin(), held.end(), floor_ + i + 1); };
  if (!useSnapshot) {
    // Many small deltas can outweigh one snapshot: the same ratio rule as emit().
    size_t bytes = 0;
    for (size_t i = first; i < ring_.size(); ++i)
      if (!skipped(i)) bytes += ring_[i].bytes;
    const std::string digest(options_.digestEvery ? 71 : 0, '0');  // "sha256:" + 64 hex, for its size
    useSnapshot = snapshotCheaper(bytes, metadata(seq_, nullptr, options_.digestEvery ? &digest : nullptr));
  }
  if (useSnapshot) {
    ++stats_.replaySnapshots;
    events.push_back(snapshot(seq <= seq_ ? std::optional<uint64_t>(seq) : std::nullopt));
    return events;
  }
  ++stats_.replays;
  events.reserve(ring_.size() - first);
  for (size_t i = first; i < ring_.size(); ++i)
    if (!skipped(i)) events.push_back(ring_[i].event);
  return events;
}

std::string StateEmitter::encode(const json& event, bool withId) {
  std::string out;
  if (withId) {
    if (auto seq = wireSeq(event)) out += "id: " + std::to_string(*seq) + "\n";
  }
  out += "data: ";
  // One line: compact dump() escapes every control character inside strings.
  // The emitter's own events are wire-safe; `replace` only guards foreign ones.
  out += event.dump(-1, ' ', false, json::error_handler_t::replace);
  out += "\n\n";
  return out;
}

std::string StateEmitter::encodeAll(const std::vector<json>& events, bool withId) {
  std::string out;
  for (const json& e : events) out += encode(e, withId);
  return out;
}

// --- the public face -----------------------------------------------------------

StateEmitter::StateEmitter(EmitterOptions options, json initialState)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(initialState))) {}
StateEmitter::~StateEmitter() = default;
StateEmitter::StateEmitter(StateEmitter&&) noexcept = default;
StateEmitter& StateEmitter::operator=(StateEmitter&&) noexcept = default;

const std::string& StateEmitter::configError() const { return impl_->configError_; }
std::vector<json> StateEmitter::update(const json& newState) { return impl_->updateImpl(newState, nullptr); }
std::vector<json> StateEmitter::update(json&& newState) { return impl_->updateImpl(newState, &newState); }
const std::optional<Failure>& StateEmitter::lastFailure() const { return impl_->lastFailure_; }
std::optional<std::vector<json>> StateEmitter::updateByDiff(const DiffFn& diff, json* ops) {
  return impl_->updateByDiff(diff, ops);
}
PatchOutcome StateEmitter::patch(json ops) { return impl_->patch(std::move(ops)); }
json StateEmitter::snapshot() const { return impl_->snapshot(std::nullopt); }
EditsOutcome StateEmitter::applyEdits(const std::vector<EditRequest>& edits, const EditPolicy& policy) {
  return impl_->applyEdits(edits, policy);
}

EditsOutcome StateEmitter::applyEdits(const std::vector<EditRequest>& edits, const EditPolicy& policy,
                                      const std::string* clientEpoch) {
  if (clientEpoch == nullptr || *clientEpoch == options().epoch) return impl_->applyEdits(edits, policy);
  std::vector<EditRequest> placed = edits;
  for (EditRequest& e : placed) e.baseSeq.reset();
  return impl_->applyEdits(placed, policy);
}

json StateEmitter::catchUpSnapshot() const {
  ++impl_->stats_.replaySnapshots;
  return impl_->snapshot(std::nullopt);
}

std::vector<json> StateEmitter::replaySince(uint64_t seq) const { return impl_->replaySince(seq, nullptr, {}); }
std::vector<json> StateEmitter::replaySince(uint64_t seq, const std::string& epoch) const {
  return impl_->replaySince(seq, &epoch, {});
}
std::vector<json> StateEmitter::replaySince(uint64_t seq, const std::string* epoch,
                                            const std::vector<uint64_t>& skip) const {
  return impl_->replaySince(seq, epoch, skip);
}

std::string StateEmitter::heartbeat() const {
  return std::string(": ") + kHeartbeatPrefix + std::to_string(impl_->seq_) + "\n\n";
}

uint64_t StateEmitter::seq() const { return impl_->seq_; }
const json& StateEmitter::state() const { return impl_->state_; }
const EmitterOptions& StateEmitter::options() const { return impl_->options_; }
const EmitterStats& StateEmitter::stats() const { return impl_->stats_; }
uint64_t StateEmitter::replayFloor() const { return impl_->floor_; }
size_t StateEmitter::replayEvents() const { return impl_->ring_.size(); }
size_t StateEmitter::replayBytes() const { return impl_->ringBytes_; }

std::string StateEmitter::patchSse(json ops, PatchOutcome* outcome) {
  PatchOutcome o = patch(std::move(ops));
  std::string bytes = encodeAll(o.events);
  if (outcome) *outcome = std::move(o);
  return bytes;
}

}  // namespace agui_sync
