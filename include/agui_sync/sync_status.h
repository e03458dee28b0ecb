#pragma once
// The engine's status and its resync request (see sync_engine.h).
#include <cstdint>
#include <optional>
#include <string>

#include "codes.h"

namespace agui_sync {

enum class SyncStatus { Synced, Unverified, Resyncing };
const char* statusName(SyncStatus s);

// What the app should tell the server when it reconnects (docs/wire.md section 3).
struct ResyncRequest {
  Code reason = Code::Gap;
  std::optional<uint64_t> lastSeq;
  std::optional<std::string> lastEventId;
};

}  // namespace agui_sync
