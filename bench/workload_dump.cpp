// Writes the benchmark workload (bench/workload.h) as raw SSE bytes, so that the
// JS consumer benchmark measures exactly the bytes the native one does.
//
//   workload_dump <stateBytes> [deltas=2000] [seed=42] > stream.sse
#include <cstdio>
#include <cstdlib>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: workload_dump <stateBytes> [deltas] [seed]\n");
    return 2;
  }
  const size_t bytes = std::strtoul(argv[1], nullptr, 10);
  const int deltas = argc > 2 ? std::atoi(argv[2]) : 2000;
  const uint32_t seed = argc > 3 ? static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 42;
  const std::string all = agui_bench::makeWorkload(bytes, deltas, seed).bytes();
  std::fwrite(all.data(), 1, all.size(), stdout);
  return 0;
}
