// libFuzzer target: SseFramer (src/sse_framer.*).
//
// Input layout: [limit][chunk seed] stream...
//   limit       byte < 0xC0: maxEventBytes = that value (0..15 are raised to 16 by
//               the framer, so tiny limits and the clamp are both exercised);
//               otherwise the framer's default (1 MiB, i.e. effectively no limit).
//   chunk seed  seeds the PRNG that cuts the stream into chunks and picks the
//               position of a reconnect (reset()) for the second pass.
//
// Invariants:
//  1. Chunking does not matter: the whole stream in one feed, in PRNG-sized
//     chunks and byte by byte give identical items (every field).
//  2. The items equal those of an independent reference model written here from
//     the WHATWG "parse an event stream" text (decode the whole stream as UTF-8,
//     then split lines), extended only by the documented limit behaviour: a
//     line longer than maxEventBytes is kept as a prefix and marks its item
//     `oversized` (an over-long id is dropped, an over-long retry is invalid),
//     and event data is capped at maxEventBytes (a prefix, marked oversized).
//  3. No data, comment, type or id exceeds maxEventBytes; everything is valid
//     UTF-8; lastEventId() and retry() match the model.
//  4. reset() in the middle: the second connection parses like a fresh stream
//     whose last event id starts at the last *dispatched* one; retry is kept.
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "../tests/support/whatwg_utf8.h"
#include "receive/sse_framer.h"

using agui_sync::SseFramer;
using agui_sync::SseItem;

