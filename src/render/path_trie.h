#pragma once
// The include / exclude / untrusted pointers of a render, merged into one trie
// of reference tokens, so the walk knows at every node what applies to it with
// one lookup per child instead of comparing every pointer. The ownership rules
// of `untrusted: auto` use a trie of their own (render/ownership.cpp).
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <agui_sync/prompt_render.h>

#include "json/json_pointer.h"

namespace agui_sync {

// Tokens by length, then bytes: array indices (canonical decimals) come out in
// numeric order, so a walk over an array's children needs no sort.
struct TokenOrder {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  }
};

struct PathNode {
  bool include = false;       // an include pointer ends here
  bool exclude = false;       // an exclude pointer ends here
  bool untrusted = false;     // an untrusted pointer ends here
  bool includeBelow = false;  // an include pointer passes strictly below
  // Ownership tries only (render/ownership.cpp): the owner a rule declares here,
  // and whether a rule strictly below declares one other than User.
  bool owned = false;
  Owner owner = Owner::Shared;
  bool otherOwnerBelow = false;
  std::map<std::string, size_t, TokenOrder> children;  // token -> index in PathTrie
};

class PathTrie {
 public:
  enum Flag { Include, Exclude, Untrusted };
  PathTrie() : nodes_(1) {}

  void add(const Tokens& tokens, Flag flag);
  // Declares `owner` at `tokens` (a later declaration of the same path wins).
  void own(const Tokens& tokens, Owner owner);
  // Sets otherOwnerBelow everywhere; call once after the last own().
  void markOtherOwners();
  const PathNode& root() const { return nodes_[0]; }
  // The child for `token`, or nullptr. `node` may be nullptr (off the trie).
  const PathNode* child(const PathNode* node, std::string_view token) const;
  // The same for an array index (looked up as its canonical decimal token).
  const PathNode* child(const PathNode* node, size_t index) const;
  const PathNode& at(size_t index) const { return nodes_[index]; }
  bool hasInclude() const { return hasInclude_; }

 private:
  // The node at `tokens`, created as needed; includeBelow marks the nodes above it.
  size_t walk(const Tokens& tokens, bool includeBelow);

  std::vector<PathNode> nodes_;
  bool hasInclude_ = false;
};

}  // namespace agui_sync
