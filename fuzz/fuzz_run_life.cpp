// libFuzzer target: the run machine's facade (src/facade/run_facade.h), as a
// driver would call it, with hostile steps mixed in.
//
// Input layout: [mode] commands...
//   mode        bit 0: stored log, bit 1: followed copy, bit 2: keep (an approval)
//   command     one byte: op = byte % 12, then the op's bytes:
//     0 feed     [n] n bytes of SSE (anything)
//     1 event    a generated event (RUN_STARTED, a STATE_DELTA at the next seq, text, a terminal)
//     2 join     [client][afterN][flags] (attach, a position, a catch-up when asked)
//     3 left     [client]
//     4 timer    [advance]
//     5 present  [flag]
//     6 committed [n]
//     7 lost / logged  [n entries, each [n][flags]]
//     8 abort    [flag] (the starter's requester, or another)
//     9 ended    [flag] (a failure or not)
//    10 step     [n] n bytes given to step() as they are (any text)
//    11 trim     [to]
//
// Invariants: every answer is JSON with a boolean "ok"; a failure has a string
// "code"; a success has "actions" and "at"; the published lastN never goes
// back and never passes framedN; bytes sent to a client that were framed by
// the run are whole SSE events; infoJson() always parses.
#include <string>

#include <nlohmann/json.hpp>

#include "facade/run_facade.h"
#include "fuzz_common.h"

using agui_sync::RunFacade;
using nlohmann::json;

namespace {

struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool more() const { return p < end; }
  uint8_t byte() { return p < end ? *p++ : 0; }
  std::string bytes(size_t n) {
    n = std::min<size_t>(n, static_cast<size_t>(end - p));
    std::string out(reinterpret_cast<const char*>(p), n);
    p += n;
    return out;
  }
};

struct Checker {
  uint64_t lastN = 0;
  void answer(const std::string& text) {
    const json a = json::parse(text, nullptr, false);
    FUZZ_CHECK(a.is_object() && a.contains("ok") && a["ok"].is_boolean(), "an answer is not {ok}: %s", fuzz::excerpt(text).c_str());
    if (!a["ok"].get<bool>()) {
      FUZZ_CHECK(a.contains("code") && a["code"].is_string(), "a failure without a code: %s", fuzz::excerpt(text).c_str());
      return;
    }
    FUZZ_CHECK(a.contains("actions") && a["actions"].is_array() && a.contains("at"), "a success without actions and at: %s",
               fuzz::excerpt(text).c_str());
    const uint64_t n = a["at"]["lastN"].get<uint64_t>();
    FUZZ_CHECK(n >= lastN, "the published lastN went back: %llu < %llu", static_cast<unsigned long long>(n),
               static_cast<unsigned long long>(lastN));
    FUZZ_CHECK(a["at"]["framedN"].get<uint64_t>() >= n, "published past framed");
    lastN = n;
    for (const json& action : a["actions"]) {
      FUZZ_CHECK(action.contains("do") && action["do"].is_string(), "an action without do");
      if (action["do"] == "send") {
        const std::string& t = action["text"].get_ref<const std::string&>();
        FUZZ_CHECK(t.size() >= 2 && t.compare(t.size() - 2, 2, "\n\n") == 0, "a send that is not whole SSE events: %s",
                   fuzz::excerpt(t).c_str());
      }
    }
  }
};

std::string eventText(Reader& in, int64_t& seq) {
  switch (in.byte() % 5) {
    case 0: return R"({"type":"RUN_STARTED","threadId":"t","runId":"r"})";
    case 1:
      ++seq;
      return R"({"type":"STATE_DELTA","delta":[],"metadata":{"agui-state-sync":{"seq":)" + std::to_string(seq) +
             R"(,"epoch":"e"}}})";
    case 2: return R"({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"})";
    case 3: return R"({"type":"TEXT_MESSAGE_START","messageId":"m"})";
    default: return in.byte() % 2 ? R"({"type":"RUN_FINISHED","threadId":"t","runId":"r"})" : R"({"type":"RUN_ERROR","message":"x"})";
  }
}

