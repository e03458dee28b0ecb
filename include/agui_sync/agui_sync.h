#pragma once
// The whole public C++ API of agui-state-sync in one include.
//   sync_engine.h     SyncEngine: SSE bytes in, outcomes and verified state out
//   approval_guard.h  ApprovalGuard, verifyApproval: approvals bound to what was seen
//   state_emitter.h   StateEmitter: the sending side (sequenced events, replay)
//   canonical_json.h  RFC 8785 canonical JSON and the state digest
//   codes.h           every code the library reports; Failure
//   prompt_render.h   renderStateForPrompt: shared state as a prompt-safe data block
//   options.h, outcome.h, metrics.h, sync_status.h: the types the above use
#include "approval_guard.h"
#include "canonical_json.h"
#include "checkpoint.h"
#include "codes.h"
#include "edits.h"
#include "metrics.h"
#include "options.h"
#include "outcome.h"
#include "prompt_render.h"
#include "state_emitter.h"
#include "sync_engine.h"
#include "sync_status.h"
