#pragma once
// The walk of one render pass (render/renderer.cpp): the state in, the JSON line
// and its truncations out. The driver (render/prompt_render.cpp) checks the
// options into a Plan, runs passes with shrinking limits until one fits the
// byte budget, and turns the cuts of that pass into the result. Split so that
// the walk, where the time goes, is built for speed and the driver for size
// (cmake/wasm.cmake). The contract is include/agui_sync/prompt_render.h.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/prompt_render.h>

#include "render/path_trie.h"

namespace agui_sync::render {

using json = nlohmann::json;
using Member = json::object_t::value_type;

// The checked options of one call.
struct Plan {
  const RenderOptions* options = nullptr;
  PathTrie trie;
  RenderLimits configured;
  const std::string* mark = nullptr;  // the datamark, nullptr when off
};

enum class CutKind { String, ArrayTail, ObjectTail, Depth, Key };

// A truncation as the walk sees it. What it dropped is measured only for the
// pass that is returned (earlier passes are abandoned), so a cut keeps what it
// needs to measure later.
struct Cut {
  CutKind kind = CutKind::String;
  std::string path;
  const char* reason = "";
  size_t dropped = 0;                    // String: known at once
  const json* node = nullptr;            // Depth: the container
  const json::array_t* array = nullptr;  // ArrayTail: the array ...
  size_t from = 0;                       // ... its first omitted index ...
  const PathNode* trie = nullptr;        // ... and the trie node (excluded elements are not omitted)
  std::vector<const Member*> members;    // ObjectTail / Key: the omitted members
};

class Renderer {
 public:
  Renderer(const Plan& plan, const RenderLimits& limits, size_t cap)
      : plan_(plan), trie_(plan.trie), limits_(limits), cap_(cap) {}

  // Renders the JSON line; false when it outgrew the cap (the pass is abandoned
  // at that point, so a pass costs at most about `cap` bytes of output).
  bool run(const json& state) {
    const PathNode* root = &trie_.root();
    if (root->exclude) body += "null";
    else node(state, root, 0, !trie_.hasInclude() || root->include, false);
    return !full_;
  }

  std::string body;
  std::vector<Cut> cuts;
  std::vector<std::string> untrusted;

 private:
  // A member to render. Trivially copyable, so that sorting moves no strings.
  struct Entry {
    const Member* member;
    const PathNode* trie;
    bool renamed;  // a reserved key: rendered with one more '$' in front
    const std::string& key() const { return member->first; }
    size_t nameSize() const { return key().size() + renamed; }
  };
  struct Step {
    const std::string* key;  // nullptr for an array element
    size_t index;
  };
  struct Checkpoint {
    size_t body, cuts, untrusted;
  };

  bool node(const json& v, const PathNode* t, size_t level, bool selected, bool inUntrusted);
  bool content(const json& v, const PathNode* t, size_t level, bool selected, bool inUntrusted);
  void scalar(const json& v);
  void string(const std::string& s, bool inUntrusted);
  void depthMarker(const json& v, size_t level);
  void array(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted);
  void arrayTail(const json::array_t& a, const PathNode* t, size_t from, size_t shown);
  bool partialArray(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted);
  void object(const json::object_t& o, const PathNode* t, size_t level, bool inUntrusted);
  bool partialObject(const json::object_t& o, const PathNode* t, size_t level, bool inUntrusted);
  void addEntry(std::vector<Entry>& entries, const Member& m, const PathNode* t);
  static void sortEntries(std::vector<Entry>& entries);
  void objectTail(const std::vector<Entry>& entries, size_t keep);
  bool member(const Entry& e, size_t level, bool selected, bool inUntrusted, bool first);
  bool partialChild(const json& v, const PathNode* t, size_t level, bool inUntrusted, size_t shown);
  void checkCap() {
    if (body.size() > cap_) full_ = true;
  }
  std::string pointer() const;
  Checkpoint checkpoint() const { return {body.size(), cuts.size(), untrusted.size()}; }
  // erase, not resize: the lists only shrink here, and resize would also
  // instantiate the growing path (code size counts in the browser module).
  void rollback(const Checkpoint& c) {
    body.erase(c.body);
    cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(c.cuts), cuts.end());
    untrusted.erase(untrusted.begin() + static_cast<std::ptrdiff_t>(c.untrusted), untrusted.end());
  }

  const Plan& plan_;
  const PathTrie& trie_;
  const RenderLimits limits_;
  const size_t cap_;
  bool full_ = false;
  std::vector<Step> path_;
};

}  // namespace agui_sync::render
