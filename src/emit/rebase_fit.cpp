#include "emit/rebase_fit.h"

#include <string>
#include <vector>

#include "json/json_pointer.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

// An op's path in `state`: its tokens, and how much of it is there.
struct Target {
  Tokens tokens;
  bool valid = false;
  size_t existing = 0;         // the longest prefix of tokens that resolves in state
  const json* parent = nullptr;  // the container the op's member goes in (existing >= size - 1)
  bool present = false;          // an object member that is there
};

Target targetOf(const json& state, const json& op) {
  Target target;
  auto path = op.find("path");
  std::string error;
  if (path == op.end() || !path->is_string() || !parsePointer(path->get_ref<const std::string&>(), target.tokens, error) ||
      target.tokens.empty())
    return target;
  target.valid = true;
  const size_t n = target.tokens.size();
  while (target.existing < n - 1 && resolvePointer(state, target.tokens, target.existing + 1) != nullptr) ++target.existing;
  if (target.existing == n - 1) {
    target.parent = resolvePointer(state, target.tokens, n - 1);
    if (target.parent->is_object()) target.present = target.parent->contains(target.tokens.back());
  }
  return target;
}

const std::string* opName(const json& op) {
  auto name = op.find("op");
  return name != op.end() && name->is_string() ? &name->get_ref<const std::string&>() : nullptr;
}

// Does `path` lie inside one of the containers set again already?
bool under(const std::vector<std::string>& restored, const std::string& path) {
  for (const std::string& prefix : restored) {
    if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 && path[prefix.size()] == '/') return true;
  }
  return false;
}

// An op whose container another writer removed: that container as the agent
// holds it, under the deepest object the thread still has (null: the op as
// it is, which then fails over to the plan's next try).
json restoreContainer(const json& state, const Target& target, const json& agent, std::vector<std::string>& restored) {
  const json* holder = resolvePointer(state, target.tokens, target.existing);
  const json* value = resolvePointer(agent, target.tokens, target.existing + 1);
  if (holder == nullptr || !holder->is_object() || value == nullptr) return json();
  std::string path = formatPointer(target.tokens, target.existing + 1);
  restored.push_back(path);
  return json{{"op", "add"}, {"path", std::move(path)}, {"value", *value}};
}

// One op of the agent's change, as it fits `state` (null: nothing to do).
json fitOp(const json& state, const json& op, const json& agent, std::vector<std::string>& restored) {
  const std::string* name = op.is_object() ? opName(op) : nullptr;
  if (name == nullptr || (*name != "add" && *name != "replace" && *name != "remove")) return op;
  const Target target = targetOf(state, op);
  if (!target.valid) return op;
  if (under(restored, op["path"].get_ref<const std::string&>())) return json();  // in a container set again
  if (target.parent == nullptr) {
    if (*name == "remove") return json();  // gone with its container
    json restore = restoreContainer(state, target, agent, restored);
    return restore.is_null() ? op : restore;
  }
  if (!target.parent->is_object() || target.present || *name == "add") return op;
  if (*name == "remove") return json();  // already gone
  json add = op;  // another writer removed the member meanwhile: the agent's change sets it again
  add["op"] = "add";
  return add;
}

}  // namespace

json fitRebase(const json& state, const json& ops, const json* carried, const json& agent) {
  json out = json::array();
  std::vector<std::string> restored;
  if (ops.is_array()) {
    for (const json& op : ops) {
      json fitted = fitOp(state, op, agent, restored);
      if (!fitted.is_null()) out.push_back(std::move(fitted));
    }
  }
  if (carried == nullptr || !carried->is_array()) return out;
  for (const json& op : *carried) {
    const std::string* name = op.is_object() ? opName(op) : nullptr;
    if (name == nullptr || (*name != "add" && *name != "replace") || !op.contains("value")) continue;
    const Target target = targetOf(state, op);
    if (target.parent == nullptr || !target.parent->is_object() || target.present) continue;
    out.push_back(json{{"op", "add"}, {"path", op["path"]}, {"value", op["value"]}});
  }
  return out;
}

}  // namespace agui_sync
