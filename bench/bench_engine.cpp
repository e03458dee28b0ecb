// Native benchmark: cost per STATE_DELTA, bytes in -> state updated, for 5 KB,
// 50 KB and 500 KB states, side by side with the naive approach of parsing each
// event and applying nlohmann's copying json::patch(). Not a test: it prints.
//
//   build/native/bench_engine [deltas=2000] [runs=5] [--shape=v1|ours|seed] [--sizes=5000,...] [--no-naive]
// --shape picks how the stream is sequenced (bench/workload.h WireShape; v1 by
// default), --sizes the states, --no-naive skips the naive column: with them,
// instruction counts of one stream, e.g.
//   valgrind --tool=callgrind --toggle-collect='agui_sync::SyncEngine::feed*' \
//     build/native/bench_engine 2000 1 --shape=seed --sizes=5000 --no-naive
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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
                 agui_sync::SyncStatus expected, double* snapshotUs) {
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
  if (applied != w.deltaFrames.size() || engine.status() != expected) {
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

struct Args {
  int deltas = 2000, runs = 5;
  agui_bench::WireShape shape = agui_bench::WireShape::MetadataV1;
  std::vector<size_t> sizes{5000, 50000, 500000};
  bool naive = true;
};

Args parseArgs(int argc, char** argv) {
  Args a;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-naive") a.naive = false;
    else if (arg == "--shape=ours") a.shape = agui_bench::WireShape::Ours;
    else if (arg == "--shape=seed") a.shape = agui_bench::WireShape::Seed;
    else if (arg.rfind("--sizes=", 0) == 0) {
      a.sizes.clear();
      for (const char* p = arg.c_str() + 8; *p;) {
        char* end = nullptr;
        a.sizes.push_back(std::strtoul(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (positional++ == 0) a.deltas = std::atoi(argv[i]);
    else a.runs = std::atoi(argv[i]);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parseArgs(argc, argv);
  // The seed article's unstamped snapshot never proves a position: its stream stays unverified.
  const auto expected = a.shape == agui_bench::WireShape::Seed ? agui_sync::SyncStatus::Unverified
                                                                : agui_sync::SyncStatus::Synced;
  std::printf("bench_engine: %d deltas of 1-5 ops, seeded 1-4096 B chunks, median of %d runs\n", a.deltas, a.runs);
  std::printf("%-8s %10s %12s %14s %14s %14s\n", "state", "bytes", "avg event B", "engine us/ev", "naive us/ev",
              "snapshot us");
  double first = 0, last = 0;
  for (size_t target : a.sizes) {
    agui_bench::Workload w = agui_bench::makeWorkload(target, a.deltas, 42, a.shape);
    std::string deltaBytes;
    for (const auto& f : w.deltaFrames) deltaBytes += f;
    auto chunks = agui_bench::chunkSizes(deltaBytes.size(), 4096, 7);
    std::vector<double> engine, naive{0}, snap;
    for (int r = 0; r < a.runs; ++r) {
      double s = 0;
      engine.push_back(runEngine(w, deltaBytes, chunks, expected, &s));
      snap.push_back(s);
      if (a.naive) naive.push_back(runNaive(w));  // interleaved, so both see the same machine state
    }
    if (a.naive) naive.erase(naive.begin());
    double e = median(engine);
    if (target == a.sizes.front()) first = e;
    last = e;
    std::printf("%-8s %10zu %12zu %14.2f %14.2f %14.1f\n", (std::to_string(target / 1000) + "KB").c_str(),
                w.stateBytes, deltaBytes.size() / w.deltaFrames.size(), e, median(naive), median(snap));
  }
  std::printf("engine largest/smallest per-delta ratio: %.2fx (target <= 1.5x)\n", last / first);
  return 0;
}
