// untrusted: 'auto' (autoUntrustedPaths, include/agui_sync/prompt_render.h):
// ownership rules resolved against the state into the pointers the renderer
// wraps as {"$untrusted": ...}. This is the one place where "who wrote this"
// becomes "what is marked": today the app's declarations feed it; write
// provenance (RenderOptions::userWritten) feeds it the same way later.
#include <agui_sync/prompt_render.h>

#include <charconv>

#include "json/json_pointer.h"
#include "render/path_trie.h"

namespace agui_sync {

namespace {

using json = nlohmann::json;

// One value still to visit: where it is in the state and in the trie, the
// owner it inherits, and its pointer.
struct Visit {
  const json* value;
  const PathNode* node;  // nullptr: no rule at or below it
  Owner inherited;
  std::string path;
};

std::string childPath(const std::string& parent, std::string_view token) {
  std::string out = parent;
  out += '/';
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string indexToken(size_t i) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, i).ptr;
  return std::string(buf, static_cast<size_t>(end - buf));
}

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

// Whether a rule other than User below `node` names a value that exists under
// `value` (only then is a User subtree not wholly the user's).
bool otherOwnerExists(const PathTrie& trie, const json& value, const PathNode& node) {
  std::vector<std::pair<const json*, const PathNode*>> todo{{&value, &node}};
  while (!todo.empty()) {
    const auto [v, n] = todo.back();
    todo.pop_back();
    for (const auto& [token, index] : n->children) {
      const PathNode& child = trie.at(index);
      if (!child.otherOwnerBelow && !(child.owned && child.owner != Owner::User)) continue;
      const json* c = childValue(*v, token);
      if (c == nullptr) continue;
      if (child.owned && child.owner != Owner::User) return true;
      todo.emplace_back(c, &child);
    }
  }
  return false;
}

// Pushes the children of a container to visit, last first so that they are
// visited in document order. A User container visits every child (those with
// no rule below are emitted as they are); any other only those a rule names.
void pushChildren(const PathTrie& trie, const Visit& at, Owner owner, std::vector<Visit>& todo) {
  const json& v = *at.value;
  if (owner == Owner::User) {
    if (const auto* o = v.get_ptr<const json::object_t*>()) {
      for (auto it = o->rbegin(); it != o->rend(); ++it)
        todo.push_back({&it->second, trie.child(at.node, it->first), owner, childPath(at.path, it->first)});
    } else if (const auto* a = v.get_ptr<const json::array_t*>()) {
      for (size_t i = a->size(); i-- > 0;)
        todo.push_back({&(*a)[i], trie.child(at.node, i), owner, childPath(at.path, indexToken(i))});
    }
    return;
  }
  const auto& children = at.node->children;
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    if (const json* c = childValue(v, it->first))
      todo.push_back({c, &trie.at(it->second), owner, childPath(at.path, it->first)});
  }
}

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
    if (!addRules(trie, "ownership", i, ownership[i].pointer, ownership[i].owner, failure)) return false;
  for (size_t i = 0; i < userWritten.size(); ++i)
    if (!addRules(trie, "userWritten", i, userWritten[i], Owner::User, failure)) return false;
  trie.markOtherOwners();
  out.clear();
  std::vector<Visit> todo{{&state, &trie.root(), Owner::Shared, std::string()}};
  while (!todo.empty()) {
    Visit at = std::move(todo.back());
    todo.pop_back();
    const Owner owner = at.node && at.node->owned ? at.node->owner : at.inherited;
    const bool wholly = owner == Owner::User &&
                        !(at.node && at.node->otherOwnerBelow && otherOwnerExists(trie, *at.value, *at.node));
    if (wholly) out.push_back(std::move(at.path));
    else if (at.node != nullptr) pushChildren(trie, at, owner, todo);
  }
  return true;
}

}  // namespace agui_sync
