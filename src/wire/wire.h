#pragma once
// Constants of the agui-state-sync wire extension (docs/wire.md) that both the
// receiving side (receive/) and the sending side (emit/) must agree on.
#include <cstdint>

namespace agui_sync {

// The largest integer a JS number represents exactly; seqs beyond it are malformed.
constexpr uint64_t kMaxSeq = (uint64_t{1} << 53) - 1;

// The heartbeat is an SSE comment ": hb <seq>" (docs/wire.md section 4); this
// is its text after the colon and the one space the framer removes.
constexpr const char kHeartbeatPrefix[] = "hb ";
constexpr uint64_t kHeartbeatPrefixLength = sizeof(kHeartbeatPrefix) - 1;

// Version 2 of the wire (docs/wire.md section 10): our fields (seq, baseSeq,
// epoch, digest, acks) ride under this one key of an event's `metadata`, named
// for the package as @ag-ui/client names its own ("@ag-ui/client"), so they
// cannot collide with another middleware's `metadata.seq`.
constexpr const char kWireKey[] = "agui-state-sync";

}  // namespace agui_sync
