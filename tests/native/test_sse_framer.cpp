// The SSE framer: unit tests per WHATWG rule, bounded-memory tests, a
// differential test against a deliberately naive reference parser, and the
// external conformance suites in $AGUI_CONFORMANCE_DIR/sse (each fed in the given
// chunks, byte by byte, and at seeded random chunk sizes).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "receive/sse_framer.h"
#include "../support/whatwg_utf8.h"
#include "test_support.h"

using agui_sync::SseFramer;
using agui_sync::SseItem;
using Kind = agui_sync::SseItem::Kind;
using nlohmann::json;
using namespace std::string_literals;

// ---------------------------------------------------------------------------
// Allocation tracking. The bounded-memory tests must prove that a 50 MB line is
// not buffered, which only the allocator can tell us. Replacing the global
// operator new is program-wide, so it only records while a test switches it on
// and otherwise just forwards to malloc. Define AGUI_TEST_NO_NEW_HOOK if another
// test file ever needs its own replacement (those tests then only check results).
// Sanitizers bring their own operator new family (and would report our malloc-
// backed one as mismatched, or lose new/delete mismatch checks for the whole
// binary), so the hook is off in sanitizer builds.
// ---------------------------------------------------------------------------
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AGUI_TEST_NO_NEW_HOOK 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#ifndef AGUI_TEST_NO_NEW_HOOK
#define AGUI_TEST_NO_NEW_HOOK 1
#endif
#endif
#endif
namespace {
std::atomic<bool> gTrackAllocs{false};
std::atomic<size_t> gAllocTotal{0};
std::atomic<size_t> gAllocLargest{0};
}  // namespace

#ifndef AGUI_TEST_NO_NEW_HOOK
// GCC inlines these into library code and then mistakes the malloc/free pairing
// for a new/free mismatch; the pairing is correct by construction.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (gTrackAllocs.load(std::memory_order_relaxed)) {
    gAllocTotal.fetch_add(n, std::memory_order_relaxed);
    size_t prev = gAllocLargest.load(std::memory_order_relaxed);
    while (n > prev && !gAllocLargest.compare_exchange_weak(prev, n, std::memory_order_relaxed)) {
    }
  }
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#define AGUI_ALLOC_TRACKING 1
#else
#define AGUI_ALLOC_TRACKING 0
#endif

namespace {

struct AllocScope {
  AllocScope() {
    gAllocTotal = 0;
    gAllocLargest = 0;
    gTrackAllocs = true;
  }
  ~AllocScope() { gTrackAllocs = false; }
};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

std::vector<SseItem> feedChunks(SseFramer& f, const std::vector<std::string>& chunks) {
  std::vector<SseItem> out;
  for (const std::string& c : chunks) f.feed(c, out);
  return out;
}

std::vector<SseItem> feedOne(const std::string& s, size_t maxBytes = 1u << 20) {
  SseFramer f(maxBytes);
  std::vector<SseItem> out;
  f.feed(s, out);
  return out;
}

std::vector<SseItem> eventsOnly(const std::vector<SseItem>& items) {
  std::vector<SseItem> ev;
  for (const SseItem& i : items)
    if (i.kind == Kind::Event) ev.push_back(i);
  return ev;
}

std::vector<SseItem> byteByByte(SseFramer& f, const std::string& s) {
  std::vector<SseItem> out;
  for (char c : s) f.feed(std::string(1, c), out);
  return out;
}

// Compact, comparable rendering of an item list (used for chunking-independence).
std::string render(const std::vector<SseItem>& items) {
  std::string r;
  for (const SseItem& i : items) {
    switch (i.kind) {
      case Kind::Event: r += "E[" + i.type + "|" + i.data + "|" + i.lastEventId + "]"; break;
      case Kind::Comment: r += "C[" + i.data + "]"; break;
      case Kind::Retry: r += "R[" + std::to_string(i.retry) + "]"; break;
      case Kind::InvalidRetry: r += "I[" + i.data + "]"; break;
    }
    if (i.oversized) r += "!";
    r += "\n";
  }
  return r;
}

const std::string kFFFD = "\xEF\xBF\xBD";
const std::string kBOM = "\xEF\xBB\xBF";

std::string b64decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = val(c);
    if (v < 0) throw std::runtime_error("bad base64 character");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("sse: base64 helper decodes the standard alphabet", "[sse]") {
  CHECK(b64decode("") == "");
  CHECK(b64decode("Zg==") == "f");
  CHECK(b64decode("Zm8=") == "fo");
  CHECK(b64decode("Zm9v") == "foo");
  CHECK(b64decode("77u/") == kBOM);
  CHECK(b64decode("+/+/") == std::string("\xFB\xFF\xBF"));
}

// ---------------------------------------------------------------------------
// Line endings
// ---------------------------------------------------------------------------

TEST_CASE("sse: LF, CR and CRLF all end lines", "[sse]") {
  for (const char* eol : {"\n", "\r", "\r\n"}) {
    INFO("eol=" << json(eol).dump());
    std::string e(eol);
    auto ev = eventsOnly(feedOne("data: a" + e + "data: b" + e + e + "data: c" + e + e));
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].data == "a\nb");
    CHECK(ev[1].data == "c");
  }
  // Mixed in one stream.
  auto ev = eventsOnly(feedOne("data: 1\rdata: 2\ndata: 3\r\n\r\ndata: 4\n\r"));
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].data == "1\n2\n3");
  CHECK(ev[1].data == "4");
  // LF CR is two line ends, not one: it is a blank line and dispatches.
  CHECK(eventsOnly(feedOne("data: x\n\r")).size() == 1);
}