json joinStep(Reader& in, int64_t seq) {
  const uint8_t client = in.byte(), afterN = in.byte(), flags = in.byte();
  json step = {{"on", "join"}, {"client", client % 8}, {"afterN", afterN % 64}, {"attach", (flags & 1) != 0}, {"epoch", "e"}};
  if (flags & 2) step["position"] = {{"lastSeq", seq - (flags >> 4)}, {"epoch", flags & 4 ? "e" : "other"}};
  if (flags & 8) step["position"]["reason"] = "gap";
  if (flags & 16) step["catchUp"] = {R"({"type":"STATE_SNAPSHOT","snapshot":{}})"};
  return step;
}

json entries(Reader& in) {
  json list = json::array();
  for (int i = in.byte() % 4; i > 0; --i) {
    const uint8_t n = in.byte(), f = in.byte();
    std::string flags = std::string(f & 1 ? "s" : "") + (f & 2 ? "t" : "") + (f & 4 ? "r" : "");
    list.push_back({{"n", n % 64}, {"seq", nullptr}, {"flags", flags}, {"text", "id: K:" + std::to_string(n % 64) + "\ndata: {}\n\n"}});
  }
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, data + size};
  const uint8_t mode = in.byte();
  json options = {{"key", "K"}, {"credentials", {"Bearer a", nullptr}}, {"graceMs", 100}, {"maxEvents", 16},
                  {"maxBytes", 2048}, {"stored", (mode & 1) != 0}, {"followed", (mode & 2) != 0}, {"keep", (mode & 4) != 0}};
  RunFacade run(options.dump());
  const json init = json::parse(run.initResult(), nullptr, false);
  FUZZ_CHECK(init.is_object() && init["ok"] == true, "valid options refused: %s", run.initResult().c_str());
  Checker check;
  int64_t now = 0, seq = 0;
  check.answer(run.step(R"({"on":"join","client":0,"starter":true})"));
  for (int commands = 0; in.more() && commands < 200; ++commands) {
    switch (in.byte() % 12) {
      case 0: check.answer(run.feed(in.bytes(in.byte()))); break;
      case 1: check.answer(run.event(eventText(in, seq))); break;
      case 2: check.answer(run.step(joinStep(in, seq).dump())); break;
      case 3: check.answer(run.step(json{{"on", "left"}, {"client", in.byte() % 8}, {"now", now}}.dump())); break;
      case 4: now += in.byte() * 4; check.answer(run.step(json{{"on", "timer"}, {"now", now}}.dump())); break;
      case 5: check.answer(run.step(json{{"on", "present"}, {"elsewhere", in.byte() % 2 == 1}, {"now", now}}.dump())); break;
      case 6: check.answer(run.step(json{{"on", "committed"}, {"n", in.byte()}}.dump())); break;
      case 7: check.answer(run.step(json{{"on", in.byte() % 2 ? "lost" : "logged"}, {"entries", entries(in)}}.dump())); break;
      case 8: check.answer(run.step(json{{"on", "abort"}, {"reason", "client"}, {"credentials", {in.byte() % 2 ? "Bearer a" : "Bearer b", nullptr}}}.dump())); break;
      case 9: check.answer(run.step(json{{"on", "ended"}, {"failure", in.byte() % 2 ? json("boom") : json()}}.dump())); break;
      case 10: check.answer(run.step(in.bytes(in.byte()))); break;
      default: check.answer(run.step(json{{"on", "trim"}, {"toBytes", in.byte() * 8}}.dump())); break;
    }
  }
  const json info = json::parse(run.infoJson(), nullptr, false);
  FUZZ_CHECK(info.is_object() && info.contains("lastN"), "infoJson is not JSON: %s", run.infoJson().c_str());
  return 0;
}
