#pragma once
// The code (codes.h) that reports a JSON Patch failure: json/ knows nothing of
// AG-UI's codes, so the translation lives here, shared by both sides.
#include <agui_sync/codes.h>

#include "json/json_patch.h"

namespace agui_sync {

inline Code patchCode(PatchStatus status) {
  switch (status) {
    case PatchStatus::Malformed: return Code::InvalidPatch;
    case PatchStatus::PreconditionFailed: return Code::PreconditionFailed;
    case PatchStatus::LimitExceeded: return Code::LimitExceeded;
    case PatchStatus::Ok:
    case PatchStatus::Failed: break;
  }
  return Code::PatchFailed;
}

// A patch refused as not applicable to the state it met (another writer moved
// it): a writer of a plan of tries moves on to its next one (the cursor's,
// a rebased update's whole state); any other refusal stands.
inline bool patchNotApplicable(Code code) {
  return code == Code::PatchFailed || code == Code::PreconditionFailed || code == Code::InvalidPatch;
}

}  // namespace agui_sync