TEST_CASE("sse: a CRLF split across chunks is one line end", "[sse]") {
  SseFramer f;
  auto out = feedChunks(f, {"data: A\r", "\ndata: B\r", "\n", "\r", "\n"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "A\nB");

  // Empty chunks between CR and LF do not break the pair.
  SseFramer g;
  out = feedChunks(g, {"data: A\r", "", "", "\ndata: B\r\n", "\r", "", "\n"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "A\nB");

  // CR at a chunk end followed by CR: two line ends (the second is blank).
  SseFramer h;
  out = feedChunks(h, {"data: A\r", "\r"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "A");

  // CR at a chunk end followed by ordinary text: the CR alone ended the line.
  SseFramer k;
  out = feedChunks(k, {"data: A\r", "data: B\r", "\r"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "A\nB");

  // A lone CR chunk dispatches exactly once even if an LF follows.
  SseFramer m;
  out = feedChunks(m, {"data: one\r", "\r", "\n"});
  CHECK(out.size() == 1);
}

// ---------------------------------------------------------------------------
// BOM
// ---------------------------------------------------------------------------

TEST_CASE("sse: a leading BOM is stripped once, wherever chunks split it", "[sse]") {
  const std::string body = kBOM + "data: x\n\n";
  for (size_t cut1 = 0; cut1 <= 4; ++cut1) {
    for (size_t cut2 = cut1; cut2 <= 4; ++cut2) {
      SseFramer f;
      auto out = feedChunks(f, {body.substr(0, cut1), body.substr(cut1, cut2 - cut1), body.substr(cut2)});
      INFO("cuts " << cut1 << "," << cut2);
      REQUIRE(out.size() == 1);
      CHECK(out[0].data == "x");
      CHECK(f.bytesSeen() == body.size());
    }
  }
  // A second BOM is part of the first field name, so that line is an unknown field.
  auto ev = eventsOnly(feedOne(kBOM + kBOM + "data: 1\n\ndata: 2\n\n"));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == "2");
  // A BOM later in the stream is data.
  ev = eventsOnly(feedOne("data: a\n\n" + kBOM + "data: b\n\ndata: " + kBOM + "c\n\n"));
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].data == "a");
  CHECK(ev[1].data == kBOM + "c");
}

TEST_CASE("sse: a partial BOM is ordinary bytes", "[sse]") {
  // EF then 'd': the EF belongs to the field name, so "\xEFdata" is unknown.
  SseFramer f;
  auto out = feedChunks(f, {"\xEF", "data: x\n\ndata: y\n\n"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "y");
  // EF BB then ':' — a comment whose "name" starts with the two bytes: the
  // line does not start with ':' so it is an unknown field; nothing is lost.
  SseFramer g;
  out = feedChunks(g, {"\xEF\xBB", "\n", "data: z\n\n"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "z");
  // The held-back prefix is delivered through the normal UTF-8 decoding.
  SseFramer h;
  out = feedChunks(h, {"\xEF\xBB", "x"});  // no line end yet
  CHECK(out.empty());
  out = feedChunks(h, {"\n\n"});
  CHECK(out.empty());  // unknown field "\xEF\xBBx"
}

TEST_CASE("sse: reset() expects a BOM again", "[sse]") {
  SseFramer f;
  auto out = feedChunks(f, {kBOM + "data: 1\n\n"});
  f.reset();
  auto out2 = feedChunks(f, {"\xEF\xBB", "\xBF" "data: 2\n\n"});
  REQUIRE(out.size() == 1);
  REQUIRE(out2.size() == 1);
  CHECK(out2[0].data == "2");
  f.endOfStream();
  out = feedChunks(f, {kBOM + "data: 3\n\n"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "3");
}

// ---------------------------------------------------------------------------
// UTF-8
// ---------------------------------------------------------------------------

TEST_CASE("sse: multi-byte UTF-8 split across chunks is reassembled", "[sse]") {
  const std::string s = "event: \xE2\x82\xAC\ndata: \xE2\x82\xAC\xE8\xB1\x86\xF0\x9F\x98\x80\nid: \xC3\xA9\n\n";
  SseFramer f;
  auto out = byteByByte(f, s);
  REQUIRE(out.size() == 1);
  CHECK(out[0].type == "\xE2\x82\xAC");
  CHECK(out[0].data == "\xE2\x82\xAC\xE8\xB1\x86\xF0\x9F\x98\x80");
  CHECK(out[0].lastEventId == "\xC3\xA9");
}

TEST_CASE("sse: invalid UTF-8 becomes U+FFFD per the WHATWG decoder", "[sse]") {
  struct Case {
    std::string in, expected;
  };
  const std::vector<Case> cases = {
      {"\xFF", kFFFD},
      {"a\x80z", "a" + kFFFD + "z"},
      {"\xC0\xAF", kFFFD + kFFFD},               // overlong: C0 is never valid
      {"\xC2", kFFFD},                           // truncated by the line end
      {"\xE2\x82", kFFFD},                       // one U+FFFD for the maximal subpart
      {"\xE2\x82" "A", kFFFD + "A"},             // the breaking byte is kept
      {"\xE0\x80\x80", kFFFD + kFFFD + kFFFD},   // overlong 3-byte
      {"\xED\xA0\x80", kFFFD + kFFFD + kFFFD},   // surrogate
      {"\xED\x9F\xBF", "\xED\x9F\xBF"},          // U+D7FF is fine
      {"\xF0\x9F\x98", kFFFD},                   // truncated 4-byte
      {"\xF0\x8F\xBF\xBF", kFFFD + kFFFD + kFFFD + kFFFD},
      {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},  // U+10FFFF
      {"\xF4\x90\x80\x80", kFFFD + kFFFD + kFFFD + kFFFD},
      {"\xF5\x80", kFFFD + kFFFD},
      {"ok\xE2\x80\xA6", "ok\xE2\x80\xA6"},
      {std::string("\0", 1), std::string("\0", 1)},
  };
  for (const Case& c : cases) {
    INFO("input " << json::binary(std::vector<uint8_t>(c.in.begin(), c.in.end())).dump());
    // One chunk, and byte by byte (the decoder must not care about chunking).
    auto ev = eventsOnly(feedOne("data:" + c.in + "\n\n"));
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].data == c.expected);
    SseFramer f;
    ev = eventsOnly(byteByByte(f, "data:" + c.in + "\r\n\r\n"));
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].data == c.expected);
  }
  // Every text-carrying field is decoded.
  auto out = feedOne(":\xFF\nevent:\xFF\nid:\xFF\nretry:\xFF\ndata:\xFF\n\n");
  REQUIRE(out.size() == 3);
  CHECK(out[0].kind == Kind::Comment);
  CHECK(out[0].data == kFFFD);
  CHECK(out[1].kind == Kind::InvalidRetry);
  CHECK(out[1].data == kFFFD);
  CHECK(out[2].type == kFFFD);
  CHECK(out[2].lastEventId == kFFFD);
}

