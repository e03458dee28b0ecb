#pragma once
// What a client keeps across a reload (SyncEngine::checkpoint / restore): the
// confirmed state and where it stands, and the user's pending edits. Storing
// it, and checking that what comes back is what was stored (a digest), is the
// caller's part (the JS layer: js/src/persist.js).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edits.h"

namespace agui_sync {

struct Checkpoint {
  nlohmann::json state;  // the confirmed state (never the visible one)
  std::optional<uint64_t> lastSeq;
  std::optional<std::string> epoch;
  std::optional<std::string> lastEventId;
  std::string clientId;     // the tab's identity: restored edits keep their ids
  uint64_t editCounter = 0;  // the number of the last editId handed out
  std::vector<PendingEdit> edits;  // oldest first
};

}  // namespace agui_sync
