// Streaming text/event-stream framer, following WHATWG HTML "Parsing an event
// stream" and "Interpreting an event stream".
//
// The spec decodes the whole stream as UTF-8 first and then splits lines. We
// split raw bytes instead and decode each field value on its own. The result is
// the same: CR, LF, ':' and ' ' are ASCII, and the WHATWG UTF-8 decoder never
// swallows an ASCII byte into a broken sequence (it emits U+FFFD and then
// reprocesses that byte). So a sequence cut short by a line end decodes to U+FFFD
// followed by the line end, either way. Working on bytes means chunks can split
// UTF-8 sequences anywhere without us carrying decoder state across chunks.
#include "receive/sse_framer.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "json/swar.h"

namespace agui_sync {

namespace {

constexpr size_t kMinMaxEventBytes = 16;
// Data buffers bigger than this are handed to the event instead of copied (and
// line/data buffers this big are released at reset), so one huge event does
// not pin its buffer for the rest of the connection.
constexpr size_t kKeepDataCapacity = 64 * 1024;
constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

using swar::kHighBits;
using swar::load64;

// First CR or LF in [p, end), or end. There is no two-character memchr, so scan a
// word at a time (swar.h).
const uint8_t* findLineEnd(const uint8_t* p, const uint8_t* end) {
  while (end - p >= 8) {
    const uint64_t w = load64(p);
    const uint64_t ends = swar::hasByte(w, '\n') | swar::hasByte(w, '\r');
    if (ends != 0) {
      if (swar::kFirstFlaggedExact) return p + swar::firstFlagged(ends);
      break;
    }
    p += 8;
  }
  for (; p < end; ++p) {
    if (*p == '\n' || *p == '\r') return p;
  }
  return end;
}

// Classifies the UTF-8 sequence starting at p[0] (p[0] >= 0x80) exactly as the
// WHATWG UTF-8 decoder does. Returns how many bytes it consumes: the whole
// sequence when valid, otherwise the "maximal subpart" that becomes one U+FFFD
// (the byte that broke the sequence is not consumed; it starts the next one).
inline size_t utf8Sequence(const uint8_t* p, size_t n, bool& valid) {
  const uint8_t c = p[0];
  size_t needed;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    needed = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    needed = 2;
    if (c == 0xE0) lo = 0xA0;       // overlong
    else if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    needed = 3;
    if (c == 0xF0) lo = 0x90;       // overlong
    else if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    valid = false;  // stray continuation byte, C0/C1, F5..FF
    return 1;
  }
  for (size_t k = 1; k <= needed; ++k) {
    if (k >= n || p[k] < lo || p[k] > hi) {
      valid = false;
      return k;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  valid = true;
  return needed + 1;
}

// Grows s to hold `want` (<= cap) bytes, doubling for amortised O(1) appends
// but never allocating beyond `cap`. std::string's own growth (append, and even
// reserve(), which libstdc++ rounds up to twice the old capacity) could
// overshoot the limit by up to 2x, so the new buffer is built from an empty
// string, whose reserve() is exact.
void reserveBounded(std::string& s, size_t want, size_t cap) {
  if (want <= s.capacity()) return;
  size_t grow = s.capacity() * 2;
  if (grow < want) grow = want;
  if (grow > cap) grow = cap;
  std::string fresh;
  fresh.reserve(grow);
  fresh.append(s);
  s.swap(fresh);
}

// Appends p[0..n) to dst decoded as UTF-8 (invalid sequences -> U+FFFD), never
// letting dst grow beyond `limit` bytes and never cutting a code point in half.
// Returns false if something did not fit.
bool appendUtf8(std::string& dst, const uint8_t* p, size_t n, size_t limit) {
  static const char kReplacement[] = "\xEF\xBF\xBD";
  size_t i = 0;
  while (i < n) {
    // Find the longest run of valid input; valid runs are copied verbatim.
    const size_t runStart = i;
    size_t badLen = 0;
    while (i < n) {
      if (n - i >= 8 && (load64(p + i) & kHighBits) == 0) {
        i += 8;  // eight ASCII bytes
        continue;
      }
      if (p[i] < 0x80) {
        ++i;
        continue;
      }
      bool valid;
      const size_t len = utf8Sequence(p + i, n - i, valid);
      if (!valid) {
        badLen = len;
        break;
      }
      i += len;
    }
    const size_t run = i - runStart;
    if (run > 0) {
      const size_t room = limit - dst.size();
      if (run > room) {
        // The run is valid UTF-8, so stepping back over continuation bytes
        // lands on a code point boundary.
        size_t cut = room;
        while (cut > 0 && (p[runStart + cut] & 0xC0) == 0x80) --cut;
        if (limit != kNoLimit) reserveBounded(dst, dst.size() + cut, limit);
        dst.append(reinterpret_cast<const char*>(p + runStart), cut);
        return false;
      }
      if (limit != kNoLimit) reserveBounded(dst, dst.size() + run, limit);
      dst.append(reinterpret_cast<const char*>(p + runStart), run);
    }
    if (badLen == 0) break;  // reached the end
    if (limit - dst.size() < 3) return false;
    if (limit != kNoLimit) reserveBounded(dst, dst.size() + 3, limit);
    dst.append(kReplacement, 3);
    i += badLen;
  }
  return true;
}

// For the kept prefix of an oversized line: drops a trailing UTF-8 sequence that
// was cut by the truncation, so the prefix does not end in a spurious U+FFFD.
size_t trimCutSequence(const uint8_t* p, size_t n) {
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const uint8_t c = p[n - back];
    if (c < 0x80) break;                   // ASCII: nothing was cut
    if ((c & 0xC0) == 0x80) continue;      // continuation byte: keep looking for the lead
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    return back < len ? n - back : n;
  }
  return n;
}

inline bool fieldIs(const uint8_t* name, size_t len, const char* literal, size_t litLen) {
  return len == litLen && std::memcmp(name, literal, litLen) == 0;
}

}  // namespace

SseFramer::SseFramer(size_t maxEventBytes)
    : maxEventBytes_(maxEventBytes < kMinMaxEventBytes ? kMinMaxEventBytes : maxEventBytes) {}

void SseFramer::reset() {
  // A dropped oversized line or event may have grown the buffers to the limit;
  // give that memory back rather than hold it for the next connection.
  if (line_.capacity() > kKeepDataCapacity) std::string().swap(line_);
  if (data_.capacity() > kKeepDataCapacity) std::string().swap(data_);
  line_.clear();
  lineOversized_ = false;
  pendingCR_ = false;  // a new body's leading LF is a real (blank) line
  bomMatched_ = 0;
  bomDone_ = false;
  data_.clear();
  dataSeen_ = false;
  dataOversized_ = false;
  eventOversized_ = false;
  eventType_.clear();
  // An id: field of the dropped partial event must not leak into the next
  // connection (it was never dispatched, so the server never "confirmed" it).
  idBuffer_ = dispatchedId_;
  bytesSeen_ = 0;
}

void SseFramer::feed(const uint8_t* bytes, size_t n, std::vector<SseItem>& out) {
  if (n == 0) return;  // also keeps a pending CR pending
  bytesSeen_ += n;
  if (!bomDone_) {
    // Match EF BB BF a byte at a time so a BOM split across chunks is still one BOM.
    static const uint8_t kBom[3] = {0xEF, 0xBB, 0xBF};
    while (n > 0 && bomMatched_ < 3 && *bytes == kBom[bomMatched_]) {
      ++bomMatched_;
      ++bytes;
      --n;
    }
    if (bomMatched_ == 3) {
      bomDone_ = true;
    } else if (n > 0) {
      // Not a BOM after all: the bytes we held back are ordinary stream bytes.
      bomDone_ = true;
      const size_t held = bomMatched_;
      bomMatched_ = 0;
      feedBody(kBom, held, out);
    } else {
      return;  // still a possible BOM prefix; wait for more bytes
    }
  }
  feedBody(bytes, n, out);
}

void SseFramer::appendToLine(const uint8_t* p, size_t n) {
  const size_t room = maxEventBytes_ - line_.size();
  if (n > room) {
    // Keep only the prefix (enough to recognise the field) and remember that
    // the rest was dropped; the line end is still found by the caller.
    n = room;
    lineOversized_ = true;
  }
  if (n == 0) return;
  reserveBounded(line_, line_.size() + n, maxEventBytes_);
  line_.append(reinterpret_cast<const char*>(p), n);
}

void SseFramer::feedBody(const uint8_t* p, size_t n, std::vector<SseItem>& out) {
  const uint8_t* const end = p + n;
  if (pendingCR_ && p < end) {
    // The previous chunk ended in CR and that line was already processed; an
    // LF here is the second half of the same CRLF, not a blank line.
    pendingCR_ = false;
    if (*p == '\n') ++p;
  }
  while (p < end) {
    const uint8_t* eol = findLineEnd(p, end);
    if (eol == end) {
      appendToLine(p, static_cast<size_t>(end - p));
      return;
    }
    if (line_.empty() && !lineOversized_) {
      // Common case: the whole line is inside this chunk, parse it in place.
      processLine(p, static_cast<size_t>(eol - p), false, out);
    } else {
      appendToLine(p, static_cast<size_t>(eol - p));
      processLine(reinterpret_cast<const uint8_t*>(line_.data()), line_.size(), lineOversized_, out);
      line_.clear();  // keeps capacity: no allocation per line
      lineOversized_ = false;
    }
    if (*eol == '\r') {
      if (eol + 1 == end) {
        pendingCR_ = true;  // might be the first half of a CRLF split across chunks
        return;
      }
      p = eol + (eol[1] == '\n' ? 2 : 1);
    } else {
      p = eol + 1;
    }
  }
}

namespace {

// Drops the one space a field value (or comment text) may start with.
void skipOneSpace(const uint8_t*& v, size_t& vn) {
  if (vn > 0 && *v == ' ') {
    ++v;
    --vn;
  }
}

}  // namespace

void SseFramer::processLine(const uint8_t* p, size_t n, bool oversized, std::vector<SseItem>& out) {
  if (n > maxEventBytes_) {  // a long line that arrived whole inside one chunk
    n = maxEventBytes_;
    oversized = true;
  }
  if (n == 0) {
    dispatch(out);  // cannot be oversized: maxEventBytes_ > 0
    return;
  }
  if (p[0] == ':') {
    // WHATWG ignores comments; we surface them because heartbeats matter for liveness.
    const uint8_t* v = p + 1;
    size_t vn = n - 1;
    skipOneSpace(v, vn);
    if (oversized) vn = trimCutSequence(v, vn);
    SseItem item;
    item.kind = SseItem::Kind::Comment;
    appendUtf8(item.data, v, vn, kNoLimit);
    item.oversized = oversized;
    out.push_back(std::move(item));
    return;
  }
  // Field name up to the first ':'; no colon means the whole line is the name
  // and the value is empty. One space after the colon is dropped.
  const uint8_t* colon = static_cast<const uint8_t*>(std::memchr(p, ':', n));
  const size_t nameLen = colon ? static_cast<size_t>(colon - p) : n;
  const uint8_t* v = colon ? colon + 1 : p + n;
  size_t vn = colon ? n - nameLen - 1 : 0;
  skipOneSpace(v, vn);
  if (oversized) vn = trimCutSequence(v, vn);
  if (fieldIs(p, nameLen, "data", 4)) {
    appendData(v, vn, oversized);
  } else if (fieldIs(p, nameLen, "event", 5)) {
    eventType_.clear();
    appendUtf8(eventType_, v, vn, kNoLimit);  // already bounded by the line limit
    if (oversized) eventOversized_ = true;     // the type is only a prefix
  } else if (fieldIs(p, nameLen, "id", 2)) {
    if (oversized) {
      // A truncated id would be sent back as Last-Event-ID and resume at the
      // wrong place, so drop it; the event is flagged instead.
      eventOversized_ = true;
    } else if (std::memchr(v, 0, vn) == nullptr) {
      idBuffer_.clear();
      appendUtf8(idBuffer_, v, vn, kNoLimit);
    }
  } else if (fieldIs(p, nameLen, "retry", 5)) {
    out.push_back(retryItem(v, vn, oversized));
  }
  // Any other field name is ignored, as the spec requires.
}

void SseFramer::appendData(const uint8_t* v, size_t vn, bool oversized) {
  if (oversized) eventOversized_ = true;
  if (!dataOversized_) {
    // Once truncated we stop appending, so `data` stays a true prefix.
    reserveBounded(data_, std::min(maxEventBytes_, data_.size() + 1 + vn), maxEventBytes_);
    bool fits = true;
    if (dataSeen_) {
      if (data_.size() < maxEventBytes_) data_.push_back('\n');
      else fits = false;
    }
    if (fits) fits = appendUtf8(data_, v, vn, maxEventBytes_);
    if (!fits || oversized) {
      dataOversized_ = true;
      eventOversized_ = true;
    }
  }
  dataSeen_ = true;
}

SseItem SseFramer::retryItem(const uint8_t* v, size_t vn, bool oversized) {
  bool digits = !oversized && vn > 0;  // "" is not a number (conformance: invalid_retry)
  uint64_t value = 0;
  for (size_t i = 0; digits && i < vn; ++i) {
    const unsigned d = static_cast<unsigned>(v[i]) - '0';
    if (d > 9) {
      digits = false;
      break;
    }
    // Saturate rather than wrap: an absurd retry is "very long", not small.
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    value = value > (max - d) / 10 ? max : value * 10 + d;
  }
  SseItem item;
  if (digits) {
    retry_ = value;
    item.kind = SseItem::Kind::Retry;
    item.retry = value;
  } else {
    item.kind = SseItem::Kind::InvalidRetry;
    appendUtf8(item.data, v, vn, kNoLimit);
    item.oversized = oversized;
  }
  return item;
}

void SseFramer::dispatch(std::vector<SseItem>& out) {
  // WHATWG sets the last event ID string at every blank line, even when there
  // is no data to dispatch (an "id:" block on its own still moves it).
  dispatchedId_ = idBuffer_;
  if (dataSeen_) {
    SseItem item;
    item.kind = SseItem::Kind::Event;
    if (eventType_.empty()) item.type = "message";
    else item.type = eventType_;
    if (data_.capacity() > kKeepDataCapacity) {
      item.data = std::move(data_);
      data_ = std::string();
    } else {
      item.data = data_;  // one exact-size allocation; data_ keeps its capacity
    }
    item.lastEventId = dispatchedId_;
    item.oversized = eventOversized_;
    out.push_back(std::move(item));
  }
  data_.clear();
  dataSeen_ = false;
  dataOversized_ = false;
  eventOversized_ = false;
  eventType_.clear();
}

}  // namespace agui_sync
