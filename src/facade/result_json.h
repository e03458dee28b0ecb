#pragma once
// Serializes outcomes and engine status to the JSON protocol documented in
// facade.h. Event JSON is embedded verbatim (it was validated by the parser), so
// the cost is O(event bytes), never O(state).
#include <string>
#include <string_view>
#include <vector>

#include <agui_sync/outcome.h>

namespace agui_sync {

class SyncEngine;

void appendOutcomeJson(std::string& out, const Outcome& o);
// {"outcomes":[...],"status":...,"lastSeq":...,"lastEventId":...,"pending":n,"resync":...}
std::string resultJson(const SyncEngine& engine, const std::vector<Outcome>& outcomes);

// ,"activities":[...] when an outcome named an activity (sync_facade.h).
void appendActivities(std::string& out, const SyncEngine& engine, const std::vector<Outcome>& outcomes);
// The same, appended to `out` (lets a caller reuse one buffer's capacity).
void appendResultJson(std::string& out, const SyncEngine& engine, const std::vector<Outcome>& outcomes);

}  // namespace agui_sync