// ---------------------------------------------------------------------------
// Comments and field syntax
// ---------------------------------------------------------------------------

TEST_CASE("sse: comments are surfaced with one leading space removed", "[sse]") {
  auto out = feedOne(": hello\n:  two\n:\n:x\n:: y\ndata: d\n\n: after\n");
  REQUIRE(out.size() == 7);
  const char* expected[] = {"hello", " two", "", "x", ": y"};
  for (int i = 0; i < 5; ++i) {
    CHECK(out[i].kind == Kind::Comment);
    CHECK(out[i].data == expected[i]);
  }
  CHECK(out[5].kind == Kind::Event);
  CHECK(out[5].data == "d");
  CHECK(out[6].kind == Kind::Comment);
  CHECK(out[6].data == "after");
  // A comment inside an event does not interrupt it, and is emitted when seen.
  out = feedOne("data: a\n: ping\ndata: b\n\n");
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind == Kind::Comment);
  CHECK(out[1].data == "a\nb");
  // An unterminated comment is not emitted.
  CHECK(feedOne(": pending").empty());
}

TEST_CASE("sse: field syntax (no colon, one leading space, unknown fields)", "[sse]") {
  auto ev = eventsOnly(feedOne("data\n\n"));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == "");
  ev = eventsOnly(feedOne("data\ndata\n\n"));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == "\n");
  ev = eventsOnly(feedOne("data:  two spaces\ndata:\ttab\ndata:none\ndata: a:b\n\n"));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == " two spaces\n\ttab\nnone\na:b");
  // Field names are case-sensitive and must match exactly.
  ev = eventsOnly(feedOne("Data: x\ndata : y\n data: z\ndatax: w\nfoo: bar\nevent\ndata: ok\n\n"));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == "ok");
  CHECK(ev[0].type == "message");  // bare "event" sets the type to "" -> message
}

TEST_CASE("sse: data lines are joined with LF; empty data still dispatches", "[sse]") {
  auto ev = eventsOnly(feedOne("data: a\ndata:\ndata: c\n\ndata:\n\ndata\n\n"));
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].data == "a\n\nc");
  CHECK(ev[1].data == "");
  CHECK(ev[2].data == "");
  // A trailing data line of "" gives a trailing LF in the joined data.
  ev = eventsOnly(feedOne("data: a\ndata:\n\n"));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == "a\n");
}

TEST_CASE("sse: event type defaults to message and resets after each blank line", "[sse]") {
  auto ev = eventsOnly(feedOne("event: a\ndata: 1\n\ndata: 2\n\nevent: b\n\ndata: 3\n\nevent:\ndata: 4\n\n"
                               "event: x\nevent: y\ndata: 5\n\nevent:  sp\ndata: 6\n\n"));
  REQUIRE(ev.size() == 6);
  CHECK(ev[0].type == "a");
  CHECK(ev[1].type == "message");
  CHECK(ev[2].type == "message");  // "event: b" was dropped with its data-less block
  CHECK(ev[3].type == "message");
  CHECK(ev[4].type == "y");
  CHECK(ev[5].type == " sp");
}

TEST_CASE("sse: retry accepts only ASCII digits", "[sse]") {
  SseFramer f;
  CHECK_FALSE(f.retry().has_value());
  std::vector<SseItem> out;
  f.feed("retry: 1500\nretry\nretry:\nretry: 15x\nretry:  15\nretry: -1\nretry: 1.5\nretry: +1\n", out);
  REQUIRE(out.size() == 8);
  CHECK(out[0].kind == Kind::Retry);
  CHECK(out[0].retry == 1500);
  const char* invalid[] = {"", "", "15x", " 15", "-1", "1.5", "+1"};
  for (int i = 0; i < 7; ++i) {
    CHECK(out[i + 1].kind == Kind::InvalidRetry);
    CHECK(out[i + 1].data == invalid[i]);
  }
  REQUIRE(f.retry().has_value());
  CHECK(*f.retry() == 1500);
  out.clear();
  f.feed("retry:0300\n", out);  // decimal, not octal
  CHECK(*f.retry() == 300);
  f.feed("retry: 0\n", out);
  CHECK(*f.retry() == 0);
  f.feed("retry: 18446744073709551615\n", out);
  CHECK(*f.retry() == 18446744073709551615ull);
  f.feed("retry: 99999999999999999999999999\n", out);  // saturates instead of wrapping
  CHECK(*f.retry() == 18446744073709551615ull);
  // Retry items are emitted in stream order, independently of dispatch.
  out = feedOne("data: a\nretry: 5\n\n");
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind == Kind::Retry);
  CHECK(out[1].kind == Kind::Event);
}

