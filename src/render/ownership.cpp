// untrusted: 'auto' (autoUntrustedPaths, include/agui_sync/prompt_render.h):
// ownership rules resolved against the state into the pointers the renderer
// wraps as {"$untrusted": ...}. This is the one place where "who wrote this"
// becomes "what is marked": today the app's declarations feed it; write
// provenance (RenderOptions::userWritten) feeds it the same way later.
#include <agui_sync/prompt_render.h>

#include <string_view>

#include "json/json_pointer.h"
#include "render/path_trie.h"

namespace agui_sync {

namespace {

using json = nlohmann::json;

// The existing child of `value` that `token` names, or nullptr.
const json* childValue(const json& value, const std::string& token) {
  if (const auto* o = value.get_ptr<const json::object_t*>()) {
    auto it = o->find(token);
    return it == o->end() ? nullptr : &it->second;
  }
  const auto* a = value.get_ptr<const json::array_t*>();
  size_t i = 0;
  if (a == nullptr || !parseArrayIndex(token, i) || i >= a->size()) return nullptr;
  return &(*a)[i];
}

// The walk. It recurses only where a rule leads or inside a User container
// that a rule splits, and no deeper than kMaxRenderDepth: no render shows a
// level below that, so a mark there would never be seen.
class Resolver {
 public:
  Resolver(const PathTrie& trie, std::vector<std::string>& out) : trie_(trie), out_(out) {}

  void visit(const json& v, const PathNode* n, Owner inherited, size_t depth) {
    const Owner owner = n && n->owned ? n->owner : inherited;
    if (owner == Owner::User && !(n && n->otherOwnerBelow && otherOwnerExists(v, *n, depth))) {
      out_.push_back(path_);
      return;
    }
    if (n == nullptr || depth >= kMaxRenderDepth) return;
    // A User container visits every child (those no rule reaches are marked
    // whole); any other only the children a rule names.
    if (const auto* o = v.get_ptr<const json::object_t*>()) {
      for (const auto& [key, child] : *o) descend(child, trie_.child(n, key), key, owner, depth);
    } else if (const auto* a = v.get_ptr<const json::array_t*>()) {
      for (size_t i = 0; i < a->size(); ++i) descend((*a)[i], trie_.child(n, i), std::to_string(i), owner, depth);
    }
  }

 private:
  void descend(const json& v, const PathNode* n, std::string_view token, Owner owner, size_t depth) {
    if (owner != Owner::User && n == nullptr) return;
    const size_t length = path_.size();
    appendPointerToken(path_, token);
    visit(v, n, owner, depth + 1);
    path_.resize(length);
  }

  // Whether a rule other than User below `n` names a value that exists under
  // `v` (only then is a User subtree not wholly the user's).
  bool otherOwnerExists(const json& v, const PathNode& n, size_t depth) const {
    for (const auto& [token, index] : n.children) {
      const PathNode& child = trie_.at(index);
      const json* c = childValue(v, token);
      if (c == nullptr) continue;
      if (child.owned && child.owner != Owner::User) return true;
      if (child.otherOwnerBelow && depth < kMaxRenderDepth && otherOwnerExists(*c, child, depth + 1)) return true;
    }
    return false;
  }

  const PathTrie& trie_;
  std::vector<std::string>& out_;
  std::string path_;
};

bool addRules(PathTrie& trie, const char* name, size_t i, const std::string& pointer, Owner owner,
              Failure* failure) {
  Tokens tokens;
  std::string error;
  if (!parsePointer(pointer, tokens, error)) {
    if (failure)
      *failure = Failure{Code::InvalidOptions, std::string(name) + "[" + std::to_string(i) + "]: " + error, {}};
    return false;
  }
  trie.own(tokens, owner);
  return true;
}

}  // namespace

bool autoUntrustedPaths(const json& state, const std::vector<OwnershipRule>& ownership,
                        const std::vector<std::string>& userWritten, std::vector<std::string>& out,
                        Failure* failure) {
  PathTrie trie;
  for (size_t i = 0; i < ownership.size(); ++i)
    if (!addRules(trie, "ownership", i, ownership[i].path, ownership[i].owner, failure)) return false;
  for (size_t i = 0; i < userWritten.size(); ++i)
    if (!addRules(trie, "userWritten", i, userWritten[i], Owner::User, failure)) return false;
  trie.markOtherOwners();
  out.clear();
  Resolver(trie, out).visit(state, &trie.root(), Owner::Shared, 0);
  return true;
}

}  // namespace agui_sync
