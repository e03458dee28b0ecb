// Embind surface of agui-state-sync, built into two WebAssembly modules
// (cmake/wasm.cmake) so that browsers never download the sender:
//   agui_sync     (AGUI_BIND_SYNC)    the receiver SyncFacade (src/facade/sync_facade.h), browser + Node
//   agui_emitter  (AGUI_BIND_EMITTER) the sender EmitterFacade (src/facade/emitter_facade.h), the
//                 upstream CursorFacade (src/facade/cursor_facade.h), a store-bound emitter's
//                 StoreLineFacade (src/facade/store_line_facade.h) and a thread's activities'
//                 ActivityFacade (src/facade/activity_facade.h) and the proxy's
//                 SegmentTaxFacade (src/facade/segment_tax_facade.h) and upstream receiver
//                 RelayFacade (src/facade/relay_facade.h), servers
// Both export canonicalize/verify (SyncFacade's static helpers), so
// canonicalJson, stateDigest and verifyApproval work with whichever module is
// loaded. The prompt renderer (renderPromptInput, src/facade/prompt_facade.h)
// is the sender's only: no browser renders prompts, and the browser engine's
// download is the budget (tests/js/package.test.mjs).
//
// Every method returns a string, a number, a bool or nothing; a failure is a
// JSON string {"ok":false,"code","message"} (src/facade/facade_json.h); the core is
// exception-free and built with -fno-exceptions, so nothing can throw across
// this boundary (a bug that would throw aborts instead, which the JS wrapper
// turns into an Error and a dead instance).
#include <emscripten/bind.h>

#include <malloc.h>

#include <cstdint>
#include <string>

#include "facade/access_facade.h"
#include "emit/activity_record.h"
#include "facade/activity_facade.h"
#include "facade/approval_consume.h"
#include "facade/approval_facade.h"
#include "facade/commit_loop_facade.h"
#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"
#include "facade/prompt_facade.h"
#include "facade/relay_facade.h"
#include "facade/run_facade.h"
#include "facade/segment_tax_facade.h"
#include "facade/store_line_facade.h"
#include "facade/sync_facade.h"

using agui_sync::ActivityFacade;
using agui_sync::CursorFacade;
using agui_sync::EmitterFacade;
using agui_sync::RelayFacade;
using agui_sync::RunFacade;
using agui_sync::StoreLineFacade;
using agui_sync::SyncFacade;

namespace {

// initResult() returns a reference; embind needs a value.
template <typename T>
std::string initResult(const T& f) {
  return f.initResult();
}

// Internal (tests only): bytes currently allocated by malloc, to prove that
// create/feed/dispose leaves the heap flat.
size_t heapBytesInUse() { return mallinfo().uordblks; }

}  // namespace

#ifdef AGUI_BIND_SYNC
namespace {
// The scratch buffer's address, for the wrapper's HEAPU8.set / encodeInto.
uintptr_t inputBuffer(SyncFacade& f, size_t n) { return reinterpret_cast<uintptr_t>(f.inputBuffer(n)); }
// The Result's address ([uint32 length][UTF-8 JSON], see SyncFacade::feedInput).
uintptr_t feedInput(SyncFacade& f, size_t n) { return reinterpret_cast<uintptr_t>(f.feedInput(n)); }
}  // namespace

