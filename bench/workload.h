#pragma once
// The benchmark workload, shared by every benchmark so they measure identical
// bytes: an agent-shaped state (a document with sections, a todo list, a
// proposal) of about `targetBytes`, one snapshot, then `deltas` STATE_DELTA
// events of 1-5 ops (about 74% replace, 15% add, 11% remove), SSE-encoded.
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace agui_bench {

using nlohmann::json;

struct Workload {
  std::string snapshotFrame;
  std::vector<std::string> deltaFrames;
  size_t stateBytes = 0;
  std::string bytes() const {
    std::string all = snapshotFrame;
    for (const auto& f : deltaFrames) all += f;
    return all;
  }
};

inline std::string words(std::mt19937& rng, size_t n) {
  static const char* w[] = {"agent", "state", "delta", "draft", "budget", "trip", "review", "approve", "send", "plan"};
  std::string s;
  while (s.size() < n) {
    if (!s.empty()) s.push_back(' ');
    s += w[rng() % 10];
  }
  return s;
}

// The same workload as JSON values, for benchmarks of the sending side: the
// initial state and each delta's ops (the state after all of them is `final`).
struct StateWorkload {
  json initial;
  std::vector<json> deltas;  // RFC 6902 op arrays, in order
  json final;
  size_t stateBytes = 0;
};

inline StateWorkload makeStateWorkload(size_t targetBytes, int deltas, uint32_t seed) {
  std::mt19937 rng(seed);
  json state = {{"document", {{"title", "Quarterly plan"}, {"sections", json::array()}}},
                {"todos", json::array()},
                {"proposal", {{"recipient", "alice@example.com"}, {"amount", 120}, {"content", "Invoice #1"}}}};
  int nextTodo = 0;
  while (state.dump().size() < targetBytes) {
    state["document"]["sections"].push_back({{"heading", words(rng, 20)}, {"body", words(rng, 300)}});
    for (int i = 0; i < 2; ++i)
      state["todos"].push_back({{"id", nextTodo++}, {"text", words(rng, 30)}, {"done", false}});
  }
  StateWorkload w;
  w.stateBytes = state.dump().size();
  w.initial = state;
  for (int s = 1; s <= deltas; ++s) {
    json ops = json::array();
    int nops = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < nops; ++k) {
      auto& sections = state["document"]["sections"];
      auto& todos = state["todos"];
      unsigned roll = rng() % 100;
      if (roll < 74 || todos.size() < 2) {
        switch (rng() % 4) {
          case 0: {
            size_t i = rng() % sections.size();
            std::string v = words(rng, 60 + rng() % 120);
            sections[i]["body"] = v;
            ops.push_back({{"op", "replace"}, {"path", "/document/sections/" + std::to_string(i) + "/body"}, {"value", v}});
            break;
          }
          case 1: {
            size_t i = rng() % todos.size();
            bool v = rng() % 2;
            todos[i]["done"] = v;
            ops.push_back({{"op", "replace"}, {"path", "/todos/" + std::to_string(i) + "/done"}, {"value", v}});
            break;
          }
          case 2: {
            int v = static_cast<int>(rng() % 10000);
            state["proposal"]["amount"] = v;
            ops.push_back({{"op", "replace"}, {"path", "/proposal/amount"}, {"value", v}});
            break;
          }
          default: {
            size_t i = rng() % sections.size();
            std::string v = words(rng, 20);
            sections[i]["heading"] = v;
            ops.push_back({{"op", "replace"}, {"path", "/document/sections/" + std::to_string(i) + "/heading"}, {"value", v}});
          }
        }
      } else if (roll < 89) {
        json todo = {{"id", nextTodo++}, {"text", words(rng, 30)}, {"done", false}};
        todos.push_back(todo);
        ops.push_back({{"op", "add"}, {"path", "/todos/-"}, {"value", todo}});
      } else {
        size_t i = rng() % todos.size();
        todos.erase(i);
        ops.push_back({{"op", "remove"}, {"path", "/todos/" + std::to_string(i)}});
      }
    }
    w.deltas.push_back(std::move(ops));
  }
  w.final = std::move(state);
  return w;
}

// Where the stream says where each event stands (docs/wire.md sections 6 and 10).
enum class WireShape {
  MetadataV1,  // seq / baseSeq at the top of `metadata` (version 1; what workload_dump writes)
  Ours,        // seq / baseSeq under metadata["agui-state-sync"] (what the emitter sends)
  Seed,        // the seed article's: an unstamped snapshot, top-level seq / base_seq
  None,        // no sequencing at all
};

inline json stamped(json ev, uint64_t seq, WireShape shape) {
  const bool delta = ev["type"] == "STATE_DELTA";
  json fields = {{"seq", seq}};
  if (delta) fields["baseSeq"] = seq - 1;
  if (shape == WireShape::MetadataV1) ev["metadata"] = fields;
  else if (shape == WireShape::Ours) ev["metadata"] = {{"agui-state-sync", fields}};
  else if (shape == WireShape::Seed && delta) ev["seq"] = seq, ev["base_seq"] = seq - 1;
  return ev;
}

inline Workload makeWorkload(size_t targetBytes, int deltas, uint32_t seed, WireShape shape = WireShape::MetadataV1) {
  StateWorkload sw = makeStateWorkload(targetBytes, deltas, seed);
  Workload w;
  w.stateBytes = sw.stateBytes;
  json snap = {{"type", "STATE_SNAPSHOT"}, {"snapshot", sw.initial}};
  w.snapshotFrame = "data: " + stamped(std::move(snap), 0, shape).dump() + "\n\n";
  for (int s = 1; s <= deltas; ++s) {
    json ev = {{"type", "STATE_DELTA"}, {"delta", sw.deltas[static_cast<size_t>(s - 1)]}};
    w.deltaFrames.push_back("data: " + stamped(std::move(ev), static_cast<uint64_t>(s), shape).dump() + "\n\n");
  }
  return w;
}

// Seeded chunk boundaries of 1..maxChunk bytes over `total` bytes.
inline std::vector<size_t> chunkSizes(size_t total, size_t maxChunk, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<size_t> sizes;
  for (size_t pos = 0; pos < total;) {
    size_t n = std::min(total - pos, 1 + rng() % maxChunk);
    sizes.push_back(n);
    pos += n;
  }
  return sizes;
}

}  // namespace agui_bench
