// libFuzzer target: the whole engine (SseFramer -> decodeEvent -> Receiver via
// SyncEngine) and the string Facade the bindings use.
//
// Input layout: [opt0][opt1][chunk seed] SSE bytes...
//   opt0 bits 0-1 reorderWindow  {64, 1, 2, 4}     bits 2-3 maxGapEvents {32, 1, 2, 4}
//        bits 4-5 maxEventBytes  {8 MiB, 64, 256, 1024}
//        bits 6-7 maxDepth       {128, 2, 4, 8}
//   opt1 bits 0-1 maxStateBytes  {64 MiB, 64, 256, 4096}
//        bits 2-3 reorderBytes   {1 MiB, 64, 256, 1024}
//        bits 4-7 reconnect chance at each chunk boundary, 3% per step (0 = none)
//   All-zero header = the documented defaults, one connection.
//
// There is no oracle for the "right" state, so the invariants are about
// consistency and contracts:
//  - chunking does not matter: engine A (PRNG chunks) and engine B (each
//    connection's bytes in one feed) give identical outcomes, state, status,
//    lastSeq, lastEventId, pending count and metrics;
//  - the state always serializes (valid UTF-8 JSON) and stays within the depth
//    limit; metrics.stateBytes equals rawSize(state) (kept incrementally);
//  - status `synced` has a lastSeq; `resyncing` <=> a resync request is pending;
//    the reorder window never holds more than reorderWindow deltas;
//  - every dispatched SSE event yields at least one outcome (outcome.h);
//  - outcome fields are well formed (known reasons/codes, raw event JSON) and
//    the metrics counters match the outcomes they count;
//  - Facade: every returned string is valid JSON with as many outcomes as the
//    engine produced; replaying the `applied` outcomes on a mirror (snapshot =
//    replace, delta = apply event.delta) always succeeds and reproduces
//    stateJson() -- the contract the JS wrapper relies on.
//
// Known-issue ids (fuzz_common.h, AGUI_FUZZ_KNOWN): none open. The findings
// so far (nul-json, snapshot-depth, silent-snapshot; docs/fuzzing.md) are fixed
// and their checks below are strict.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "facade/sync_facade.h"
#include "fuzz_common.h"
#include "json/json_measure.h"
#include "json/json_patch.h"
#include "json/json_pointer.h"
#include <agui_sync/metrics.h>
#include <agui_sync/outcome.h>
#include <agui_sync/sync_engine.h>

using namespace agui_sync;
using nlohmann::json;

