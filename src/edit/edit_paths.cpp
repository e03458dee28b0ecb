#include "edit/edit_paths.h"
#include "json/cold.h"

namespace agui_sync {

namespace {

bool isPrefix(const Tokens& prefix, const Tokens& path) {
  if (prefix.size() > path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i] != path[i]) return false;
  return true;
}

}  // namespace

const char* ownerName(Owner owner) {
  switch (owner) {
    case Owner::Agent: return "agent";
    case Owner::User: return "user";
    case Owner::Shared: break;
  }
  return "shared";
}

const char* conflictPolicyName(ConflictPolicy policy) {
  return policy == ConflictPolicy::UserWins ? "user-wins" : "agent-wins";
}

std::string editOrigin(const std::string& editId) {
  const size_t colon = editId.rfind(':');
  return colon == std::string::npos ? editId : editId.substr(0, colon);
}

AGUI_COLD bool OwnershipMap::assign(const std::vector<OwnershipRule>& rules, std::string& error) {
  std::vector<std::pair<Tokens, Owner>> parsed;
  for (const OwnershipRule& rule : rules) {
    Tokens tokens;
    std::string why;
    if (!parsePointer(rule.path, tokens, why)) {
      error = "ownership path '" + rule.path + "': " + why;
      return false;
    }
    parsed.emplace_back(std::move(tokens), rule.owner);
  }
  rules_ = std::move(parsed);
  return true;
}

AGUI_COLD Owner OwnershipMap::ownerOf(const Tokens& path) const {
  Owner owner = Owner::Shared;
  size_t best = 0;
  bool found = false;
  for (const auto& [prefix, who] : rules_) {
    if (!isPrefix(prefix, path) || (found && prefix.size() < best)) continue;
    owner = who;  // equal lengths: the later rule wins, as in an object literal
    best = prefix.size();
    found = true;
  }
  return owner;
}

AGUI_COLD Owner OwnershipMap::writeOwner(const Tokens& path) const {
  const Owner own = ownerOf(path);
  if (own == Owner::Agent) return own;
  for (const auto& [prefix, who] : rules_)
    if (who == Owner::Agent && prefix.size() > path.size() && isPrefix(path, prefix)) return Owner::Agent;
  return own;
}

AGUI_COLD bool overlaps(const Tokens& a, const Tokens& b) { return a.size() <= b.size() ? isPrefix(a, b) : isPrefix(b, a); }

AGUI_COLD Tokens writtenPath(const nlohmann::json& doc, const Tokens& path) {
  if (path.empty()) return path;
  const nlohmann::json* parent = resolvePointer(doc, path, path.size() - 1);
  if (parent == nullptr || !parent->is_array()) return path;
  return Tokens(path.begin(), path.end() - 1);
}

AGUI_COLD void editWrites(const nlohmann::json& doc, const PatchOps& ops, std::vector<std::pair<Tokens, size_t>>& out) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const PatchOp& op = ops[i];
    if (op.kind == OpKind::Test) continue;
    if (op.kind == OpKind::Move) out.emplace_back(writtenPath(doc, op.fromTokens), i);
    out.emplace_back(writtenPath(doc, op.pathTokens), i);
  }
}

namespace {

// Appends where `a` and `b` (the values at `path`) differ; false when more than
// `budget` pointers would be needed.
bool differences(const nlohmann::json& a, const nlohmann::json& b, Tokens& path, std::vector<Tokens>& out,
                 size_t& budget) {
  if (!a.is_object() || !b.is_object()) {
    if (a == b) return true;
    if (budget == 0) return false;
    --budget;
    out.push_back(path);
    return true;
  }
  for (const auto& [key, value] : a.items()) {
    path.push_back(key);
    auto other = b.find(key);
    const bool ok = other != b.end() ? differences(value, *other, path, out, budget)
                                     : (budget > 0 && (--budget, out.push_back(path), true));
    path.pop_back();
    if (!ok) return false;
  }
  for (const auto& [key, value] : b.items()) {
    if (a.contains(key)) continue;
    if (budget == 0) return false;
    --budget;
    path.push_back(key);
    out.push_back(path);
    path.pop_back();
  }
  return true;
}

void opWrites(const nlohmann::json& before, const nlohmann::json& op, std::vector<Tokens>& out) {
  const std::string* kind = op.contains("op") && op["op"].is_string() ? op["op"].get_ptr<const std::string*>() : nullptr;
  auto pointer = [&](const char* member, Tokens& t) {
    std::string error;
    return op.contains(member) && op[member].is_string() && parsePointer(op[member].get<std::string>(), t, error);
  };
  Tokens path, from;
  if (!kind || *kind == "test" || !pointer("path", path)) return;
  if (*kind == "move" && pointer("from", from)) out.push_back(writtenPath(before, from));
  const Tokens written = writtenPath(before, path);
  const nlohmann::json* old = resolvePointer(before, path, path.size());
  if ((*kind == "replace" || *kind == "add") && written.size() == path.size() && old && op.contains("value")) {
    std::vector<Tokens> fine;
    size_t budget = kMaxFineWrites;
    if (differences(*old, op["value"], path, fine, budget)) {
      for (Tokens& t : fine) out.push_back(std::move(t));
      return;
    }
  }
  out.push_back(written);
}

}  // namespace

std::vector<Tokens> writesOf(const nlohmann::json& before, const nlohmann::json& ops) {
  std::vector<Tokens> out;
  if (!ops.is_array()) return out;
  for (const nlohmann::json& op : *ops.get_ptr<const nlohmann::json::array_t*>())
    if (op.is_object()) opWrites(before, op, out);
  return out;
}

}  // namespace agui_sync
