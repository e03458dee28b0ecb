#pragma once
// JSON shapes of user edits at the facades (edits.h, docs/wire.md section 9):
//   policy   {"ownership":{"/pointer":"agent"|"user"|"shared",...},
//             "onConflict":"agent-wins"|"user-wins"}  (both optional)
//   edits    [{"editId":s,"baseSeq":n|null,"ops":[...]}, ...]
//   pending  [{"editId","baseSeq","ops","applies"}, ...]
//   results  [{"editId","status":"applied"|"rejected","reason"?,"seq"?}, ...]
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>
#include <agui_sync/checkpoint.h>
#include <agui_sync/edits.h>
#include <agui_sync/options.h>

namespace agui_sync {

// Reads `ownership` and `onConflict` from an options object; absent keys keep
// the defaults. A bad value: an invalid-options failure naming it.
std::optional<Failure> readEditPolicy(const nlohmann::json& options, EditPolicy& policy);
// Reads an edits array; a malformed entry: an invalid-request failure naming its index.
std::optional<Failure> readEditRequests(nlohmann::json edits, std::vector<EditRequest>& out);

// A stored checkpoint (SyncFacade::restore) -> Checkpoint; a wrong shape or a
// state over the limits: invalid-checkpoint / limit-exceeded.
std::optional<Failure> readCheckpoint(nlohmann::json stored, const Options& limits, Checkpoint& out);

nlohmann::json pendingEditsJson(const std::vector<PendingEdit>& edits);
nlohmann::json editResultsJson(const std::vector<EditAck>& results);

}  // namespace agui_sync