namespace {

Options optionsFrom(uint8_t opt0, uint8_t opt1) {
  Options o;
  static const size_t kWindow[4] = {64, 1, 2, 4};
  static const size_t kGap[4] = {32, 1, 2, 4};
  static const size_t kEventBytes[4] = {8u << 20, 64, 256, 1024};
  static const size_t kDepth[4] = {128, 2, 4, 8};
  static const size_t kStateBytes[4] = {64u << 20, 64, 256, 4096};
  static const size_t kReorderBytes[4] = {1u << 20, 64, 256, 1024};
  o.reorderWindow = kWindow[opt0 & 3];
  o.maxGapEvents = kGap[(opt0 >> 2) & 3];
  o.maxEventBytes = kEventBytes[(opt0 >> 4) & 3];
  o.maxDepth = kDepth[(opt0 >> 6) & 3];
  o.maxStateBytes = kStateBytes[opt1 & 3];
  o.reorderBytes = kReorderBytes[(opt1 >> 2) & 3];
  return o;
}

std::string optionsJson(const Options& o) {
  return json{{"reorderWindow", o.reorderWindow}, {"reorderBytes", o.reorderBytes},
              {"maxGapEvents", o.maxGapEvents},   {"maxEventBytes", o.maxEventBytes},
              {"maxDepth", o.maxDepth},           {"maxStateBytes", o.maxStateBytes}}
      .dump();
}

// The error codes an engine outcome may carry (the rest of the table's errors
// belong to the facades and the JS layer).
const std::set<Code> kOutcomeErrors = {Code::InvalidJson, Code::InvalidEvent, Code::InvalidSeq, Code::InvalidPatch,
                                       Code::LimitExceeded};

struct Tally {
  uint64_t snapshots = 0, deltas = 0, resyncs = 0, errors = 0;
};

void checkOutcome(const Outcome& o, Tally& t) {
  switch (o.kind) {
    case OutcomeKind::Applied: {
      FUZZ_CHECK(o.type == "STATE_SNAPSHOT" || o.type == "STATE_DELTA", "applied type '%s'", o.type.c_str());
      (o.type == "STATE_SNAPSHOT" ? t.snapshots : t.deltas)++;
      const json ev = json::parse(o.raw, nullptr, false);
      FUZZ_CHECK(ev.is_object() && ev.value("type", "") == o.type, "applied raw is not the %s event: %s",
                 o.type.c_str(), fuzz::excerpt(o.raw).c_str());
      if (o.type == "STATE_SNAPSHOT")
        FUZZ_CHECK(o.changedPaths.size() == 1 && o.changedPaths[0].empty(), "snapshot changedPaths != [\"\"]");
      for (const std::string& p : o.changedPaths) {
        Tokens tokens;
        std::string error;
        FUZZ_CHECK(parsePointer(p, tokens, error), "changed path '%s' is not a pointer", fuzz::excerpt(p).c_str());
      }
      break;
    }
    case OutcomeKind::Event: {
      const json ev = json::parse(o.raw, nullptr, false);
      FUZZ_CHECK(ev.is_object() && ev.value("type", "") == o.type, "event raw/type mismatch: %s",
                 fuzz::excerpt(o.raw).c_str());
      FUZZ_CHECK(o.type != "STATE_SNAPSHOT" && o.type != "STATE_DELTA", "state event passed through as 'event'");
      break;
    }
    case OutcomeKind::Resync:
      ++t.resyncs;
      FUZZ_CHECK(inCategory(o.reason, kResync), "'%s' is not a resync reason", codeName(o.reason));
      break;
    case OutcomeKind::Ignored:
      FUZZ_CHECK(inCategory(o.reason, kIgnored), "'%s' is not an ignored reason", codeName(o.reason));
      break;
    case OutcomeKind::Error:
      ++t.errors;
      FUZZ_CHECK(kOutcomeErrors.count(o.reason), "'%s' is not an outcome error code", codeName(o.reason));
      FUZZ_CHECK(!o.detail.empty(), "error without a message");
      break;
  }
}

void checkEngine(const SyncEngine& e, const Tally& t) {
  const Options& opt = e.options();
  const std::string dumped = e.state().dump();  // throws (-> crash) on invalid UTF-8
  (void)dumped;
  const Metrics& m = e.metrics();
  FUZZ_CHECK(m.stateBytes == rawSize(e.state()), "metrics.stateBytes %llu but rawSize(state) %zu",
             static_cast<unsigned long long>(m.stateBytes), rawSize(e.state()));
  FUZZ_CHECK(valueDepth(e.state()) <= opt.maxDepth, "[snapshot-depth] state depth %zu exceeds maxDepth %zu",
             valueDepth(e.state()), opt.maxDepth);
  if (e.status() == SyncStatus::Synced) FUZZ_CHECK(e.lastSeq().has_value(), "synced without a lastSeq");
  FUZZ_CHECK((e.status() == SyncStatus::Resyncing) == e.resyncRequest().has_value(),
             "status %s but resync request %s", statusName(e.status()),
             e.resyncRequest() ? "pending" : "absent");
  FUZZ_CHECK(e.pendingCount() <= opt.reorderWindow, "%zu deltas held, window %zu",
             e.pendingCount(), opt.reorderWindow);
  FUZZ_CHECK(m.snapshots == t.snapshots, "metrics.snapshots %llu, applied snapshot outcomes %llu",
             static_cast<unsigned long long>(m.snapshots), static_cast<unsigned long long>(t.snapshots));
  FUZZ_CHECK(m.deltasApplied == t.deltas, "metrics.deltasApplied %llu, applied delta outcomes %llu",
             static_cast<unsigned long long>(m.deltasApplied), static_cast<unsigned long long>(t.deltas));
  FUZZ_CHECK(m.resyncs == t.resyncs, "metrics.resyncs %llu, resync outcomes %llu",
             static_cast<unsigned long long>(m.resyncs), static_cast<unsigned long long>(t.resyncs));
  FUZZ_CHECK(m.errors == t.errors, "metrics.errors %llu, error outcomes %llu",
             static_cast<unsigned long long>(m.errors), static_cast<unsigned long long>(t.errors));
  uint64_t byReason = 0;
  for (const auto& kv : m.resyncsByReason) byReason += kv.second;
  FUZZ_CHECK(byReason == m.resyncs, "resyncsByReason sums to %llu, resyncs %llu",
             static_cast<unsigned long long>(byReason), static_cast<unsigned long long>(m.resyncs));
  FUZZ_CHECK(m.resyncSnapshots <= m.snapshots && m.reordersHealed <= m.held, "metrics counters inconsistent");
  const json mj = json::parse(metricsToJson(m), nullptr, false);
  FUZZ_CHECK(mj.is_object(), "metricsToJson is not a JSON object");
}

bool sameOutcome(const Outcome& a, const Outcome& b) {
  return a.kind == b.kind && a.type == b.type && a.seq == b.seq && a.reason == b.reason && a.detail == b.detail &&
         a.raw == b.raw && a.changedPaths == b.changedPaths && a.lastSeq == b.lastSeq && a.lastEventId == b.lastEventId;
}

void checkSameEngines(const SyncEngine& a, const SyncEngine& b, const std::vector<Outcome>& oa,
                      const std::vector<Outcome>& ob) {
  FUZZ_CHECK(oa.size() == ob.size(), "chunked: %zu outcomes, unchunked: %zu", oa.size(), ob.size());
  for (size_t i = 0; i < oa.size(); ++i)
    FUZZ_CHECK(sameOutcome(oa[i], ob[i]), "outcome %zu depends on chunking (%s '%s' vs %s '%s')", i,
               outcomeKindName(oa[i].kind), codeName(oa[i].reason), outcomeKindName(ob[i].kind), codeName(ob[i].reason));
  FUZZ_CHECK(a.state() == b.state() && a.state().dump() == b.state().dump(), "state depends on chunking");
  FUZZ_CHECK(a.status() == b.status() && a.lastSeq() == b.lastSeq() && a.lastEventId() == b.lastEventId() &&
                 a.pendingCount() == b.pendingCount() && a.retry() == b.retry(),
             "status/lastSeq/lastEventId/pending/retry depend on chunking");
  FUZZ_CHECK(metricsToJson(a.metrics()) == metricsToJson(b.metrics()), "metrics depend on chunking");
}

// The Facade side: parses each result and replays applied outcomes on a mirror.
struct FacadeChecker {
  explicit FacadeChecker(const Options& o) : facade(optionsJson(o)) {
    FUZZ_CHECK(!facade.initFailure(), "facade rejected options: %s", facade.initFailure() ? facade.initFailure()->message.c_str() : "");
  }

