#include <agui_sync/outcome.h>
#include <agui_sync/sync_status.h>

namespace agui_sync {

const char* outcomeKindName(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::Applied: return "applied";
    case OutcomeKind::Resync: return "resync";
    case OutcomeKind::Event: return "event";
    case OutcomeKind::Ignored: return "ignored";
    case OutcomeKind::Error: return "error";
    case OutcomeKind::Conflict: return "conflict";
    case OutcomeKind::EditAcked: return "edit-acked";
    case OutcomeKind::EditRejected: return "edit-rejected";
  }
  return "error";
}

const char* resolutionName(Resolution r) { return r == Resolution::UserWins ? "user-wins" : "agent-wins"; }

const char* statusName(SyncStatus s) {
  switch (s) {
    case SyncStatus::Synced: return "synced";
    case SyncStatus::Unverified: return "unverified";
    case SyncStatus::Resyncing: return "resyncing";
  }
  return "unverified";
}

}  // namespace agui_sync
