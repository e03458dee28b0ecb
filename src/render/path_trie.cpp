#include "render/path_trie.h"

#include <charconv>

namespace agui_sync {

void PathTrie::add(const Tokens& tokens, Flag flag) {
  size_t at = 0;
  for (const std::string& token : tokens) {
    if (flag == Include) nodes_[at].includeBelow = true;
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
  PathNode& node = nodes_[at];
  if (flag == Include) node.include = hasInclude_ = true;
  else if (flag == Exclude) node.exclude = true;
  else node.untrusted = true;
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
