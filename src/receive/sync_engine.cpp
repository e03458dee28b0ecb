#include <agui_sync/sync_engine.h>

#include <chrono>

#include "json/cold.h"
#include "edit/edit_layer.h"
#include "receive/activity_book.h"
#include "receive/event_decoder.h"
#include "receive/receiver.h"
#include "receive/sse_framer.h"
#include "wire/wire.h"

namespace agui_sync {

namespace {

// ": hb <seq>" (the emitter's heartbeat) -> seq; any other comment -> none.
std::optional<uint64_t> heartbeatSeq(const std::string& comment) {
  constexpr size_t kPrefix = kHeartbeatPrefixLength;
  if (comment.size() <= kPrefix || comment.compare(0, kPrefix, kHeartbeatPrefix) != 0 || comment.size() > kPrefix + 16)
    return std::nullopt;
  uint64_t v = 0;
  for (size_t i = kPrefix; i < comment.size(); ++i) {
    char c = comment[i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > kMaxSeq) return std::nullopt;
  return v;
}

// "c" + 16 hex digits, for a native caller that names no clientId: the clock,
// an address and a counter, mixed (splitmix64). The JS layer always passes a
// crypto-random id. (std::random_device would drag a file system into WASM.)
AGUI_COLD std::string randomClientId() {
  static uint64_t counter = 0;
  uint64_t v = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (reinterpret_cast<uintptr_t>(&counter) << 16) ^ (++counter * 0x9E3779B97F4A7C15ull);
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
  v ^= v >> 31;
  static const char* hex = "0123456789abcdef";
  std::string id = "c";
  for (int shift = 60; shift >= 0; shift -= 4) id += hex[(v >> shift) & 0xf];
  return id;
}

}  // namespace

// The three mechanisms the engine composes: SseFramer (bytes -> events) ->
// decodeEvent (text -> AG-UI event) -> Receiver (event -> state + outcomes).
// Each is usable and tested on its own; this only wires them and keeps
// per-connection bookkeeping.
struct SyncEngine::Impl {
  explicit Impl(const Options& o)
      : options(o), framer(o.maxEventBytes), receiver(o), activities(o), edits(o.maxDepth, o.maxEventBytes) {
    std::string error;
    if (!edits.configure(o.edits, o.clientId.empty() ? randomClientId() : o.clientId, error)) {
      optionsFailure = Failure{Code::InvalidOptions, error, std::nullopt};
      edits.configure(EditPolicy{{}, o.edits.onConflict}, o.clientId.empty() ? randomClientId() : o.clientId, error);
    }
  }

  void handleItem(SseItem& item, std::vector<Outcome>& out);
  void handleFramed(std::vector<Outcome>& out);
  void handleEvent(SseItem& item, std::vector<Outcome>& out);
  void onDecodeError(DecodeError& error, std::string_view data, std::vector<Outcome>& out);
  // Pending edits come off the state before the confirmed state changes and go
  // back on afterwards (edit_layer.h); a no-op while none is pending.
  bool detachEdits() {
    if (edits.empty()) return false;
    edits.detach(receiver.mutableState());
    return true;
  }
  void reattachEdits(std::vector<Outcome>& out, size_t from) {
    edits.rebase(receiver.state(), out, from);
    edits.attach(receiver.mutableState());
  }

