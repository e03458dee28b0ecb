#pragma once
// metadata.acks on the wire (docs/wire.md section 9):
//   [{"editId":s, "status":"applied"|"rejected", "reason"?:s, "seq"?:n}, ...]
// `reason` is present exactly when rejected (an edit reason, codes.h kEdit);
// `seq` is present when the verdict is older than the event carrying it (a
// snapshot's or a re-sent edit's). The reader is lenient: an entry it cannot
// read is skipped, since acks must never make a valid state event fail.
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/edits.h>

namespace agui_sync {

// At most this many entries are read from one event.
constexpr size_t kMaxAcksPerEvent = 4096;

void readAcks(const nlohmann::json& acks, std::vector<EditAck>& out);
nlohmann::json ackJson(const EditAck& ack, bool withSeq);

}  // namespace agui_sync
