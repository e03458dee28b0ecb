#include "run/event_lanes.h"

#include <map>

namespace agui_sync::run {

namespace {

enum class Role { Open, Continue, Close };
struct Lane {
  const char* lane;
  const char* field;
  Role role;
};

const std::map<std::string, Lane>& lanes() {
  static const std::map<std::string, Lane> table = {
      {"TEXT_MESSAGE_START", {"text", "messageId", Role::Open}},
      {"TEXT_MESSAGE_CONTENT", {"text", "messageId", Role::Continue}},
      {"TEXT_MESSAGE_END", {"text", "messageId", Role::Close}},
      {"TOOL_CALL_START", {"tool", "toolCallId", Role::Open}},
      {"TOOL_CALL_ARGS", {"tool", "toolCallId", Role::Continue}},
      {"TOOL_CALL_END", {"tool", "toolCallId", Role::Close}},
      {"REASONING_START", {"reasoning", "messageId", Role::Open}},
      {"REASONING_END", {"reasoning", "messageId", Role::Close}},
      {"REASONING_MESSAGE_START", {"reasoning-message", "messageId", Role::Open}},
      {"REASONING_MESSAGE_CONTENT", {"reasoning-message", "messageId", Role::Continue}},
      {"REASONING_MESSAGE_END", {"reasoning-message", "messageId", Role::Close}},
      {"STEP_STARTED", {"step", "stepName", Role::Open}},
      {"STEP_FINISHED", {"step", "stepName", Role::Close}},
      {"SUBAGENT_STARTED", {"subagent", "subagentRunId", Role::Open}},
      {"SUBAGENT_FINISHED", {"subagent", "subagentRunId", Role::Close}},
      {"SUBAGENT_ERROR", {"subagent", "subagentRunId", Role::Close}},
  };
  return table;
}

std::string text(const nlohmann::json& event, const char* field) {
  auto it = event.find(field);
  if (it == event.end()) return "\x01";  // absent: a key of its own, as JS's `undefined`
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

bool OpenLanes::see(const nlohmann::json& event) {
  if (!event.is_object()) return true;
  auto type = event.find("type");
  if (type == event.end() || !type->is_string()) return true;
  auto found = lanes().find(type->get<std::string>());
  if (found == lanes().end()) return true;
  const Lane& lane = found->second;
  // A step is named per owner: the same name may be open in the parent and in a subagent.
  std::string owner = std::string(lane.lane) == "step" ? std::string(1, '\0') + text(event, "subagentRunId") : "";
  std::string key = std::string(lane.lane) + " " + text(event, lane.field) + owner;
  if (lane.role == Role::Open) {
    open_.insert(key);
    return true;
  }
  if (open_.count(key) == 0) return false;
  if (lane.role == Role::Close) open_.erase(key);
  return true;
}

}  // namespace agui_sync::run
