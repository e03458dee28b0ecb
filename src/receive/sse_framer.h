#pragma once
// Streaming text/event-stream framer (WHATWG HTML "server-sent events", section
// "Parsing an event stream"). Works on raw bytes so that chunks may split lines,
// CRLF pairs and UTF-8 sequences anywhere. Never throws, never buffers more than
// a bounded amount per event (see maxEventBytes).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace agui_sync {

struct SseItem {
  enum class Kind {
    Event,         // a dispatched event (blank line seen, data buffer non-empty)
    Comment,       // a line starting with ':' (heartbeats); text has one leading space removed
    Retry,         // a valid retry field (digits only); value in `retry`
    InvalidRetry,  // a retry field that is not all ASCII digits (ignored per spec)
  };
  Kind kind = Kind::Event;
  std::string type;         // Event: event type, "message" when no event field
  std::string data;         // Event: data lines joined with '\n' (valid UTF-8; invalid bytes -> U+FFFD)
                            // Comment: the comment text
                            // InvalidRetry: the rejected field value
  std::string lastEventId;  // Event: the persistent last event id at dispatch
  uint64_t retry = 0;       // Retry: milliseconds
  bool oversized = false;   // Event: data exceeded maxEventBytes; `data` holds only a prefix
                            //   (also set when an event:/id: line of the event was too long;
                            //   such an id is ignored and such a type is a prefix)
                            // Comment, InvalidRetry: the line was longer; `data` is a prefix
};

class SseFramer {
 public:
  // maxEventBytes bounds the data buffer of one event and the length of one line.
  // Beyond it the event is still framed (so the stream stays in step) but marked
  // `oversized` and its data truncated to a prefix; nothing grows without bound.
  // Values below 16 are raised to 16 so a field name always fits in the part of
  // an oversized line that is kept (otherwise "data:" could go unrecognised).
  explicit SseFramer(size_t maxEventBytes = 1u << 20);

  // Consume a chunk; appends every item it completes to `out`, in stream order.
  void feed(const uint8_t* bytes, size_t n, std::vector<SseItem>& out);
  void feed(const std::string& s, std::vector<SseItem>& out) {
    feed(reinterpret_cast<const uint8_t*>(s.data()), s.size(), out);
  }

  // The connection ended: a partial line or undispatched event is dropped (never
  // dispatched). Same as reset() but named for the caller's intent.
  void endOfStream() { reset(); }

  // A new connection starts: drop the partial line, data and event-type buffers,
  // restore the last event id to the last *dispatched* one, keep retry, and expect
  // (and strip) a BOM again.
  void reset();

  // A restored connection's last event id (as if an event with it was dispatched).
  void setLastEventId(std::string id) {
    idBuffer_ = id;
    dispatchedId_ = std::move(id);
  }
  // The last event id buffer as of the last dispatched event ("" if none).
  const std::string& lastEventId() const { return dispatchedId_; }
  // Latest valid retry value, if any was ever received.
  std::optional<uint64_t> retry() const { return retry_; }
  // Bytes fed since construction/reset, BOM included: non-zero once any byte
  // arrived on the current connection (used for liveness).
  uint64_t bytesSeen() const { return bytesSeen_; }

 private:
  // Bytes after BOM handling; does all the line splitting.
  void feedBody(const uint8_t* p, size_t n, std::vector<SseItem>& out);
  // One complete line without its terminator. `oversized` = the real line was
  // longer than maxEventBytes and `p` holds only its first maxEventBytes bytes.
  void processLine(const uint8_t* p, size_t n, bool oversized, std::vector<SseItem>& out);
  // A data field's value joins the event's data buffer (bounded by maxEventBytes).
  void appendData(const uint8_t* v, size_t vn, bool oversized);
  // A retry field: Retry with the value when it is all digits, else InvalidRetry.
  SseItem retryItem(const uint8_t* v, size_t vn, bool oversized);
  void dispatch(std::vector<SseItem>& out);
  // Appends to the pending line, never letting it grow past maxEventBytes.
  void appendToLine(const uint8_t* p, size_t n);

  size_t maxEventBytes_;
  std::string line_;          // partial line carried across chunks (<= maxEventBytes_)
  bool lineOversized_ = false;  // the partial line lost bytes beyond maxEventBytes_
  bool pendingCR_ = false;    // last chunk ended with CR: a following LF belongs to it
  size_t bomMatched_ = 0;     // bytes of a leading BOM matched so far
  bool bomDone_ = false;
  std::string data_;          // data lines joined with '\n' (no trailing LF), <= maxEventBytes_
  bool dataSeen_ = false;     // at least one data field in this event
  bool dataOversized_ = false;   // data_ was truncated: later data lines are not appended
  bool eventOversized_ = false;  // some line of this event exceeded the limit
  std::string eventType_;
  std::string idBuffer_;
  std::string dispatchedId_;
  std::optional<uint64_t> retry_;
  uint64_t bytesSeen_ = 0;
};

}  // namespace agui_sync
