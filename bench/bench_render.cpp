// Native benchmark of renderStateForPrompt (include/agui_sync/prompt_render.h)
// for 5 KB, 50 KB and 500 KB agent states (the shared workload, workload.h),
// against nlohmann's dump(2), the native stand-in for the
// JSON.stringify(state, null, 2) integrations paste today. Not a test: it prints
// a table, median of `runs` (each run repeats the call until ~20 ms pass).
//
//   build/native/bench_render [runs=15]
//
// Columns:
//   default   RenderOptions{} + /proposal untrusted: 32 KB cap, so the 50 KB and
//             500 KB states take budget passes ("limits": the limits of the render
//             returned, strings/arrays/objects/depth)
//   full      everything kept (caps far above the state): the cost per byte of
//             escaping, canonical key order and ECMAScript numbers
//   marked    as full, the whole state untrusted with a datamark (every string
//             value scanned for whitespace)
//   dump(2)   nlohmann::json::dump(2); dump() compact for scale
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <agui_sync/prompt_render.h>

#include "workload.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds per call: median over `runs` of (time of a batch / batch size).
double timePerCall(int runs, const std::function<size_t()>& call) {
  size_t sink = 0;
  int batch = 1;
  for (;;) {  // calibrate: a batch of at least ~20 ms
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) sink += call();
    if (Clock::now() - t0 > std::chrono::milliseconds(20) || batch >= (1 << 20)) break;
    batch *= 2;
  }
  std::vector<double> samples;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) sink += call();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / batch);
  }
  if (sink == 42) std::puts("");  // keep the calls observable
  return median(samples);
}

agui_sync::RenderResult renderOrDie(const json& state, const agui_sync::RenderOptions& o) {
  agui_sync::RenderResult r;
  agui_sync::Failure f;
  if (!agui_sync::renderStateForPrompt(state, o, r, &f)) {
    std::fprintf(stderr, "bench_render: %s\n", f.message.c_str());
    std::exit(1);
  }
  return r;
}

// The limits a render used, e.g. "2048/100/-/16" (strings/arrays/objects/depth).
std::string limits(const agui_sync::RenderResult& r) {
  const auto& l = r.applied;
  if (l.maxDepth == 0) return "too large";
  return std::to_string(l.maxStringBytes) + "/" + std::to_string(l.maxArrayItems) + "/" +
         (l.maxObjectMembers ? std::to_string(l.maxObjectMembers) : std::string("-")) + "/" +
         std::to_string(l.maxDepth);
}

void row(const char* name, const json& state, int runs) {
  agui_sync::RenderOptions def;
  def.untrusted = {"/proposal"};
  agui_sync::RenderOptions full = def;
  full.maxBytes = 256u << 20;
  full.maxStringBytes = full.maxArrayItems = 1u << 30;
  agui_sync::RenderOptions marked = full;
  marked.untrusted = {""};
  marked.datamark = "^";
  const agui_sync::RenderResult rd = renderOrDie(state, def), rf = renderOrDie(state, full);
  const std::string pretty = state.dump(2), compact = state.dump();
  const double tDef = timePerCall(runs, [&] { return renderOrDie(state, def).bytes; });
  const double tFull = timePerCall(runs, [&] { return renderOrDie(state, full).bytes; });
  const double tMarked = timePerCall(runs, [&] { return renderOrDie(state, marked).bytes; });
  const double tPretty = timePerCall(runs, [&] { return state.dump(2).size(); });
  const double tCompact = timePerCall(runs, [&] { return state.dump().size(); });
  std::printf("%-6s %8zu | %8.1f %6zu %-14s | %8.1f %8zu %7.0f | %8.1f | %8.1f %8zu | %8.1f | %5.2fx\n", name,
              compact.size(), tDef, rd.bytes, limits(rd).c_str(), tFull, rf.bytes, rf.bytes / tFull, tMarked, tPretty,
              pretty.size(), tCompact, tFull / tPretty);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
  std::printf("bench_render: renderStateForPrompt vs dump(2), median of %d runs, us per call\n", runs);
  std::printf("%-6s %8s | %8s %6s %-14s | %8s %8s %7s | %8s | %8s %8s | %8s | %6s\n", "state", "bytes", "default",
              "out", "limits", "full", "out", "MB/s", "marked", "dump(2)", "out", "dump()", "full/d2");
  const std::pair<const char*, size_t> sizes[] = {{"5KB", 5000}, {"50KB", 50000}, {"500KB", 500000}};
  for (const auto& [name, bytes] : sizes) row(name, agui_bench::makeStateWorkload(bytes, 0, 42).initial, runs);
  std::printf("default = RenderOptions{} (32 KB cap, budget passes); full = nothing cut; marked = full, all\n"
              "untrusted with datamark \"^\"; out = bytes of text; MB/s = output of full; full/d2 = full / dump(2);\n"
              "limits = what the default render applied (strings/arrays/objects/depth)\n");
  return 0;
}