TEST_CASE("sse: id handling (NUL, empty, persistence, data-less blocks)", "[sse]") {
  SseFramer f;
  std::vector<SseItem> out;
  f.feed("id: 1\ndata: a\n\ndata: b\n\nid: bad\0id\ndata: c\n\nid\ndata: d\n\n"s, out);
  REQUIRE(out.size() == 4);
  CHECK(out[0].lastEventId == "1");
  CHECK(out[1].lastEventId == "1");
  CHECK(out[2].lastEventId == "1");  // id with NUL ignored
  CHECK(out[3].lastEventId == "");   // bare "id" resets it
  CHECK(f.lastEventId() == "");
  // A block with only an id still moves the last event ID (WHATWG dispatch step 1).
  out.clear();
  f.feed("id: 42\n\n", out);
  CHECK(out.empty());
  CHECK(f.lastEventId() == "42");
  f.feed("id:  spaced\n\n", out);
  CHECK(f.lastEventId() == " spaced");
  // An id seen but not yet followed by a blank line is not "dispatched".
  f.feed("id: 43\ndata: x\n", out);
  CHECK(f.lastEventId() == " spaced");
  f.feed("\n", out);
  CHECK(f.lastEventId() == "43");
  REQUIRE(out.size() == 1);
  CHECK(out[0].lastEventId == "43");
}

TEST_CASE("sse: events dispatch only on a blank line, never at end of stream", "[sse]") {
  SseFramer f;
  std::vector<SseItem> out;
  f.feed("data: a\n", out);
  CHECK(out.empty());
  f.feed("data: b", out);
  CHECK(out.empty());
  f.endOfStream();
  f.feed("\n\n", out);
  CHECK(out.empty());  // the partial event was dropped
  f.feed("data: c\n\n", out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "c");
  // Blank lines with no data dispatch nothing.
  CHECK(feedOne("\n\n\r\n\r\r\n").empty());
  CHECK(feedOne("event: x\nid: 1\n\n").empty());
}

TEST_CASE("sse: reset() drops partial state but keeps the dispatched id and retry", "[sse]") {
  SseFramer f;
  std::vector<SseItem> out;
  f.feed("retry: 700\nid: good\ndata: 1\n\nid: partial\nevent: t\ndata: lost\ndata: li", out);
  REQUIRE(out.size() == 2);
  CHECK(f.bytesSeen() > 0);
  f.reset();
  CHECK(f.bytesSeen() == 0);
  CHECK(f.lastEventId() == "good");
  REQUIRE(f.retry().has_value());
  CHECK(*f.retry() == 700);
  out.clear();
  f.feed("ne\n\ndata: 2\n\n", out);  // "ne" is a new (unknown) line, not the rest of "data: li"
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "2");
  CHECK(out[0].type == "message");
  CHECK(out[0].lastEventId == "good");

  // A CR at the end of the old connection does not swallow the new body's LF;
  // that LF is a blank line of the new connection (which dispatches nothing).
  SseFramer g;
  out.clear();
  g.feed("data: x\r", out);
  g.reset();
  g.feed("\ndata: y\n\n", out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "y");
}

// ---------------------------------------------------------------------------
// Bounded memory / oversized events
// ---------------------------------------------------------------------------

TEST_CASE("sse: an oversized data line is truncated, flagged and keeps framing", "[sse][limits]") {
  const size_t max = 64;
  const std::string big(1000, 'x');
  for (int mode = 0; mode < 3; ++mode) {
    INFO("mode " << mode);
    SseFramer f(max);
    std::vector<SseItem> out;
    const std::string s = "id: 9\ndata: " + big + "\n\ndata: small\n\n";
    if (mode == 0) f.feed(s, out);  // whole line inside one chunk
    if (mode == 1) out = byteByByte(f, s);
    if (mode == 2) out = feedChunks(f, {s.substr(0, 30), s.substr(30, 500), s.substr(530)});
    REQUIRE(out.size() == 2);
    CHECK(out[0].oversized);
    CHECK(out[0].data.size() <= max);
    CHECK(out[0].data.size() >= max - 6);  // "data: " shares the line budget
    CHECK(out[0].data == std::string(out[0].data.size(), 'x'));
    CHECK(out[0].lastEventId == "9");
    CHECK_FALSE(out[1].oversized);
    CHECK(out[1].data == "small");
    CHECK(out[1].lastEventId == "9");
  }
}

TEST_CASE("sse: many data lines that together exceed the limit", "[sse][limits]") {
  const size_t max = 100;
  std::string s;
  for (int i = 0; i < 50; ++i) s += "data: 0123456789\n";
  s += "\ndata: next\n\n";
  SseFramer f(max);
  std::vector<SseItem> out;
  f.feed(s, out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].oversized);
  CHECK(out[0].data.size() <= max);
  std::string full;
  for (int i = 0; i < 50; ++i) full += (i ? "\n" : "") + std::string("0123456789");
  CHECK(full.compare(0, out[0].data.size(), out[0].data) == 0);  // a true prefix
  CHECK(out[1].data == "next");
  CHECK_FALSE(out[1].oversized);
}

TEST_CASE("sse: data exactly at the limit is not oversized", "[sse][limits]") {
  const size_t max = 32;
  // Two lines of 15 bytes joined with LF = 31 bytes; three give 47.
  auto ev = eventsOnly(feedOne("data:" + std::string(15, 'a') + "\ndata:" + std::string(16, 'b') + "\n\n", max));
  REQUIRE(ev.size() == 1);
  CHECK_FALSE(ev[0].oversized);
  CHECK(ev[0].data.size() == 32);
  ev = eventsOnly(feedOne("data:" + std::string(15, 'a') + "\ndata:" + std::string(17, 'b') + "\n\n", max));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].oversized);
  CHECK(ev[0].data.size() == 32);
  // A line of exactly max bytes is fine.
  ev = eventsOnly(feedOne("data:" + std::string(max - 5, 'c') + "\n\n", max));
  REQUIRE(ev.size() == 1);
  CHECK_FALSE(ev[0].oversized);
}

