// agui-sync-replay: explain a captured SSE stream.
//
//   agui-sync-replay [capture.sse | -] [--chunk N] [--options '{"reorderWindow":8}']
//
// Reads the raw bytes (a file, or stdin with "-" or no argument), feeds them to
// the engine in chunks of N bytes (default 4096), ends the stream, and prints one
// JSON object: every outcome in order (with the index of the SSE event that
// produced it), the final state, status, lastSeq, lastEventId and the metrics.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "facade/sync_facade.h"
#include <agui_sync/metrics.h>
#include "facade/result_json.h"
#include <agui_sync/sync_engine.h>

namespace {

int usage() {
  std::fprintf(stderr, "usage: agui-sync-replay [capture.sse | -] [--chunk N] [--options JSON]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "-", optionsJson;
  size_t chunk = 4096;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--chunk" && i + 1 < argc) {
      chunk = std::strtoul(argv[++i], nullptr, 10);
      if (chunk == 0) return usage();
    } else if (a == "--options" && i + 1 < argc) {
      optionsJson = argv[++i];
    } else if (a == "-h" || a == "--help") {
      return usage();
    } else {
      path = a;
    }
  }
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "agui-sync-replay: cannot open %s\n", path.c_str());
      return 1;
    }
    in = &file;
  }
  agui_sync::SyncFacade facade(optionsJson);
  if (facade.initFailure()) {
    std::fprintf(stderr, "agui-sync-replay: %s\n", facade.initFailure()->message.c_str());
    return 2;
  }
  agui_sync::SyncEngine& engine = facade.engine();
  std::string body;
  bool first = true;
  std::vector<char> buf(chunk);
  std::vector<agui_sync::Outcome> out;
  auto emit = [&] {
    for (const auto& o : out) {
      body += first ? "\n  " : ",\n  ";
      first = false;
      std::string one;
      agui_sync::appendOutcomeJson(one, o);
      // Tag each outcome with the SSE event count at the time, to locate it in the capture.
      body += "{\"atEvent\":" + std::to_string(engine.metrics().events) + "," + one.substr(1);
    }
    out.clear();
  };
  while (*in) {
    in->read(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::streamsize n = in->gcount();
    if (n <= 0) break;
    engine.feed(reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(n), out);
    emit();
  }
  engine.end(out);
  emit();
  std::string status = facade.statusJson();  // {"outcomes":[],"status":...}
  std::cout << "{\"outcomes\":[" << body << "\n],\n\"finalState\":" << facade.stateJson()
            << ",\n\"engine\":" << status << ",\n\"metrics\":" << facade.metricsJson() << "}\n";
  return 0;
}
