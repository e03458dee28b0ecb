#include "sync_engine.h"

namespace agui_sync {

namespace {

// ": hb <seq>" (the emitter's heartbeat) -> seq; any other comment -> none.
std::optional<uint64_t> heartbeatSeq(const std::string& comment) {
  if (comment.size() < 4 || comment.compare(0, 3, "hb ") != 0 || comment.size() > 3 + 16) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 3; i < comment.size(); ++i) {
    char c = comment[i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > kMaxSeq) return std::nullopt;
  return v;
}

}  // namespace

SyncEngine::SyncEngine(const Options& options)
    : options_(options), framer_(options.maxEventBytes), receiver_(options) {}

std::optional<std::string> SyncEngine::lastEventId() const {
  const std::string& id = framer_.lastEventId();
  if (id.empty()) return std::nullopt;
  return id;
}

void SyncEngine::feed(const uint8_t* bytes, size_t n, std::vector<Outcome>& out) {
  bytesReceived_ += n;
  items_.clear();
  framer_.feed(bytes, n, items_);
  for (SseItem& item : items_) {
    switch (item.kind) {
      case SseItem::Kind::Event: handleEvent(item, out); break;
      case SseItem::Kind::Comment: receiver_.onHeartbeat(heartbeatSeq(item.data), out); break;
      case SseItem::Kind::Retry:
      case SseItem::Kind::InvalidRetry: break;  // the framer keeps retry; it never changes decoding
    }
  }
  items_.clear();
}

void SyncEngine::handleEvent(SseItem& item, std::vector<Outcome>& out) {
  ++receiver_.metrics().events;
  // AG-UI 1.1: the data is one AG-UI event whatever `event:` said, so the type is ignored here.
  receiver_.setLastEventId(item.lastEventId.empty() ? std::nullopt : std::optional<std::string>(item.lastEventId));
  DecodeError error;
  if (item.oversized) {
    error.code = "limit-exceeded";
    error.message = "event data exceeds maxEventBytes (" + std::to_string(options_.maxEventBytes) + ")";
    error.stateEvent = mayBeStateEvent(std::string_view(item.data).substr(0, 4096));
    receiver_.onDecodeError(error, out);
    return;
  }
  if (!decodeEvent(item.data, options_, decoded_, error)) {
    receiver_.onDecodeError(error, out);
    return;
  }
  receiver_.onEvent(std::move(decoded_), std::move(item.data), out);
  decoded_ = DecodedEvent{};
}

void SyncEngine::end(std::vector<Outcome>& out) {
  framer_.endOfStream();
  receiver_.onStreamEnd(out);
}

void SyncEngine::reset() { framer_.reset(); }

}  // namespace agui_sync
