#pragma once
// SyncEngine: raw SSE bytes in, outcomes out. Composes the three mechanisms:
// SseFramer (bytes -> events) -> decodeEvent (text -> AG-UI event) -> Receiver
// (event -> state + outcomes). Each is usable and tested on its own; this class
// only wires them and keeps per-connection bookkeeping.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_decoder.h"
#include "options.h"
#include "outcome.h"
#include "receiver.h"
#include "sse_framer.h"

namespace agui_sync {

class SyncEngine {
 public:
  explicit SyncEngine(const Options& options = Options{});

  void setInitialState(nlohmann::json state) { receiver_.setInitialState(std::move(state)); }

  // Any chunking: a chunk may end mid-line, mid-CRLF or mid-UTF-8 sequence.
  void feed(const uint8_t* bytes, size_t n, std::vector<Outcome>& out);
  void feed(const std::string& bytes, std::vector<Outcome>& out) {
    feed(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out);
  }
  // The stream ended or broke: the partial event is dropped, a pending gap
  // becomes a resync. The framer is ready for a new connection afterwards.
  void end(std::vector<Outcome>& out);
  // A new connection starts; state, lastSeq and lastEventId are kept.
  void reset();

  const Options& options() const { return options_; }
  const Receiver& receiver() const { return receiver_; }
  Receiver& receiver() { return receiver_; }
  const nlohmann::json& state() const { return receiver_.state(); }
  SyncStatus status() const { return receiver_.status(); }
  std::optional<uint64_t> lastSeq() const { return receiver_.lastSeq(); }
  // The SSE last event id (null until an event carried a non-empty id).
  std::optional<std::string> lastEventId() const;
  std::optional<uint64_t> retry() const { return framer_.retry(); }
  const Metrics& metrics() const { return receiver_.metrics(); }
  // Bytes received since construction: any growth is a sign of life (heartbeats included).
  uint64_t bytesReceived() const { return bytesReceived_; }

 private:
  void handleEvent(SseItem& item, std::vector<Outcome>& out);

  Options options_;
  SseFramer framer_;
  Receiver receiver_;
  std::vector<SseItem> items_;  // reused across feeds to avoid reallocating
  DecodedEvent decoded_;
  uint64_t bytesReceived_ = 0;
};

}  // namespace agui_sync
