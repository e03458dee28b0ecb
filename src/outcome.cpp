#include "outcome.h"

namespace agui_sync {

const char* outcomeKindName(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::Applied: return "applied";
    case OutcomeKind::Resync: return "resync";
    case OutcomeKind::Event: return "event";
    case OutcomeKind::Ignored: return "ignored";
    case OutcomeKind::Error: return "error";
  }
  return "error";
}

}  // namespace agui_sync