namespace {

// ---------------------------------------------------------------------------
// Reference model
// ---------------------------------------------------------------------------

using agui_test::whatwgUtf8Decode;  // tests/support/whatwg_utf8.h

struct RefItem {
  SseItem::Kind kind = SseItem::Kind::Event;
  std::string type, data, lastEventId;
  uint64_t retry = 0;
  bool oversized = false;      // expected value of SseItem::oversized
  bool dataPrefixOnly = false;  // the framer's data need only be a prefix of `data`
  bool typePrefixOnly = false;  // same for the event type
};

struct RefResult {
  std::vector<RefItem> items;
  std::string dispatchedId;
  std::optional<uint64_t> retry;
};

// Splits on CRLF / CR / LF; the unterminated tail is dropped (never dispatched).
template <typename Str, typename Ch>
std::vector<Str> splitLines(const Str& s) {
  std::vector<Str> lines;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    const Ch c = s[i];
    if (c == '\r' || c == '\n') {
      lines.push_back(s.substr(start, i - start));
      i += (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
      start = i;
    } else {
      ++i;
    }
  }
  return lines;
}

RefResult referenceParse(const std::string& raw, size_t limit, const std::string& initialId,
                         std::optional<uint64_t> initialRetry) {
  RefResult r;
  r.dispatchedId = initialId;
  r.retry = initialRetry;
  std::string body = raw;
  if (body.size() >= 3 && std::memcmp(body.data(), "\xEF\xBB\xBF", 3) == 0) body.erase(0, 3);
  // A raw CR/LF byte is never part of a UTF-8 sequence and the decoder emits it
  // unchanged, so the n-th raw line is the n-th decoded line; the raw one gives
  // the byte length the limit applies to.
  const std::string text = whatwgUtf8Decode(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  const std::vector<std::string> rawLines = splitLines<std::string, char>(body);
  const std::vector<std::string> lines = splitLines<std::string, char>(text);
  FUZZ_CHECK(rawLines.size() == lines.size(), "model: %zu raw vs %zu decoded lines", rawLines.size(), lines.size());

  std::string dataBuffer, typeBuffer, idBuffer = initialId;
  bool typeTruncated = false, dataLineTooLong = false, blockFlagged = false;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    const bool tooLong = rawLines[li].size() > limit;
    if (line.empty()) {
      // Dispatch the event.
      r.dispatchedId = idBuffer;
      if (!dataBuffer.empty()) {
        RefItem it;
        it.kind = SseItem::Kind::Event;
        it.data = dataBuffer.substr(0, dataBuffer.size() - 1);  // drop the trailing LF
        it.type = typeBuffer.empty() ? "message" : typeBuffer;
        it.typePrefixOnly = typeTruncated;
        it.lastEventId = idBuffer;
        const bool dataCut = dataLineTooLong || it.data.size() > limit;
        it.dataPrefixOnly = dataCut;
        it.oversized = dataCut || blockFlagged;
        r.items.push_back(std::move(it));
      }
      dataBuffer.clear();
      typeBuffer.clear();
      typeTruncated = dataLineTooLong = blockFlagged = false;
      continue;
    }
    if (line[0] == ':') {
      RefItem it;
      it.kind = SseItem::Kind::Comment;
      it.data = line.substr(1);
      if (!it.data.empty() && it.data[0] == ' ') it.data.erase(0, 1);
      it.oversized = tooLong;
      it.dataPrefixOnly = tooLong;
      r.items.push_back(std::move(it));
      continue;
    }
    std::string name, value;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) {
      name = line;
    } else {
      name = line.substr(0, colon);
      value = line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    }
    if (name == "event") {
      typeBuffer = value;
      typeTruncated = tooLong;
      blockFlagged = blockFlagged || tooLong;
    } else if (name == "data") {
      dataBuffer += value;
      dataBuffer += '\n';
      dataLineTooLong = dataLineTooLong || tooLong;
      blockFlagged = blockFlagged || tooLong;
    } else if (name == "id") {
      if (tooLong) blockFlagged = true;  // documented: a cut id is dropped, the event flagged
      else if (value.find('\0') == std::string::npos) idBuffer = value;
    } else if (name == "retry") {
      RefItem it;
      bool digits = !tooLong && !value.empty();  // documented: "" is an invalid retry
      uint64_t v = 0;
      const uint64_t max = std::numeric_limits<uint64_t>::max();
      for (char c : value) {
        if (c < '0' || c > '9') {
          digits = false;
          break;
        }
        const uint64_t d = static_cast<uint64_t>(c - '0');
        v = (v > (max - d) / 10) ? max : v * 10 + d;  // documented: saturates
      }
      if (digits) {
        it.kind = SseItem::Kind::Retry;
        it.retry = v;
        r.retry = v;
      } else {
        it.kind = SseItem::Kind::InvalidRetry;
        it.data = value;
        it.oversized = tooLong;
        it.dataPrefixOnly = tooLong;
      }
      r.items.push_back(std::move(it));
    }
    // Other field names are ignored.
  }
  return r;
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

const char* kindName(SseItem::Kind k) {
  switch (k) {
    case SseItem::Kind::Event: return "event";
    case SseItem::Kind::Comment: return "comment";
    case SseItem::Kind::Retry: return "retry";
    case SseItem::Kind::InvalidRetry: return "invalid-retry";
  }
  return "?";
}

// Is `part` a prefix of `whole`?
bool isPrefixOf(const std::string& part, const std::string& whole) {
  return part.size() <= whole.size() && whole.compare(0, part.size(), part) == 0;
}

void checkItemShape(const SseItem& it, size_t limit) {
  FUZZ_CHECK(fuzz::validUtf8(it.data), "%s data is not valid UTF-8: %s", kindName(it.kind), fuzz::excerpt(it.data).c_str());
  FUZZ_CHECK(fuzz::validUtf8(it.type), "type is not valid UTF-8");
  FUZZ_CHECK(fuzz::validUtf8(it.lastEventId), "lastEventId is not valid UTF-8");
  FUZZ_CHECK(it.data.find('\r') == std::string::npos, "%s data contains CR", kindName(it.kind));
  // Event data is capped at maxEventBytes after decoding. Other texts come from
  // one line of at most maxEventBytes raw bytes; decoding can turn each invalid
  // byte into a 3-byte U+FFFD, so they are bounded by 3x the limit.
  const size_t lineTextMax = 3 * limit;
  if (it.kind == SseItem::Kind::Event)
    FUZZ_CHECK(it.data.size() <= limit, "event data of %zu bytes exceeds maxEventBytes %zu", it.data.size(), limit);
  else
    FUZZ_CHECK(it.data.size() <= lineTextMax, "%s text of %zu bytes from a line of <= %zu bytes", kindName(it.kind),
               it.data.size(), limit);
  if (it.kind == SseItem::Kind::Event) {
    FUZZ_CHECK(!it.type.empty() && it.type.size() <= lineTextMax, "event type size %zu", it.type.size());
    FUZZ_CHECK(it.type.find_first_of("\r\n") == std::string::npos, "event type contains a line break");
    FUZZ_CHECK(it.lastEventId.size() <= lineTextMax, "lastEventId of %zu bytes", it.lastEventId.size());
    FUZZ_CHECK(it.lastEventId.find_first_of(std::string("\r\n\0", 3)) == std::string::npos,
               "lastEventId contains CR, LF or NUL");
  } else {
    FUZZ_CHECK(it.data.find('\n') == std::string::npos, "%s text contains LF", kindName(it.kind));
  }
}

void compareWithModel(const std::vector<SseItem>& got, const std::vector<RefItem>& want, size_t limit,
                      const char* pass) {
  FUZZ_CHECK(got.size() == want.size(), "[%s] framer produced %zu items, model %zu", pass, got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const SseItem& g = got[i];
    const RefItem& w = want[i];
    checkItemShape(g, limit);
    FUZZ_CHECK(g.kind == w.kind, "[%s] item %zu: kind %s, model %s", pass, i, kindName(g.kind), kindName(w.kind));
    if (g.kind == SseItem::Kind::Retry) {
      FUZZ_CHECK(g.retry == w.retry, "[%s] item %zu: retry %llu, model %llu", pass, i,
                 static_cast<unsigned long long>(g.retry), static_cast<unsigned long long>(w.retry));
      continue;
    }
    FUZZ_CHECK(g.oversized == w.oversized, "[%s] item %zu (%s): oversized %d, model %d", pass, i, kindName(g.kind),
               g.oversized, w.oversized);
    if (w.dataPrefixOnly)
      FUZZ_CHECK(isPrefixOf(g.data, w.data), "[%s] item %zu (%s): data is not a prefix of the model's\n  got   %s\n  model %s",
                 pass, i, kindName(g.kind), fuzz::excerpt(g.data).c_str(), fuzz::excerpt(w.data).c_str());
    else
      FUZZ_CHECK(g.data == w.data, "[%s] item %zu (%s): data differs\n  got   %s\n  model %s", pass, i,
                 kindName(g.kind), fuzz::excerpt(g.data).c_str(), fuzz::excerpt(w.data).c_str());
    if (g.kind == SseItem::Kind::Event) {
      if (w.typePrefixOnly)
        FUZZ_CHECK(isPrefixOf(g.type, w.type), "[%s] item %zu: type is not a prefix of the model's", pass, i);
      else
        FUZZ_CHECK(g.type == w.type, "[%s] item %zu: type '%s', model '%s'", pass, i, fuzz::excerpt(g.type).c_str(),
                   fuzz::excerpt(w.type).c_str());
      FUZZ_CHECK(g.lastEventId == w.lastEventId, "[%s] item %zu: lastEventId '%s', model '%s'", pass, i,
                 fuzz::excerpt(g.lastEventId).c_str(), fuzz::excerpt(w.lastEventId).c_str());
    }
  }
}

void checkSame(const std::vector<SseItem>& a, const std::vector<SseItem>& b, const char* what) {
  FUZZ_CHECK(a.size() == b.size(), "%s: %zu vs %zu items", what, a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i].kind == b[i].kind && a[i].type == b[i].type && a[i].data == b[i].data &&
                      a[i].lastEventId == b[i].lastEventId && a[i].retry == b[i].retry &&
                      a[i].oversized == b[i].oversized;
    FUZZ_CHECK(same, "%s: item %zu differs (%s '%s' vs %s '%s')", what, i, kindName(a[i].kind),
               fuzz::excerpt(a[i].data).c_str(), kindName(b[i].kind), fuzz::excerpt(b[i].data).c_str());
  }
}