  void check(const std::string& result, const SyncEngine& twin, size_t expectedOutcomes, bool full) {
    const json r = json::parse(result, nullptr, false);
    FUZZ_CHECK(!r.is_discarded() && r.is_object(), "facade result is not valid JSON: %s",
               fuzz::excerpt(result, 400).c_str());
    FUZZ_CHECK(r.contains("outcomes") && r["outcomes"].is_array(), "result without an outcomes array");
    FUZZ_CHECK(r["outcomes"].size() == expectedOutcomes, "facade reports %zu outcomes, engine %zu",
               r["outcomes"].size(), expectedOutcomes);
    FUZZ_CHECK(r.value("status", "") == statusName(twin.status()), "facade status differs from the engine's");
    FUZZ_CHECK(r.value("pending", size_t(0)) == twin.pendingCount(), "facade pending count differs");
    for (const json& o : r["outcomes"]) {
      if (o.value("kind", "") != "applied") continue;
      const json& ev = o["event"];
      if (o.value("type", "") == "STATE_SNAPSHOT") {
        FUZZ_CHECK(ev.contains("snapshot"), "applied snapshot without a snapshot");
        mirror = ev["snapshot"];
      } else {
        FUZZ_CHECK(ev.contains("delta"), "applied delta without a delta");
        const PatchResult pr = applyPatch(mirror, ev["delta"]);
        FUZZ_CHECK(pr.ok(), "an applied delta does not apply to the mirror: %s\n  delta %s", pr.message.c_str(),
                   fuzz::excerpt(ev["delta"].dump()).c_str());
      }
    }
    if (!full) return;
    const std::string state = facade.stateJson();
    const json parsed = json::parse(state, nullptr, false);
    FUZZ_CHECK(!parsed.is_discarded(), "stateJson() is not valid JSON");
    FUZZ_CHECK(parsed == mirror && parsed.dump() == mirror.dump(),
               "mirror rebuilt from applied outcomes differs from stateJson()\n  mirror %s\n  state  %s",
               fuzz::excerpt(mirror.dump()).c_str(), fuzz::excerpt(state).c_str());
    FUZZ_CHECK(json::parse(facade.metricsJson(), nullptr, false).is_object(), "metricsJson() is not a JSON object");
    FUZZ_CHECK(json::parse(facade.statusJson(), nullptr, false).is_object(), "statusJson() is not a JSON object");
  }