  Options options;
  SseFramer framer;
  Receiver receiver;
  ActivityBook activities;  // used only with options.activities
  std::vector<SseItem> items;  // reused across feeds to avoid reallocating
  size_t nextItem = 0;         // items before it were handled (push/step)
  DecodedEvent decoded;
  uint64_t bytesReceived = 0;
  EditLayer edits;
  std::optional<Failure> optionsFailure;
};

void SyncEngine::Impl::handleEvent(SseItem& item, std::vector<Outcome>& out) {
  ++receiver.metrics().events;
  // AG-UI 1.1: the data is one AG-UI event whatever `event:` said, so the type is ignored here.
  receiver.setLastEventId(item.lastEventId.empty() ? std::nullopt : std::optional<std::string>(item.lastEventId));
  DecodeError error;
  if (item.oversized) {
    error.code = Code::LimitExceeded;
    error.message = "event data exceeds maxEventBytes (" + std::to_string(options.maxEventBytes) + ")";
    error.stateEvent = mayBeStateEvent(std::string_view(item.data).substr(0, 4096));
    return onDecodeError(error, item.data, out);
  }
  if (!decodeEvent(item.data, options, decoded, error)) return onDecodeError(error, item.data, out);
  if (decoded.cls == EventClass::ActivitySnapshot || decoded.cls == EventClass::ActivityDelta) {
    activities.onEvent(decoded, std::move(item.data), out);
  } else {
    if (options.activities && decoded.cls == EventClass::Other && decoded.type == "RUN_STARTED")
      activities.onRunStarted();
    receiver.onEvent(std::move(decoded), std::move(item.data), out);
  }
  decoded = DecodedEvent{};
}

// One error outcome; the state resyncs if the event may have been a state
// event, and the activities (one, or all when which is unknown) if it may
// have been an activity event.
AGUI_COLD void SyncEngine::Impl::onDecodeError(DecodeError& error, std::string_view data, std::vector<Outcome>& out) {
  const size_t from = out.size();
  receiver.onDecodeError(error, out);
  if (!options.activities) return;
  if (!error.activityEvent) error.activityEvent = mayBeActivityEvent(data.substr(0, 4096));
  if (!error.activityEvent) return;
  if (error.activityId) out[from].messageId = *error.activityId;
  activities.onLost(error, out);
}

SyncEngine::SyncEngine(const Options& options) : impl_(std::make_unique<Impl>(options)) {}
SyncEngine::~SyncEngine() = default;
SyncEngine::SyncEngine(SyncEngine&&) noexcept = default;
SyncEngine& SyncEngine::operator=(SyncEngine&&) noexcept = default;

void SyncEngine::setInitialState(nlohmann::json state) {
  const bool edited = impl_->detachEdits();
  impl_->receiver.setInitialState(std::move(state));
  if (edited) impl_->edits.attach(impl_->receiver.mutableState());
}

void SyncEngine::Impl::handleItem(SseItem& item, std::vector<Outcome>& out) {
  switch (item.kind) {
    case SseItem::Kind::Event: handleEvent(item, out); break;
    case SseItem::Kind::Comment: receiver.onHeartbeat(heartbeatSeq(item.data), out); break;
    case SseItem::Kind::Retry:
    case SseItem::Kind::InvalidRetry: break;  // the framer keeps retry; it never changes decoding
  }
}

void SyncEngine::push(const uint8_t* bytes, size_t n) {
  Impl& e = *impl_;
  e.bytesReceived += n;
  if (e.nextItem == e.items.size()) {  // every framed item was handled: reuse the vector
    e.items.clear();
    e.nextItem = 0;
  }
  e.framer.feed(bytes, n, e.items);
}

bool SyncEngine::step(std::vector<Outcome>& out) {
  Impl& e = *impl_;
  if (e.nextItem == e.items.size()) return false;
  const size_t from = out.size();
  const bool edited = e.detachEdits();
  e.handleItem(e.items[e.nextItem++], out);
  if (edited) e.reattachEdits(out, from);
  return true;
}

void SyncEngine::feed(const uint8_t* bytes, size_t n, std::vector<Outcome>& out) {
  push(bytes, n);
  impl_->handleFramed(out);
}

// Every item framed and not handled yet, in order (the edit layer off the state meanwhile).
void SyncEngine::Impl::handleFramed(std::vector<Outcome>& out) {
  if (nextItem == items.size()) return;
  const size_t from = out.size();
  const bool edited = detachEdits();
  while (nextItem < items.size()) handleItem(items[nextItem++], out);
  items.clear();
  nextItem = 0;
  if (edited) reattachEdits(out, from);
}

void SyncEngine::end(std::vector<Outcome>& out) {
  impl_->handleFramed(out);
  impl_->framer.endOfStream();
  impl_->receiver.onStreamEnd(out);
  impl_->activities.onStreamEnd(out);
}

void SyncEngine::reset() { impl_->framer.reset(); }

const Options& SyncEngine::options() const { return impl_->options; }
const std::optional<Failure>& SyncEngine::optionsFailure() const { return impl_->optionsFailure; }
const nlohmann::json& SyncEngine::state() const { return impl_->receiver.state(); }

AGUI_COLD nlohmann::json SyncEngine::confirmedState() const {
  Impl& e = *impl_;
  if (e.edits.empty()) return e.receiver.state();
  e.edits.detach(e.receiver.mutableState());
  nlohmann::json copy = e.receiver.state();
  e.edits.attach(e.receiver.mutableState());
  return copy;
}

AGUI_COLD std::optional<Failure> SyncEngine::edit(nlohmann::json ops, std::string* editId) {
  std::string id;
  auto failure = impl_->edits.edit(impl_->receiver.mutableState(), std::move(ops), impl_->receiver.lastSeq(), id);
  if (!failure && editId) *editId = std::move(id);
  return failure;
}

uint64_t SyncEngine::editCounter() const { return impl_->edits.counter(); }

AGUI_COLD Checkpoint SyncEngine::checkpoint() const {
  Checkpoint c;
  c.state = confirmedState();
  c.lastSeq = impl_->receiver.lastSeq();
  c.epoch = impl_->receiver.epoch();
  c.lastEventId = lastEventId();
  c.clientId = impl_->edits.clientId();
  c.editCounter = impl_->edits.counter();
  c.edits = impl_->edits.pending();
  return c;
}

AGUI_COLD void SyncEngine::restore(Checkpoint c, std::vector<Outcome>& out) {
  Impl& e = *impl_;
  e.detachEdits();
  e.receiver.setLastEventId(c.lastEventId);  // first: the `restored` resync request carries it
  e.receiver.restore(std::move(c.state), c.lastSeq, std::move(c.epoch), out);
  e.framer.setLastEventId(c.lastEventId.value_or(std::string()));
  // Leaves the document visible: every stored edit replayed in order, or
  // skipped when it does not apply. (A further attach() would retry the
  // skipped ones on top of the later edits, out of order, and the next
  // detach() would then roll them back in the wrong order.)
  e.edits.restore(e.receiver.mutableState(), std::move(c.edits), std::move(c.clientId), c.editCounter, out);
}

AGUI_COLD std::vector<PendingEdit> SyncEngine::pendingEdits() const { return impl_->edits.pending(); }
const std::string& SyncEngine::clientId() const { return impl_->edits.clientId(); }

AGUI_COLD bool SyncEngine::editPendingAt(const std::string& pointer) const {
  Tokens tokens;
  std::string error;
  return parsePointer(pointer, tokens, error) && impl_->edits.pendingAt(tokens);
}
SyncStatus SyncEngine::status() const { return impl_->receiver.status(); }
std::optional<uint64_t> SyncEngine::lastSeq() const { return impl_->receiver.lastSeq(); }
const std::optional<std::string>& SyncEngine::epoch() const { return impl_->receiver.epoch(); }
std::optional<uint64_t> SyncEngine::retry() const { return impl_->framer.retry(); }
const std::optional<ResyncRequest>& SyncEngine::resyncRequest() const { return impl_->receiver.resyncRequest(); }
size_t SyncEngine::pendingCount() const { return impl_->receiver.pendingCount(); }
std::vector<uint64_t> SyncEngine::heldSeqs() const { return impl_->receiver.heldSeqs(); }
const Metrics& SyncEngine::metrics() const { return impl_->receiver.metrics(); }
uint64_t SyncEngine::bytesReceived() const { return impl_->bytesReceived; }

namespace {
ActivityView viewOf(const std::string& id, const ActivityBook::Line& line) {
  const Receiver& r = line.receiver;
  return ActivityView{&id, &line.activityType, &r.state(), r.status(), r.lastSeq(), &r.epoch(),
                      r.resyncRequest() ? &*r.resyncRequest() : nullptr, r.pendingCount()};
}
}  // namespace

std::vector<ActivityView> SyncEngine::activities() const {
  std::vector<ActivityView> views;
  views.reserve(impl_->activities.size());
  for (const auto& [id, line] : impl_->activities.lines()) views.push_back(viewOf(id, line));
  return views;
}

std::optional<ActivityView> SyncEngine::activity(const std::string& messageId) const {
  auto it = impl_->activities.lines().find(messageId);
  if (it == impl_->activities.lines().end()) return std::nullopt;
  return viewOf(it->first, it->second);
}

std::optional<std::string> SyncEngine::lastEventId() const {
  const std::string& id = impl_->framer.lastEventId();
  if (id.empty()) return std::nullopt;
  return id;
}

}  // namespace agui_sync