void feedChunked(SseFramer& f, const uint8_t* p, size_t n, fuzz::Rng& rng, std::vector<SseItem>& out) {
  size_t pos = 0;
  while (pos < n) {
    const size_t len = std::min(rng.chunk(), n - pos);
    f.feed(p + pos, len, out);
    pos += len;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t requested = data[0] < 0xC0 ? data[0] : (1u << 20);
  const size_t limit = requested < 16 ? 16 : requested;
  const uint8_t seed = data[1];
  const uint8_t* stream = data + 2;
  const size_t n = size - 2;
  const std::string streamText(reinterpret_cast<const char*>(stream), n);

  // 1. One feed, compared with the model.
  SseFramer whole(requested);
  std::vector<SseItem> wholeItems;
  whole.feed(stream, n, wholeItems);
  const RefResult model = referenceParse(streamText, limit, "", std::nullopt);
  compareWithModel(wholeItems, model.items, limit, "whole");
  FUZZ_CHECK(whole.lastEventId() == model.dispatchedId, "lastEventId() '%s', model '%s'",
             fuzz::excerpt(whole.lastEventId()).c_str(), fuzz::excerpt(model.dispatchedId).c_str());
  FUZZ_CHECK(whole.retry() == model.retry, "retry() differs from the model");
  FUZZ_CHECK(whole.bytesSeen() == n, "bytesSeen %llu, fed %zu", static_cast<unsigned long long>(whole.bytesSeen()), n);

  // 2. PRNG chunks and single bytes give the same items.
  {
    fuzz::Rng rng(seed);
    SseFramer chunked(requested);
    std::vector<SseItem> items;
    feedChunked(chunked, stream, n, rng, items);
    checkSame(wholeItems, items, "chunked vs whole");
    FUZZ_CHECK(chunked.lastEventId() == whole.lastEventId() && chunked.retry() == whole.retry(),
               "chunked: final id/retry differ");
  }
  {
    SseFramer bytewise(requested);
    std::vector<SseItem> items;
    for (size_t i = 0; i < n; ++i) bytewise.feed(stream + i, 1, items);
    checkSame(wholeItems, items, "byte-by-byte vs whole");
    FUZZ_CHECK(bytewise.lastEventId() == whole.lastEventId() && bytewise.retry() == whole.retry(),
               "byte-by-byte: final id/retry differ");
  }

  // 3. A reconnect at a PRNG-chosen offset.
  {
    fuzz::Rng rng(seed ^ 0xA5u);
    const size_t cut = n == 0 ? 0 : rng.range(0, n);
    SseFramer f(requested);
    std::vector<SseItem> first, second;
    feedChunked(f, stream, cut, rng, first);
    const RefResult modelA = referenceParse(streamText.substr(0, cut), limit, "", std::nullopt);
    compareWithModel(first, modelA.items, limit, "before reset");
    f.reset();
    FUZZ_CHECK(f.bytesSeen() == 0, "bytesSeen not cleared by reset()");
    FUZZ_CHECK(f.lastEventId() == modelA.dispatchedId, "reset() changed lastEventId()");
    feedChunked(f, stream + cut, n - cut, rng, second);
    const RefResult modelB = referenceParse(streamText.substr(cut), limit, modelA.dispatchedId, modelA.retry);
    compareWithModel(second, modelB.items, limit, "after reset");
    FUZZ_CHECK(f.lastEventId() == modelB.dispatchedId, "after reset: lastEventId() '%s', model '%s'",
               fuzz::excerpt(f.lastEventId()).c_str(), fuzz::excerpt(modelB.dispatchedId).c_str());
    FUZZ_CHECK(f.retry() == modelB.retry, "after reset: retry() differs from the model");
  }
  return 0;
}
