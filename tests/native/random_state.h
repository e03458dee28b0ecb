#pragma once
// Seeded generators of agent-like states and valid random deltas, shared by
// the property tests. Deterministic for a given seed.
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "json/json_pointer.h"

namespace agui_test {

using nlohmann::json;

class RandomState {
 public:
  explicit RandomState(uint32_t seed) : rng_(seed) {}

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  std::mt19937& rng() { return rng_; }

  json scalar() {
    switch (uniform(0, 5)) {
      case 0: return uniform(-1000, 1000);
      case 1: return uniform(0, 1000) / 8.0;
      case 2: return chance(0.5);
      case 3: return nullptr;
      case 4: return "k~/" + std::to_string(uniform(0, 99));  // keys/values needing pointer escapes
      default: return "text " + std::to_string(uniform(0, 1 << 20));
    }
  }

  json value(int depth) {
    if (depth <= 0 || chance(0.5)) return scalar();
    if (chance(0.5)) {
      json arr = json::array();
      for (int i = uniform(0, 3); i > 0; --i) arr.push_back(value(depth - 1));
      return arr;
    }
    json obj = json::object();
    for (int i = uniform(0, 3); i > 0; --i) obj[key()] = value(depth - 1);
    return obj;
  }

  std::string key() {
    static const char* keys[] = {"title", "items", "proposal", "a/b", "m~n", "", "__proto__", "count", "x", "y"};
    return keys[uniform(0, 9)];
  }

  // A random path to an existing node (possibly the root).
  agui_sync::Tokens existingPath(const json& doc) {
    agui_sync::Tokens path;
    const json* node = &doc;
    while (node->is_structured() && !node->empty() && chance(0.7)) {
      if (node->is_object()) {
        auto it = node->begin();
        std::advance(it, uniform(0, static_cast<int>(node->size()) - 1));
        path.push_back(it.key());
        node = &*it;
      } else {
        size_t i = static_cast<size_t>(uniform(0, static_cast<int>(node->size()) - 1));
        path.push_back(std::to_string(i));
        node = &(*node)[i];
      }
    }
    return path;
  }

  // One valid op against `doc`, applied to `doc` as well (so a sequence of them
  // stays valid). Mix roughly as agents write: mostly replace, some add/remove.
  json op(json& doc) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      agui_sync::Tokens path = existingPath(doc);
      json* node = agui_sync::resolvePointer(doc, path, path.size());
      int kind = uniform(0, 99);
      if (kind < 60 || path.empty()) {
        json v = value(2);
        json o = {{"op", "replace"}, {"path", agui_sync::formatPointer(path)}, {"value", v}};
        if (chance(0.2)) o = json::array({json{{"op", "test"}, {"path", o["path"]}, {"value", *node}}, o});
        *node = v;
        return o;
      }
      json* parent = agui_sync::resolvePointer(doc, path, path.size() - 1);
      if (kind < 85) {
        // add into the node if it is a container, else next to it
        json* target = node->is_structured() ? node : parent;
        agui_sync::Tokens tpath = node->is_structured() ? path : agui_sync::Tokens(path.begin(), path.end() - 1);
        json v = value(1);
        if (target->is_object()) {
          std::string k = key();
          tpath.push_back(k);
          (*target)[k] = v;
        } else {
          bool append = chance(0.5);
          size_t idx = append ? target->size() : static_cast<size_t>(uniform(0, static_cast<int>(target->size())));
          tpath.push_back(append ? "-" : std::to_string(idx));
          target->insert(target->begin() + static_cast<std::ptrdiff_t>(idx), v);
        }
        return {{"op", "add"}, {"path", agui_sync::formatPointer(tpath)}, {"value", v}};
      }
      if (kind < 95) {
        std::string p = agui_sync::formatPointer(path);
        if (parent->is_object()) parent->erase(path.back());
        else parent->erase(static_cast<size_t>(std::stoul(path.back())));
        return {{"op", "remove"}, {"path", p}};
      }
      // move a member to a fresh top-level key (never into its own child)
      if (!doc.is_object()) continue;
      std::string to = "moved" + std::to_string(uniform(0, 9));
      if (path.size() == 1 && path[0] == to) continue;
      json v = *node;
      std::string from = agui_sync::formatPointer(path);
      if (parent->is_object()) parent->erase(path.back());
      else parent->erase(static_cast<size_t>(std::stoul(path.back())));
      doc[to] = v;
      return {{"op", "move"}, {"from", from}, {"path", "/" + to}};
    }
    json v = value(1);
    doc = json::object({{"reset", v}});
    return {{"op", "replace"}, {"path", ""}, {"value", doc}};
  }

  // A delta of `n` ops (a `test` precondition may precede a replace), applied to `doc`.
  json delta(json& doc, int n) {
    json ops = json::array();
    for (int i = 0; i < n; ++i) {
      json o = op(doc);
      if (o.is_array()) for (auto& x : o) ops.push_back(x);
      else ops.push_back(o);
    }
    return ops;
  }

  json agentState(int sections) {
    json s = {{"document", {{"title", "Draft"}, {"sections", json::array()}}},
              {"todos", json::array()},
              {"proposal", {{"recipient", "alice@example.com"}, {"amount", 120}, {"content", "Invoice"}}}};
    for (int i = 0; i < sections; ++i) {
      s["document"]["sections"].push_back({{"heading", "Section " + std::to_string(i)}, {"body", std::string(uniform(40, 200), 'x')}});
      s["todos"].push_back({{"id", i}, {"text", "todo " + std::to_string(i)}, {"done", chance(0.3)}});
    }
    return s;
  }

 private:
  std::mt19937 rng_;
};

// SSE frame for one event (data lines never contain raw newlines: dump() escapes them).
inline std::string sseFrame(const json& event) { return "data: " + event.dump() + "\n\n"; }

inline json snapshotEvent(const json& state, std::optional<uint64_t> seq) {
  json e = {{"type", "STATE_SNAPSHOT"}, {"snapshot", state}};
  if (seq) e["metadata"] = {{"seq", *seq}};
  return e;
}

inline json deltaEvent(const json& ops, std::optional<uint64_t> base, std::optional<uint64_t> seq) {
  json e = {{"type", "STATE_DELTA"}, {"delta", ops}};
  if (seq) e["metadata"] = {{"seq", *seq}, {"baseSeq", *base}};
  return e;
}

}  // namespace agui_test
