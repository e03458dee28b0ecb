#pragma once
// Where an edit writes, who owns it, and when two writes overlap (edits.h).
// Shared by the client's edit layer and the emitter's edit intake, so both
// sides of the wire draw the same conclusions from the same ops.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/edits.h>

#include "json/json_patch.h"
#include "json/json_pointer.h"

namespace agui_sync {

class OwnershipMap {
 public:
  // Parses the rules; false (and why) when a pointer is invalid.
  bool assign(const std::vector<OwnershipRule>& rules, std::string& error);
  // The owner of `path`: the rule with the longest matching prefix, else shared.
  Owner ownerOf(const Tokens& path) const;
  // What an edit writing `path` runs into: agent when `path` is agent-owned or
  // lies above an agent-owned rule (writing it would overwrite the agent's part).
  Owner writeOwner(const Tokens& path) const;

 private:
  std::vector<std::pair<Tokens, Owner>> rules_;
};

// One is a prefix of the other, token by token.
bool overlaps(const Tokens& a, const Tokens& b);

// What a write at `path` counts as for overlap: the array itself when `path`
// names an element of an array in `doc` (indexes shift), else `path`.
Tokens writtenPath(const nlohmann::json& doc, const Tokens& path);

// The pointers an edit writes (path, and `from` for move), as writtenPath()
// sees them in `doc`; `test` and copy's `from` only read. Each with its index.
void editWrites(const nlohmann::json& doc, const PatchOps& ops, std::vector<std::pair<Tokens, size_t>>& out);

// The pointers RFC 6902 `ops` (a JSON array) change in `before`, the state
// they apply to, as finely as the values tell: a replace of an object whose
// members mostly stay the same counts only the members that change (a diff
// that collapsed many small writes into one replace must not look like a write
// to everything under it). Arrays count whole, as writtenPath() says. At most
// kMaxFineWrites pointers per op, else the op's own path. Cost: the sizes of the
// replaced and replacing values.
constexpr size_t kMaxFineWrites = 64;
std::vector<Tokens> writesOf(const nlohmann::json& before, const nlohmann::json& ops);

}  // namespace agui_sync
