// Native benchmark: cost per STATE_DELTA, bytes in -> state updated, for 5 KB,
// 50 KB and 500 KB states, side by side with the naive approach of parsing each
// event and applying nlohmann's copying json::patch(). Not a test: it prints.
//
//   build/native/bench_engine [deltas=2000] [runs=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <agui_sync/sync_engine.h>

#include "workload.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Engine end to end: chunked bytes -> framer -> decoder -> atomic patch.
double runEngine(const agui_bench::Workload& w, const std::string& deltaBytes, const std::vector<size_t>& chunks,
                 double* snapshotUs) {
  agui_sync::SyncEngine engine;
  std::vector<agui_sync::Outcome> out;
  auto t0 = Clock::now();
  engine.feed(w.snapshotFrame, out);
  auto t1 = Clock::now();
  out.clear();
  size_t pos = 0, applied = 0;
  for (size_t n : chunks) {
    engine.feed(reinterpret_cast<const uint8_t*>(deltaBytes.data() + pos), n, out);
    pos += n;
    for (auto& o : out) applied += o.kind == agui_sync::OutcomeKind::Applied;
    out.clear();
  }
  auto t2 = Clock::now();
  if (applied != w.deltaFrames.size() || engine.status() != agui_sync::SyncStatus::Synced) {
    std::fprintf(stderr, "engine did not apply every delta (%zu)\n", applied);
    std::exit(1);
  }
  *snapshotUs = std::chrono::duration<double, std::micro>(t1 - t0).count();
  return std::chrono::duration<double, std::micro>(t2 - t1).count() / static_cast<double>(w.deltaFrames.size());
}

// Naive: whole-event parse + nlohmann json::patch(), which copies the document.
double runNaive(const agui_bench::Workload& w) {
  nlohmann::json state = nlohmann::json::parse(w.snapshotFrame.substr(6))["snapshot"];
  auto t0 = Clock::now();
  for (const auto& f : w.deltaFrames) {
    nlohmann::json ev = nlohmann::json::parse(f.begin() + 6, f.end());
    state = state.patch(ev["delta"]);
  }
  auto t1 = Clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(w.deltaFrames.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int deltas = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  std::printf("bench_engine: %d deltas of 1-5 ops, seeded 1-4096 B chunks, median of %d runs\n", deltas, runs);
  std::printf("%-8s %10s %12s %14s %14s %14s\n", "state", "bytes", "avg event B", "engine us/ev", "naive us/ev",
              "snapshot us");
  double first = 0, last = 0;
  for (size_t target : {5000u, 50000u, 500000u}) {
    agui_bench::Workload w = agui_bench::makeWorkload(target, deltas, 42);
    std::string deltaBytes;
    for (const auto& f : w.deltaFrames) deltaBytes += f;
    auto chunks = agui_bench::chunkSizes(deltaBytes.size(), 4096, 7);
    std::vector<double> engine, naive, snap;
    for (int r = 0; r < runs; ++r) {
      double s = 0;
      engine.push_back(runEngine(w, deltaBytes, chunks, &s));
      snap.push_back(s);
      naive.push_back(runNaive(w));  // interleaved, so both see the same machine state
    }
    double e = median(engine);
    if (target == 5000) first = e;
    last = e;
    std::printf("%-8s %10zu %12zu %14.2f %14.2f %14.1f\n",
                target == 5000 ? "5KB" : target == 50000 ? "50KB" : "500KB", w.stateBytes,
                deltaBytes.size() / w.deltaFrames.size(), e, median(naive), median(snap));
  }
  std::printf("engine 500KB/5KB per-delta ratio: %.2fx (target <= 1.5x)\n", last / first);
  return 0;
}
