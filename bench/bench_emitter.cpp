// Native benchmark of the sending side: StateEmitter cost per update for 5 KB,
// 50 KB and 500 KB states, on the shared workload (workload.h).
//   update(newState): diff previous -> new + stamping (+ digest every K-th event,
//                     + the snapshot-size check); the app's copy of its state,
//                     which update() needs, is timed separately.
//   patch(ops):       atomic apply of the app's ops + stamping; no diff, no copy.
//   encode:           event -> SSE bytes.
// Not a test: it prints a table (median of `runs`).
//
//   build/native/bench_emitter [updates=2000] [runs=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <agui_sync/canonical_json.h>
#include <agui_sync/state_emitter.h>

#include "json/json_patch.h"
#include "workload.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Run {
  double perCall = 0;     // us per update()/patch()
  double copyUs = 0;      // us per app-side state copy (update only)
  double encodeUs = 0;    // us per encode()
  double eventBytes = 0;  // average SSE bytes per event
  uint64_t snapshots = 0;
};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "bench_emitter: %s\n", what);
    std::exit(1);
  }
}

// The app holds its state and edits it. byValue = false: update(app) by const
// reference (diff, then the ops are applied to the emitter's state in place).
// byValue = true: the app hands update() a copy, which it adopts (the copy is
// timed separately; the old state it replaces is freed inside update()).
Run runUpdate(const agui_bench::StateWorkload& w, size_t digestEvery, bool byValue) {
  agui_sync::EmitterOptions o;
  o.digestEvery = digestEvery;
  agui_sync::StateEmitter em(o, w.initial);
  json app = w.initial;
  Clock::duration inUpdate{}, inCopy{}, inEncode{};
  size_t bytes = 0;
  for (const json& ops : w.deltas) {
    check(agui_sync::applyPatch(app, ops).ok(), "workload op failed");
    std::vector<json> events;
    auto t0 = Clock::now();
    if (byValue) {
      json copy = app;
      auto t1 = Clock::now();
      events = em.update(std::move(copy));
      inCopy += t1 - t0;
      inUpdate += Clock::now() - t1;
    } else {
      events = em.update(app);
      inUpdate += Clock::now() - t0;
    }
    auto t2 = Clock::now();
    std::string sse = agui_sync::StateEmitter::encodeAll(events);
    inEncode += Clock::now() - t2;
    bytes += sse.size();
  }
  check(em.state() == w.final, "update(): emitter state differs from the app's");
  const double n = static_cast<double>(w.deltas.size());
  return Run{us(inUpdate) / n, us(inCopy) / n, us(inEncode) / n, static_cast<double>(bytes) / n, em.stats().snapshots};
}

Run runPatch(const agui_bench::StateWorkload& w, size_t digestEvery) {
  agui_sync::EmitterOptions o;
  o.digestEvery = digestEvery;
  agui_sync::StateEmitter em(o, w.initial);
  std::vector<json> ops = w.deltas;  // copied up front: the app builds its ops anyway
  Clock::duration inPatch{}, inEncode{};
  size_t bytes = 0;
  for (json& delta : ops) {
    auto t0 = Clock::now();
    agui_sync::PatchOutcome r = em.patch(std::move(delta));
    auto t1 = Clock::now();
    std::string sse = agui_sync::StateEmitter::encodeAll(r.events);
    auto t2 = Clock::now();
    check(r.ok(), "patch() refused a workload delta");
    inPatch += t1 - t0;
    inEncode += t2 - t1;
    bytes += sse.size();
  }
  check(em.state() == w.final, "patch(): emitter state differs from the app's");
  const double n = static_cast<double>(w.deltas.size());
  return Run{us(inPatch) / n, 0, us(inEncode) / n, static_cast<double>(bytes) / n, em.stats().snapshots};
}

}  // namespace

int main(int argc, char** argv) {
  const int updates = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  std::printf("bench_emitter: %d updates of 1-5 ops each, median of %d runs, us per update\n", updates, runs);
  std::printf("%-6s %7s | %9s %9s %9s %9s | %9s %9s | %7s %8s | %7s %7s\n", "state", "bytes", "upd& K16", "upd& K0",
              "upd&& K16", "app copy", "patch K16", "patch K0", "encode", "digest", "B/ev upd", "B/ev pat");
  double firstPatch = 0, lastPatch = 0;
  for (size_t target : {5000u, 50000u, 500000u}) {
    agui_bench::StateWorkload w = agui_bench::makeStateWorkload(target, updates, 42);
    std::vector<double> u16, u0, uv, copy, p16, p0, enc;
    Run lastU, lastP;
    for (int r = 0; r < runs; ++r) {  // interleaved, so every variant sees the same machine state
      lastU = runUpdate(w, 16, false);
      u16.push_back(lastU.perCall);
      enc.push_back(lastU.encodeUs);
      u0.push_back(runUpdate(w, 0, false).perCall);
      Run v = runUpdate(w, 16, true);
      uv.push_back(v.perCall);
      copy.push_back(v.copyUs);
      lastP = runPatch(w, 16);
      p16.push_back(lastP.perCall);
      p0.push_back(runPatch(w, 0).perCall);
    }
    auto t0 = Clock::now();
    for (int i = 0; i < 20; ++i) (void)agui_sync::stateDigest(w.final);
    const double digestUs = us(Clock::now() - t0) / 20;
    if (target == 5000) firstPatch = median(p0);
    lastPatch = median(p0);
    std::printf("%-6s %7zu | %9.2f %9.2f %9.2f %9.2f | %9.2f %9.2f | %7.2f %8.1f | %7.0f %7.0f\n",
                target == 5000 ? "5KB" : target == 50000 ? "50KB" : "500KB", w.stateBytes, median(u16), median(u0),
                median(uv), median(copy), median(p16), median(p0), median(enc), digestUs, lastU.eventBytes,
                lastP.eventBytes);
    if (lastU.snapshots || lastP.snapshots)
      std::printf("       (snapshot fallbacks: update %llu, patch %llu of %d)\n",
                  static_cast<unsigned long long>(lastU.snapshots), static_cast<unsigned long long>(lastP.snapshots),
                  updates);
  }
  std::printf("upd& = update(const json&): diff + in-place apply + stamping; upd&& = update(json&&) after the\n"
              "app's copy (app copy column), freeing the replaced state inside. K16 adds a digest every 16th\n"
              "event (digest column / 16). patch = validate + atomic apply + stamping, no diff, no copy.\n");
  std::printf("patch K0 500KB/5KB ratio: %.2fx (O(delta): ~1x expected)\n", lastPatch / firstPatch);
  return 0;
}