EMSCRIPTEN_BINDINGS(agui_state_sync) {
  emscripten::class_<SyncFacade>("SyncFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<SyncFacade>)
      .function("inputBuffer", &inputBuffer)
      .function("feedInput", &feedInput)
      .function("end", &SyncFacade::end)
      .function("reset", &SyncFacade::reset)
      .function("stateJson", &SyncFacade::stateJson)
      .function("activityJson", &SyncFacade::activityJson)
      .function("visibleStateJson", &SyncFacade::visibleStateJson)
      .function("edit", &SyncFacade::edit)
      .function("pendingEditsJson", &SyncFacade::pendingEditsJson)
      .function("clientId", &SyncFacade::clientId)
      .function("checkpointMetaJson", &SyncFacade::checkpointMetaJson)
      .function("restore", &SyncFacade::restore)
      .function("metricsJson", &SyncFacade::metricsJson)
      .function("statusJson", &SyncFacade::statusJson)
      .function("noteActivity", &SyncFacade::noteActivity)
      .function("guardView", &SyncFacade::guardView)
      .function("guardApprove", &SyncFacade::guardApprove)
      .function("guardBlocker", &SyncFacade::guardBlocker)
      .function("guardViewActivity", &SyncFacade::guardViewActivity)
      .function("guardActivityBlocker", &SyncFacade::guardActivityBlocker);
}
#endif

#ifdef AGUI_BIND_EMITTER
namespace {
// The prompt renderer's buffers, for the wrapper's encodeInto and TextDecoder (prompt_facade.h).
uintptr_t promptInputBuffer(size_t n) { return reinterpret_cast<uintptr_t>(agui_sync::promptInputBuffer(n)); }
uintptr_t renderPromptInput(size_t n, const std::string& optionsJson) {
  return reinterpret_cast<uintptr_t>(agui_sync::renderPromptInput(n, optionsJson));
}
// The relay's scratch buffer, for the wrapper's HEAPU8.set.
uintptr_t relayInputBuffer(RelayFacade& f, size_t n) { return reinterpret_cast<uintptr_t>(f.inputBuffer(n)); }
}  // namespace

EMSCRIPTEN_BINDINGS(agui_state_emitter) {
  emscripten::class_<EmitterFacade>("EmitterFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<EmitterFacade>)
      .function("update", &EmitterFacade::update)
      .function("patch", &EmitterFacade::patch)
      .function("updateRebased", &EmitterFacade::updateRebased)
      .function("applyEdits", &EmitterFacade::applyEdits)
      .function("provenanceJson", &EmitterFacade::provenanceJson)
      .function("adoptHistory", &EmitterFacade::adoptHistory)
      .function("snapshot", &EmitterFacade::snapshot)
      .function("replay", &EmitterFacade::replay)
      .function("catchUp", &EmitterFacade::catchUp)
      .function("renderPrompt", &EmitterFacade::renderPrompt)
      .function("heartbeat", &EmitterFacade::heartbeat)
      .function("stateJson", &EmitterFacade::stateJson)
      .function("seq", &EmitterFacade::seq)
      .function("epoch", &EmitterFacade::epoch)
      .function("statsJson", &EmitterFacade::statsJson);
  // One upstream run's decisions (src/facade/cursor_facade.h): sequenceState() and the proxy.
  emscripten::class_<CursorFacade>("CursorFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<CursorFacade>)
      .function("begin", &CursorFacade::begin)
      .function("beginApart", &CursorFacade::beginApart)
      .function("writesInput", &CursorFacade::writesInput)
      .function("startRun", &CursorFacade::startRun)
      .function("plan", &CursorFacade::plan)
      .function("settle", &CursorFacade::settle)
      .function("planWrite", &CursorFacade::planWrite)
      .function("writeReceived", &CursorFacade::writeReceived)
      .function("planReceived", &CursorFacade::planReceived)
      .function("tryReceived", &CursorFacade::tryReceived)
      .function("settleReceived", &CursorFacade::settleReceived)
      .function("tryPlanned", &CursorFacade::tryPlanned)
      .function("settlePlanned", &CursorFacade::settlePlanned)
      .function("onLine", &CursorFacade::onLine)
      .function("suspend", &CursorFacade::suspend)
      .function("addStart", &CursorFacade::addStart)
      .function("agentView", &CursorFacade::agentView)
      .function("suspended", &CursorFacade::suspended);
  // A store-bound emitter's write loop (src/facade/commit_loop_facade.h).
  emscripten::class_<agui_sync::CommitLoopFacade>("CommitLoopFacade")
      .constructor<>()
      .function("step", &agui_sync::CommitLoopFacade::step);
  // One run's life: its log, clients, grace and abort (src/facade/run_facade.h).
  emscripten::class_<RunFacade>("RunFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<RunFacade>)
      .function("feed", &RunFacade::feed)
      .function("event", &RunFacade::event)
      .function("step", &RunFacade::step)
      .function("infoJson", &RunFacade::infoJson);
  emscripten::function("requesterJson", &agui_sync::requesterJson);
  emscripten::function("activityRecordKey", &agui_sync::activityRecordKey);
  emscripten::function("sideLineKey", &agui_sync::sideLineKey);
  // The proxy's upstream receiver beside its cursors (src/facade/relay_facade.h).
  emscripten::class_<RelayFacade>("RelayFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<RelayFacade>)
      .function("inputBuffer", &relayInputBuffer)
      .function("pushInput", &RelayFacade::pushInput)
      .function("next", &RelayFacade::next)
      .function("end", &RelayFacade::end)
      .function("activityJson", &RelayFacade::activityJson);
  // The proxy's judgement of a resume's approvals (src/facade/approval_facade.h).
  // The prompt renderer (renderStateForPrompt, promptMessage, the proxy's prompt context).
  emscripten::function("promptInputBuffer", &promptInputBuffer);
  emscripten::function("renderPromptInput", &renderPromptInput);
  emscripten::function("judgeApprovals", &agui_sync::judgeApprovalsJson);
  // Who may read, change or consume a thread (src/facade/access_facade.h).
  emscripten::function("judgeAccess", &agui_sync::judgeAccessJson);
  // consumeApproval's steps and effectKey (src/facade/approval_consume.h): agui-state-sync/server.
  emscripten::function("consumeApprovalStep", &agui_sync::consumeApprovalStepJson);
  emscripten::function("effectKey", &agui_sync::effectKeyJson);
  // A store-bound emitter's line (src/facade/store_line_facade.h): the store's I/O stays in JS.
  emscripten::class_<StoreLineFacade>("StoreLineFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<StoreLineFacade>)
      .function("open", &StoreLineFacade::open)
      .function("headStateJson", &StoreLineFacade::headStateJson)
      .function("needsState", &StoreLineFacade::needsState)
      .function("committed", &StoreLineFacade::committed)
      .function("restart", &StoreLineFacade::restart)
      .function("seed", &StoreLineFacade::seed)
      .function("advance", &StoreLineFacade::advance)
      .function("committedStateJson", &StoreLineFacade::committedStateJson)
      .function("maxEvents", &StoreLineFacade::maxEvents)
      .function("maxBytes", &StoreLineFacade::maxBytes);
  // A thread's activities (src/facade/activity_facade.h): the emitter, the stream's cursor and catch-ups.
  emscripten::class_<ActivityFacade>("ActivityFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<ActivityFacade>)
      .function("write", &ActivityFacade::write)
      .function("writeContent", &ActivityFacade::writeContent)
      .function("snapshot", &ActivityFacade::snapshot)
      .function("patch", &ActivityFacade::patch)
      .function("catchUp", &ActivityFacade::catchUp)
      .function("takeRecordOps", &ActivityFacade::takeRecordOps)
      .function("seedText", &ActivityFacade::seedText)
      .function("settleRecord", &ActivityFacade::settleRecord)
      .function("recordStale", &ActivityFacade::recordStale)
      .function("adoptRecord", &ActivityFacade::adoptRecord)
      .function("contentJson", &ActivityFacade::contentJson)
      .function("seq", &ActivityFacade::seq)
      .function("epoch", &ActivityFacade::epoch)
      .function("size", &ActivityFacade::size);
  // The snapshot tax per connection type (src/facade/segment_tax_facade.h): the proxy's flakySegments.
  emscripten::class_<agui_sync::SegmentTaxFacade>("SegmentTaxFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<agui_sync::SegmentTaxFacade>)
      .function("sent", &agui_sync::SegmentTaxFacade::sent)
      .function("cameBack", &agui_sync::SegmentTaxFacade::cameBack)
      .function("snapshots", &agui_sync::SegmentTaxFacade::snapshots)
      .function("switches", &agui_sync::SegmentTaxFacade::switches);
  // One run's stream of a thread's activities: which ones its client holds a position for.
  emscripten::class_<agui_sync::ActivityStreamFacade>("ActivityStreamFacade")
      .constructor<const std::string&>()
      .function("initResult", &initResult<agui_sync::ActivityStreamFacade>)
      .function("write", &agui_sync::ActivityStreamFacade::write)
      .function("writeContent", &agui_sync::ActivityStreamFacade::writeContent)
      .function("catchUp", &agui_sync::ActivityStreamFacade::catchUp);
}
#endif

EMSCRIPTEN_BINDINGS(agui_state_common) {
  emscripten::function("canonicalize", &SyncFacade::canonicalize);
  emscripten::function("verify", &SyncFacade::verify);
  emscripten::function("heapBytesInUse", &heapBytesInUse);
}
