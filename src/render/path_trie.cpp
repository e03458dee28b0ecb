#include "render/path_trie.h"

#include <charconv>

namespace agui_sync {

size_t PathTrie::walk(const Tokens& tokens, bool includeBelow) {
  size_t at = 0;
  for (const std::string& token : tokens) {
    if (includeBelow) nodes_[at].includeBelow = true;
    auto it = nodes_[at].children.find(token);
    if (it == nodes_[at].children.end()) {
      // Insert before growing the vector: `it` and the node refer into it.
      const size_t next = nodes_.size();
      nodes_[at].children.emplace(token, next);
      nodes_.emplace_back();
      at = next;
    } else {
      at = it->second;
    }
  }
  return at;
}

void PathTrie::add(const Tokens& tokens, Flag flag) {
  PathNode& node = nodes_[walk(tokens, flag == Include)];
  if (flag == Include) node.include = hasInclude_ = true;
  else if (flag == Exclude) node.exclude = true;
  else node.untrusted = true;
}

void PathTrie::own(const Tokens& tokens, Owner owner) {
  PathNode& node = nodes_[walk(tokens, false)];
  node.owned = true;
  node.owner = owner;
}

void PathTrie::markOtherOwners() {
  // A child's index is always greater than its parent's (nodes are appended
  // after the node that links them), so one backward sweep sees every child
  // before its parent.
  for (size_t i = nodes_.size(); i-- > 0;) {
    PathNode& node = nodes_[i];
    for (const auto& [token, index] : node.children) {
      const PathNode& child = nodes_[index];
      if (child.otherOwnerBelow || (child.owned && child.owner != Owner::User)) node.otherOwnerBelow = true;
    }
  }
}

const PathNode* PathTrie::child(const PathNode* node, std::string_view token) const {
  if (node == nullptr || node->children.empty()) return nullptr;
  auto it = node->children.find(token);
  return it == node->children.end() ? nullptr : &nodes_[it->second];
}

const PathNode* PathTrie::child(const PathNode* node, size_t index) const {
  if (node == nullptr || node->children.empty()) return nullptr;
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, index).ptr;
  return child(node, std::string_view(buf, static_cast<size_t>(end - buf)));
}

}  // namespace agui_sync