  SyncFacade facade;
  json mirror = json::object();
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const Options options = optionsFrom(data[0], data[1]);
  const unsigned reconnectPercent = (data[1] >> 4) * 3u;
  fuzz::Rng rng(data[2]);
  const uint8_t* stream = data + 3;
  const size_t n = size - 3;

  // Cut the stream into chunks; some boundaries are reconnects.
  struct Chunk {
    size_t begin, end;
    bool reconnectAfter;
  };
  std::vector<Chunk> chunks;
  for (size_t pos = 0; pos < n;) {
    const size_t len = std::min(rng.chunk(), n - pos);
    chunks.push_back({pos, pos + len, reconnectPercent != 0 && rng.chance(reconnectPercent)});
    pos += len;
  }

  SyncEngine a(options), b(options);
  FacadeChecker f(options);
  std::vector<Outcome> outA, outB;
  Tally tally;
  size_t segmentBegin = 0;
  for (size_t ci = 0; ci < chunks.size(); ++ci) {
    const Chunk& c = chunks[ci];
    const size_t before = outA.size();
    const uint64_t eventsBefore = a.metrics().events;
    a.feed(stream + c.begin, c.end - c.begin, outA);
    for (size_t i = before; i < outA.size(); ++i) {
      FUZZ_CHECK(outA[i].raw.find('\0') == std::string::npos,
                 "[nul-json] an accepted event's JSON text contains NUL (trailing bytes were never parsed): %s",
                 fuzz::excerpt(outA[i].raw).c_str());
      checkOutcome(outA[i], tally);
    }
    FUZZ_CHECK(outA.size() - before >= a.metrics().events - eventsBefore,
               "[silent-snapshot] %llu SSE events dispatched but only %zu outcomes (an event was dropped silently)",
               static_cast<unsigned long long>(a.metrics().events - eventsBefore), outA.size() - before);
    // The state only changes with an event; the O(state) checks run only then.
    const bool eventSeen = a.metrics().events != eventsBefore;
    if (eventSeen) checkEngine(a, tally);
    f.check(f.facade.feed(std::string(reinterpret_cast<const char*>(stream + c.begin), c.end - c.begin)), a,
            outA.size() - before, eventSeen);

    const bool last = ci + 1 == chunks.size();
    if (c.reconnectAfter || last) {
      // Engine B gets the whole connection in one feed.
      b.feed(stream + segmentBegin, c.end - segmentBegin, outB);
      segmentBegin = c.end;
      checkSameEngines(a, b, outA, outB);
    }
    if (c.reconnectAfter || last) {
      const size_t beforeEnd = outA.size();
      a.end(outA);
      b.end(outB);
      for (size_t i = beforeEnd; i < outA.size(); ++i) checkOutcome(outA[i], tally);
      FUZZ_CHECK(a.pendingCount() == 0 || a.status() == SyncStatus::Resyncing,
                 "stream ended with %zu deltas held and no resync", a.pendingCount());
      checkEngine(a, tally);
      f.check(f.facade.end(), a, outA.size() - beforeEnd, true);
      checkSameEngines(a, b, outA, outB);
      if (!last) {
        a.reset();
        b.reset();
        f.facade.reset();
      }
    }
  }
  return 0;
}