TEST_CASE("sse: truncation never splits a UTF-8 character", "[sse][limits]") {
  const std::string euro = "\xE2\x82\xAC";
  std::string val;
  for (int i = 0; i < 40; ++i) val += euro;
  for (size_t max = 16; max < 40; ++max) {
    for (int chunked = 0; chunked < 2; ++chunked) {
      INFO("max " << max << " chunked " << chunked);
      SseFramer f(max);
      std::vector<SseItem> out;
      const std::string s = "data:" + val + "\n\n";
      if (chunked) out = byteByByte(f, s);
      else f.feed(s, out);
      REQUIRE(out.size() == 1);
      CHECK(out[0].oversized);
      CHECK(out[0].data.size() % 3 == 0);
      CHECK(out[0].data.size() <= max);
      CHECK(out[0].data.size() + 3 + 5 > max);  // did not throw away more than needed
      CHECK(val.compare(0, out[0].data.size(), out[0].data) == 0);
    }
  }
  // Two-line data where the second line is cut inside a character.
  auto ev = eventsOnly(feedOne("data: ab\ndata:" + val + "\n\n", 20));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].oversized);
  CHECK(ev[0].data.find(kFFFD) == std::string::npos);
}

TEST_CASE("sse: oversized comment, id, event and retry lines", "[sse][limits]") {
  const size_t max = 32;
  const std::string big(100, 'z');
  auto out = feedOne(": " + big + "\ndata: ok\n\n", max);
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind == Kind::Comment);
  CHECK(out[0].oversized);
  CHECK(out[0].data == std::string(max - 2, 'z'));
  CHECK_FALSE(out[1].oversized);  // a long comment is not part of the event

  // An oversized id is dropped (a truncated id would resume at the wrong place)
  // and the event is flagged.
  SseFramer f(max);
  out.clear();
  f.feed("id: keep\n\nid: " + big + "\ndata: x\n\n", out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].oversized);
  CHECK(out[0].lastEventId == "keep");
  CHECK(f.lastEventId() == "keep");

  out = feedOne("event: " + big + "\ndata: x\n\n", max);
  REQUIRE(out.size() == 1);
  CHECK(out[0].oversized);
  CHECK(out[0].data == "x");

  out = feedOne("retry: " + std::string(100, '1') + "\n", max);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == Kind::InvalidRetry);
  CHECK(out[0].oversized);

  // Unknown oversized fields are simply ignored.
  out = feedOne("whatever: " + big + "\ndata: x\n\n", max);
  REQUIRE(out.size() == 1);
  CHECK_FALSE(out[0].oversized);
}

TEST_CASE("sse: a 50 MB line is never buffered", "[sse][limits]") {
  const size_t max = 1u << 20;
  const size_t total = 50u << 20;
  const std::string block(64 * 1024, 'q');

  // (1) Streamed in 64 KiB chunks, no newline until the very end.
  {
    SseFramer f(max);
    std::vector<SseItem> out;
    out.reserve(4);
    {
      AllocScope scope;
      f.feed("data: ", out);
      for (size_t sent = 0; sent < total; sent += block.size()) f.feed(block, out);
      CHECK(out.empty());
      f.feed("\n\ndata: after\n\n", out);
      if (AGUI_ALLOC_TRACKING) {
        CHECK(gAllocLargest.load() <= max + 64);
        CHECK(gAllocTotal.load() < 4 * max);
      }
    }
    REQUIRE(out.size() == 2);
    CHECK(out[0].oversized);
    CHECK(out[0].data.size() == max - 6);
    CHECK(out[0].data == std::string(max - 6, 'q'));
    CHECK(out[1].data == "after");
    CHECK_FALSE(out[1].oversized);
    CHECK(f.bytesSeen() == 6 + total + 15);
  }
  // (2) One 50 MB chunk with no line end, then the end of the stream.
  {
    std::string huge = "data: " + std::string(total, 'w');
    SseFramer f(max);
    std::vector<SseItem> out;
    {
      AllocScope scope;
      f.feed(huge, out);
      f.endOfStream();
      if (AGUI_ALLOC_TRACKING) CHECK(gAllocLargest.load() <= max + 64);
    }
    CHECK(out.empty());
    // (3) One 50 MB chunk containing a complete event: parsed in place.
    huge += "\n\n";
    {
      AllocScope scope;
      f.feed(huge, out);
      if (AGUI_ALLOC_TRACKING) CHECK(gAllocLargest.load() <= max + 64);
    }
    REQUIRE(out.size() == 1);
    CHECK(out[0].oversized);
    CHECK(out[0].data.size() == max - 6);
  }
}

TEST_CASE("sse: small events do not allocate per line", "[sse][limits]") {
  SseFramer f;
  std::vector<SseItem> out;
  out.reserve(1000);
  std::string warm = "event: t\nid: 1\ndata: {\"a\":1}\n\n";
  f.feed(warm, out);  // let the buffers reach their working size
  out.clear();
  std::string s;
  for (int i = 0; i < 100; ++i) s += "event: t\nid: 1\ndata: {\"a\":1}\ndata: {\"b\":2}\n\n";
  if (!AGUI_ALLOC_TRACKING) return;
  size_t allocs;
  {
    AllocScope scope;
    f.feed(s, out);
    allocs = gAllocTotal.load();
  }
  REQUIRE(out.size() == 100);
  // Only the per-event output strings allocate (all three fit the small-string
  // buffer except data), so the total is roughly 100 data copies.
  CHECK(allocs <= 100 * 32);
}

