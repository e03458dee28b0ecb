#pragma once
// AG-UI events that open, continue or close a lane (a text message, a tool
// call, a reasoning span, a step, a subagent), as js/src/shared/event-lanes.js
// names them. A stream that starts in the middle of a run (an attach after the
// run's oldest events were dropped) leaves out what continues or closes a lane
// it never saw open: @ag-ui/client refuses TEXT_MESSAGE_CONTENT without its start.
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace agui_sync::run {

class OpenLanes {
 public:
  // Notes `event`; false when it continues or closes a lane that is not open.
  bool see(const nlohmann::json& event);

 private:
  std::set<std::string> open_;
};

}  // namespace agui_sync::run