TEST_CASE("sse: a million 1-byte chunks", "[sse][perf]") {
  const std::string ev = "id: 7\r\ndata: 0123456789\r\n\r\n";  // CRLF pairs get split too
  std::string s;
  while (s.size() < 1000000) s += ev;
  SseFramer f;
  std::vector<SseItem> out;
  out.reserve(s.size() / ev.size() + 1);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  for (size_t i = 0; i < s.size(); ++i) f.feed(p + i, 1, out);
  REQUIRE(out.size() == s.size() / ev.size());
  bool allOk = true;
  for (const SseItem& i : out) allOk = allOk && i.data == "0123456789" && i.lastEventId == "7";
  CHECK(allOk);
  CHECK(f.bytesSeen() == s.size());
}

// ---------------------------------------------------------------------------
// Differential test: a naive whole-buffer reference parser, written straight
// from the spec text (decode first with a byte-at-a-time WHATWG decoder, then
// split lines), must agree with the streaming framer under any chunking.
// ---------------------------------------------------------------------------

namespace {

using agui_test::whatwgUtf8Decode;  // tests/support/whatwg_utf8.h (shared with the fuzz target)

std::vector<SseItem> referenceParse(std::string bytes) {
  std::string text = whatwgUtf8Decode(bytes);
  if (text.compare(0, 3, kBOM) == 0) text.erase(0, 3);
  std::vector<SseItem> out;
  std::string data, type, idBuf;
  bool haveData = false;
  size_t pos = 0;
  while (true) {
    size_t e = text.find_first_of("\r\n", pos);
    if (e == std::string::npos) break;  // unterminated last line: never processed
    std::string line = text.substr(pos, e - pos);
    pos = e + ((text[e] == '\r' && e + 1 < text.size() && text[e + 1] == '\n') ? 2 : 1);
    if (line.empty()) {
      std::string last = idBuf;
      if (!haveData) {
        type.clear();
        continue;
      }
      SseItem it;
      it.type = type.empty() ? "message" : type;
      it.data = data.substr(0, data.size() - 1);  // strip the final LF
      it.lastEventId = last;
      out.push_back(it);
      data.clear();
      type.clear();
      haveData = false;
      continue;
    }
    std::string name, value;
    if (line[0] == ':') {
      SseItem it;
      it.kind = Kind::Comment;
      it.data = line.substr(1);
      if (!it.data.empty() && it.data[0] == ' ') it.data.erase(0, 1);
      out.push_back(it);
      continue;
    }
    size_t c = line.find(':');
    if (c == std::string::npos) {
      name = line;
    } else {
      name = line.substr(0, c);
      value = line.substr(c + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    }
    if (name == "event") {
      type = value;
    } else if (name == "data") {
      data += value + "\n";
      haveData = true;
    } else if (name == "id") {
      if (value.find('\0') == std::string::npos) idBuf = value;
    } else if (name == "retry") {
      SseItem it;
      bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
      if (digits) {
        it.kind = Kind::Retry;
        // Our documented choice for values beyond 64 bits: saturate.
        it.retry = value.size() > 20 ? ~0ull : 0;
        if (value.size() <= 20) {
          unsigned long long v = 0;
          for (char ch : value) {
            unsigned long long d = static_cast<unsigned long long>(ch - '0');
            if (v > (~0ull - d) / 10) {
              v = ~0ull;
              break;
            }
            v = v * 10 + d;
          }
          it.retry = v;
        }
      } else {
        it.kind = Kind::InvalidRetry;
        it.data = value;
      }
      out.push_back(it);
    }
  }
  return out;
}

// Random streams built line by line (field prefix + value pieces + terminator)
// so that every rule is exercised, with some soup: odd bytes in values, BOMs,
// broken UTF-8, and now and then a missing terminator that merges two lines.
std::string randomStream(std::mt19937& rng, size_t lines) {
  static const std::vector<std::string> prefixes = {
      "data:", "data: ", "data", "data:", "data: ", "event:", "event: ", "event", "id:", "id: ", "id",
      "retry:", "retry: ", "retry", ":", ": ", "", "foo:", "Data:", " data:", kBOM + "data:"};
  static const std::vector<std::string> pieces = {
      "x", "yz", "42", "7", "0", " ", ":", std::string("\0", 1), kBOM, "\xE2", "\x82", "\xAC",
      "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF", "\xC3", "\xED\xA0\x80",
      std::string(40, 'L'), "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC"};
  static const std::vector<std::string> digits = {"0", "1", "25", "300", "9"};
  static const std::vector<std::string> terminators = {"\n", "\r", "\r\n"};
  auto pick = [&rng](const std::vector<std::string>& v) -> const std::string& { return v[rng() % v.size()]; };
  std::string s;
  if (rng() % 3 == 0) s += kBOM;
  for (size_t i = 0; i < lines; ++i) {
    const std::string& prefix = pick(prefixes);
    s += prefix;
    const bool retry = prefix.compare(0, 5, "retry") == 0;
    const size_t n = rng() % 4;
    for (size_t k = 0; k < n; ++k) s += (retry && rng() % 4 != 0) ? pick(digits) : pick(pieces);
    if (rng() % 20 != 0) s += pick(terminators);
    if (rng() % 3 == 0) s += pick(terminators);  // blank line: dispatch
  }
  return s;
}

std::vector<std::string> randomChunks(std::mt19937& rng, const std::string& s, size_t maxSize) {
  std::vector<std::string> chunks;
  std::uniform_int_distribution<size_t> size(0, maxSize);  // 0: empty chunks are legal too
  for (size_t pos = 0; pos < s.size();) {
    size_t n = std::min(size(rng), s.size() - pos);
    chunks.push_back(s.substr(pos, n));
    pos += n;
  }
  return chunks;
}

}  // namespace

TEST_CASE("sse: the reference decoder matches hand-checked vectors", "[sse]") {
  CHECK(whatwgUtf8Decode("a\xE2\x82" "b") == "a" + kFFFD + "b");
  CHECK(whatwgUtf8Decode("\xED\xA0\x80") == kFFFD + kFFFD + kFFFD);
  CHECK(whatwgUtf8Decode("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");
  CHECK(whatwgUtf8Decode("\xF0\x9F\x98") == kFFFD);
}

TEST_CASE("sse: streaming framer equals the whole-buffer reference under any chunking", "[sse]") {
  std::mt19937 rng(12345);
  int compared = 0;
  size_t kinds[4] = {0, 0, 0, 0};
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string s = randomStream(rng, 1 + rng() % 25);
    const std::vector<SseItem> ref = referenceParse(s);
    for (const SseItem& i : ref) ++kinds[static_cast<int>(i.kind)];
    const std::string expected = render(ref);
    INFO("stream " << json::binary(std::vector<uint8_t>(s.begin(), s.end())).dump());
    {
      SseFramer f;
      std::vector<SseItem> out;
      f.feed(s, out);
      CHECK(render(out) == expected);
    }
    {
      SseFramer f;
      CHECK(render(byteByByte(f, s)) == expected);
    }
    {
      SseFramer f;
      CHECK(render(feedChunks(f, randomChunks(rng, s, 1 + rng() % 12))) == expected);
    }
    ++compared;
  }
  CHECK(compared == 1500);
  // The generator must actually exercise every kind of item.
  INFO("events " << kinds[0] << " comments " << kinds[1] << " retry " << kinds[2] << " invalid " << kinds[3]);
  CHECK(kinds[0] > 500);
  CHECK(kinds[1] > 500);
  CHECK(kinds[2] > 50);
  CHECK(kinds[3] > 50);
}

TEST_CASE("sse: oversized handling does not depend on chunking", "[sse][limits]") {
  std::mt19937 rng(777);
  size_t oversizedEvents = 0, oversizedOther = 0;
  for (int iter = 0; iter < 800; ++iter) {
    const size_t max = 16 + rng() % 40;
    const std::string s = randomStream(rng, 1 + rng() % 30);
    INFO("max " << max << " stream " << json::binary(std::vector<uint8_t>(s.begin(), s.end())).dump());
    SseFramer whole(max);
    std::vector<SseItem> a;
    whole.feed(s, a);
    for (const SseItem& i : a) {
      CHECK(i.data.size() <= (i.kind == Kind::Event ? max : 3 * max));
      if (i.oversized) ++(i.kind == Kind::Event ? oversizedEvents : oversizedOther);
    }
    SseFramer bytes(max);
    CHECK(render(byteByByte(bytes, s)) == render(a));
    SseFramer chunked(max);
    CHECK(render(feedChunks(chunked, randomChunks(rng, s, 1 + rng() % 20))) == render(a));
    CHECK(whole.lastEventId() == bytes.lastEventId());
    CHECK(whole.retry() == bytes.retry());
  }
  INFO("oversized events " << oversizedEvents << ", other items " << oversizedOther);
  CHECK(oversizedEvents > 50);
  CHECK(oversizedOther > 50);
}

// ---------------------------------------------------------------------------
// Conformance suites ($AGUI_CONFORMANCE_DIR/sse/*.json, format in that folder's README.txt).
// ---------------------------------------------------------------------------

namespace {

struct Step {
  std::string bytes;
  bool resetAfter = false;  // connection_breaks: the connection ends after this chunk
};

std::vector<Step> givenSteps(const json& c) {
  std::set<size_t> breaks;
  if (c.contains("connection_breaks"))
    for (const json& k : c["connection_breaks"]) breaks.insert(k.get<size_t>());
  std::vector<Step> steps;
  const json& chunks = c["chunks_b64"];
  for (size_t k = 0; k < chunks.size(); ++k) steps.push_back({b64decode(chunks[k].get<std::string>()), breaks.count(k) > 0});
  for (size_t k : breaks) REQUIRE(k < chunks.size());
  return steps;
}

// Re-chunks each connection's bytes with `sizer` while keeping the breaks.
template <class Sizer>
std::vector<Step> rechunk(const std::vector<Step>& given, Sizer sizer) {
  std::vector<Step> out;
  std::string conn;
  auto flush = [&](bool resetAfter) {
    if (conn.empty()) {
      if (resetAfter) out.push_back({"", true});
      return;
    }
    for (size_t pos = 0; pos < conn.size();) {
      size_t n = std::min(std::max<size_t>(1, sizer()), conn.size() - pos);
      out.push_back({conn.substr(pos, n), false});
      pos += n;
    }
    out.back().resetAfter = resetAfter;
    conn.clear();
  };
  for (const Step& s : given) {
    conn += s.bytes;
    if (s.resetAfter) flush(true);
  }
  flush(false);
  return out;
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::Event: return "event";
    case Kind::Comment: return "comment";
    case Kind::Retry: return "retry";
    case Kind::InvalidRetry: return "invalid_retry";
  }
  return "?";
}

bool eventMatches(const SseItem& got, const json& want) {
  if (got.kind != Kind::Event) return false;
  if (want.contains("event") && got.type != want["event"].get<std::string>()) return false;
  if (want.contains("data") && got.data != want["data"].get<std::string>()) return false;
  if (want.contains("id") && got.lastEventId != want["id"].get<std::string>()) return false;
  return true;
}

bool sequenceItemMatches(const SseItem& got, const json& want) {
  const std::string kind = want["kind"].get<std::string>();
  if (kind != kindName(got.kind)) return false;
  if (kind == "event") return eventMatches(got, want);
  if (kind == "comment") return !want.contains("comment") || got.data == want["comment"].get<std::string>();
  if (kind == "retry") return !want.contains("value") || got.retry == want["value"].get<uint64_t>();
  if (kind == "invalid_retry") return !want.contains("value") || got.data == want["value"].get<std::string>();
  return false;
}

std::string describe(const std::vector<SseItem>& items) { return render(items); }

// Feeds one plan and checks every assertion the case makes. Returns true when
// everything matched (so the caller can count passing runs).
bool runConformanceCase(const json& c, const std::vector<Step>& steps) {
  SseFramer f;
  std::vector<SseItem> items;
  for (const Step& s : steps) {
    f.feed(s.bytes, items);
    if (s.resetAfter) f.reset();
  }
  f.endOfStream();  // the stream is over; a partial event must not appear
  INFO("items:\n" << describe(items));

  bool ok = true;
  auto check = [&](bool cond, const std::string& what) {
    if (!cond) {
      ok = false;
      FAIL_CHECK(what);
    }
  };

  std::vector<SseItem> events;
  std::vector<std::string> comments;
  for (const SseItem& i : items) {
    if (i.kind == Kind::Event) events.push_back(i);
    if (i.kind == Kind::Comment) comments.push_back(i.data);
    check(!i.oversized, "nothing in the conformance suites is oversized");
  }

  const json& want = c["events"];
  const bool exhaustive = c["events_exhaustive"].get<bool>();
  if (exhaustive)
    check(events.size() == want.size(), "event count " + std::to_string(events.size()) + " != " + std::to_string(want.size()));
  else
    check(events.size() >= want.size(), "too few events: " + std::to_string(events.size()));
  for (size_t k = 0; k < want.size() && k < events.size(); ++k)
    check(eventMatches(events[k], want[k]), "event " + std::to_string(k) + " != " + want[k].dump());

  if (c.contains("retry")) {
    check(f.retry().has_value() && *f.retry() == c["retry"].get<uint64_t>(), "retry != " + c["retry"].dump());
  }
  if (c.value("retry_unchanged", false)) check(!f.retry().has_value(), "retry should be unchanged");
  if (c.contains("last_event_id"))
    check(f.lastEventId() == c["last_event_id"].get<std::string>(), "last_event_id != " + c["last_event_id"].dump());
  if (c.contains("comments")) {
    std::vector<std::string> wantComments = c["comments"].get<std::vector<std::string>>();
    check(comments == wantComments, "comments != " + c["comments"].dump());
  }
  if (c.contains("sequence")) {
    const json& seq = c["sequence"];
    if (exhaustive) check(items.size() == seq.size(), "sequence length");
    else check(items.size() >= seq.size(), "sequence too short");
    for (size_t k = 0; k < seq.size() && k < items.size(); ++k)
      check(sequenceItemMatches(items[k], seq[k]), "sequence item " + std::to_string(k) + " != " + seq[k].dump());
  }
  return ok;
}

struct SuiteTotals {
  size_t cases = 0;
  size_t runs = 0;
  size_t passedRuns = 0;
};

void runSuite(const std::string& file, size_t expectedCases, SuiteTotals& totals) {
  const json suite = agui_test::readJson(agui_test::conformancePath("sse/" + file));
  REQUIRE(suite["case_count"].get<size_t>() == expectedCases);
  REQUIRE(suite["cases"].size() == expectedCases);
  for (const json& c : suite["cases"]) {
    INFO(file << " :: " << c["name"].get<std::string>());
    // chunks (UTF-8 text) is only a convenience copy; chunks_b64 is authoritative.
    if (c.contains("chunks")) {
      REQUIRE(c["chunks"].size() == c["chunks_b64"].size());
      for (size_t k = 0; k < c["chunks"].size(); ++k)
        CHECK(c["chunks"][k].get<std::string>() == b64decode(c["chunks_b64"][k].get<std::string>()));
    }
    const std::vector<Step> given = givenSteps(c);
    std::vector<std::pair<std::string, std::vector<Step>>> plans;
    plans.emplace_back("given chunks", given);
    plans.emplace_back("byte by byte", rechunk(given, [] { return size_t{1}; }));
    const uint32_t seeds[] = {1, 7, 42, 1337, 20240601};
    const size_t maxSizes[] = {3, 7, 16, 64, 300};
    for (size_t s = 0; s < 5; ++s) {
      std::mt19937 rng(seeds[s]);
      std::uniform_int_distribution<size_t> dist(1, maxSizes[s]);
      plans.emplace_back("seed " + std::to_string(seeds[s]), rechunk(given, [&] { return dist(rng); }));
    }
    for (const auto& plan : plans) {
      INFO("chunking: " << plan.first << " (" << plan.second.size() << " chunks)");
      ++totals.runs;
      if (runConformanceCase(c, plan.second)) ++totals.passedRuns;
    }
    ++totals.cases;
  }
}

}  // namespace

TEST_CASE("sse: conformance suites (given, byte-by-byte and random chunkings)", "[sse][conformance]") {
  AGUI_NEEDS_CONFORMANCE();
  SuiteTotals totals;
  runSuite("eventsource_parser.json", 42, totals);
  runSuite("launchdarkly_sse_contract_tests.json", 96, totals);
  runSuite("wpt_eventsource.json", 41, totals);
  // Nothing may be skipped silently: 179 cases, 7 chunkings each.
  CHECK(totals.cases == 179);
  CHECK(totals.runs == 179 * 7);
  CHECK(totals.passedRuns == totals.runs);
}
