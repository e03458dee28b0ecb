// nanobind surface of agui-state-sync: agui_state_sync._core, the Python twin
// of bindings/wasm/embind.cpp over the same string-in/string-out facades
// (src/facade/). The package's Python layer (python/agui_state_sync/) is the
// only caller; it turns results into objects and failures into exceptions.
//
// What crosses: JSON as bytes in (the layer's to_json output, or SSE chunks
// as they came off the socket), JSON text as str out. A failure is data, the
// facades' {"ok":false,"code","message"} shape, or for to_json a
// (None, kind, message) tuple; no C++ exception is thrown by this file or the
// core. The GIL is held during every call: a facade is not thread-safe, and
// the GIL is what serialises two Python threads sharing one.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <agui_sync/codes.h>

#include "facade/access_facade.h"
#include "facade/run_facade.h"
#include "facade/commit_loop_facade.h"
#include "emit/activity_record.h"
#include "facade/activity_facade.h"
#include "facade/approval_consume.h"
#include "facade/approval_facade.h"
#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"
#include "receive/sse_framer.h"
#include "facade/prompt_facade.h"
#include "facade/segment_tax_facade.h"
#include "facade/store_line_facade.h"
#include "facade/sync_facade.h"
#include "json/json_diff_impl.h"
#include "py_diff_node.h"
#include "py_json.h"
#include "wire/wire.h"

namespace nb = nanobind;
using agui_sync::EmitterFacade;
using agui_sync::SyncFacade;

namespace {

std::string text(const nb::bytes& b) { return std::string(b.c_str(), b.size()); }

// A chunk of SSE goes through the facade's own scratch buffer (one memcpy),
// as the WASM binding does; the Result is read where the facade left it.
nb::str feed(SyncFacade& f, const nb::bytes& chunk) {
  std::memcpy(f.inputBuffer(chunk.size()), chunk.c_str(), chunk.size());
  const uint8_t* result = f.feedInput(chunk.size());
  uint32_t n;
  std::memcpy(&n, result, sizeof n);  // little-endian on every target we build
  return nb::str(reinterpret_cast<const char*>(result + 4), n);
}

// (text, "", "") or (None, "type" | "value" | "depth", message).
nb::tuple toJson(nb::handle value, size_t maxDepth, bool wellFormed) {
  agui_py::JsonText r = agui_py::toJson(value.ptr(), maxDepth, wellFormed);
  static const char* kinds[] = {"", "type", "value", "depth", "size"};
  if (r.refusal == agui_py::JsonRefusal::None)
    return nb::make_tuple(nb::bytes(r.text.data(), r.text.size()), "", "");
  return nb::make_tuple(nb::none(), kinds[static_cast<int>(r.refusal)], r.message);
}

// An agent's STATE_SNAPSHOT as the Python value it came as: written in step by
// the core's differ run over the value itself (py_diff_node.h), plan_write's
// answer; None when the cursor is not in step or the value needs the JSON
// route (which then says what is wrong with it). Nothing changed in that case.
nb::object writeSnapshot(agui_sync::CursorFacade& cursor, nb::handle snapshot, EmitterFacade& emitter, size_t maxDepth) {
  agui_py::DiffContext ctx{maxDepth};
  const agui_py::PyNode to{snapshot.ptr(), &ctx};
  auto diff = [&](const nlohmann::json& state, const agui_sync::DiffOptions& options, nlohmann::json::array_t& ops) {
    return agui_sync::appendDiffOf(state, to, options, ops) && !ctx.failed;
  };
  std::optional<std::string> answer = cursor.writeSnapshotInStep(emitter, diff);
  if (!answer) return nb::none();
  return nb::str(answer->data(), answer->size());
}

// The code table (include/agui_sync/codes.h) as [(name, categories, cure)]:
// the Python layer builds its code lists from it instead of keeping a copy.
nb::list codeTable() {
  static const char* cures[] = {"none", "replay", "snapshot", "either"};
  size_t count = 0;
  const agui_sync::CodeInfo* rows = agui_sync::codeTable(&count);
  nb::list out;
  for (size_t i = 0; i < count; ++i)
    out.append(nb::make_tuple(rows[i].name, int(rows[i].categories), cures[static_cast<int>(rows[i].cure)]));
  return out;
}

void bindSync(nb::module_& m) {
  nb::class_<SyncFacade>(m, "SyncFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const SyncFacade& f) { return f.initResult(); })
      .def("feed", &feed, nb::arg("chunk"))
      .def("end", &SyncFacade::end)
      .def("reset", &SyncFacade::reset)
      .def("state_json", &SyncFacade::stateJson)
      .def("activity_json", &SyncFacade::activityJson, nb::arg("message_id"))
      .def("visible_state_json", &SyncFacade::visibleStateJson)
      .def("edit", [](SyncFacade& f, const nb::bytes& ops) { return f.edit(text(ops)); }, nb::arg("ops_json"))
      .def("pending_edits_json", &SyncFacade::pendingEditsJson)
      .def("client_id", &SyncFacade::clientId)
      .def("checkpoint_meta_json", &SyncFacade::checkpointMetaJson)
      .def("restore", [](SyncFacade& f, const nb::bytes& c) { return f.restore(text(c)); }, nb::arg("checkpoint_json"))
      .def("metrics_json", &SyncFacade::metricsJson)
      .def("status_json", &SyncFacade::statusJson)
      .def("note_activity", &SyncFacade::noteActivity, nb::arg("now_ms"))
      .def("guard_view", &SyncFacade::guardView, nb::arg("path"))
      .def("guard_approve", &SyncFacade::guardApprove, nb::arg("token_json"), nb::arg("now_ms"))
      .def("guard_blocker", &SyncFacade::guardBlocker, nb::arg("now_ms"))
      .def("guard_view_activity", &SyncFacade::guardViewActivity, nb::arg("message_id"), nb::arg("path"))
      .def("guard_activity_blocker", &SyncFacade::guardActivityBlocker, nb::arg("message_id"), nb::arg("now_ms"));
}

// The core's SSE framer, for reading an upstream AG-UI stream (sequence_state,
// the ASGI middleware): feed(bytes) -> [(kind, type, data, lastEventId, oversized)],
// kind "event" | "comment" | "retry" | "invalid-retry".
nb::list frame(agui_sync::SseFramer& f, const nb::bytes& chunk) {
  static const char* kinds[] = {"event", "comment", "retry", "invalid-retry"};
  std::vector<agui_sync::SseItem> items;
  f.feed(reinterpret_cast<const uint8_t*>(chunk.c_str()), chunk.size(), items);
  nb::list out;
  for (const auto& it : items)
    out.append(nb::make_tuple(kinds[static_cast<int>(it.kind)], it.type, it.data, it.lastEventId, it.oversized));
  return out;
}

void bindFramer(nb::module_& m) {
  nb::class_<agui_sync::SseFramer>(m, "SseFramer")
      .def(nb::init<size_t>(), nb::arg("max_event_bytes") = size_t(1) << 20)
      .def("feed", &frame, nb::arg("chunk"))
      .def("end", &agui_sync::SseFramer::endOfStream)
      .def("reset", &agui_sync::SseFramer::reset);
}

// The run's decisions for an upstream agent's state events (src/facade/cursor_facade.h);
// the Python layer carries out the plan against its emitter (run_stamper.py).
void bindCursor(nb::module_& m) {
  using agui_sync::CursorFacade;
  nb::class_<CursorFacade>(m, "CursorFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const CursorFacade& f) { return f.initResult(); })
      .def("begin", [](CursorFacade& f, const nb::bytes& view, bool fromInput, double seq) {
             return f.begin(text(view), fromInput, seq);
           }, nb::arg("view_json"), nb::arg("from_input"), nb::arg("emitter_seq"))
      .def("writes_input", &CursorFacade::writesInput)
      .def("start_run", [](CursorFacade& f, const nb::bytes& input, const nb::bytes& thread, double seq) {
        return f.startRun(text(input), text(thread), seq);
      }, nb::arg("input_json"), nb::arg("thread_json"), nb::arg("emitter_seq"))
      .def("plan", [](CursorFacade& f, const nb::bytes& event, double seq) { return f.plan(text(event), seq); },
           nb::arg("event_json"), nb::arg("emitter_seq"))
      .def("settle", &CursorFacade::settle, nb::arg("landed"), nb::arg("emitter_seq"))
      .def("plan_write", [](CursorFacade& f, const nb::bytes& event, EmitterFacade& emitter) {
             return f.planWrite(text(event), emitter);
           }, nb::arg("event_json"), nb::arg("emitter"))
      .def("write_snapshot", &writeSnapshot, nb::arg("snapshot").none(), nb::arg("emitter"), nb::arg("max_depth"))
      .def("try_planned", &CursorFacade::tryPlanned, nb::arg("index"), nb::arg("emitter"))
      .def("settle_planned", &CursorFacade::settlePlanned, nb::arg("landed"), nb::arg("emitter_seq"))
      .def("on_line", &CursorFacade::onLine, nb::arg("epoch"), nb::arg("emitter_seq"))
      .def("suspend", &CursorFacade::suspend)
      .def("add_start", &CursorFacade::addStart)
      .def("agent_view", &CursorFacade::agentView)
      .def("suspended", &CursorFacade::suspended);
}

// The durable line's rules for the store-bound emitter (agui_state_sync.durable).
void bindStoreLine(nb::module_& m) {
  using agui_sync::StoreLineFacade;
  nb::class_<StoreLineFacade>(m, "StoreLineFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const StoreLineFacade& f) { return f.initResult(); })
      .def("open", [](StoreLineFacade& f, const nb::bytes& line) { return f.open(text(line)); }, nb::arg("line_json"))
      .def("head_state_json", &StoreLineFacade::headStateJson)
      .def("needs_state", &StoreLineFacade::needsState, nb::arg("events"), nb::arg("bytes"), nb::arg("snapshot"))
      .def("committed", &StoreLineFacade::committed, nb::arg("with_state"), nb::arg("events"), nb::arg("bytes"))
      .def("restart", &StoreLineFacade::restart)
      .def("seed", [](StoreLineFacade& f, const nb::bytes& s) { return f.seed(text(s)); }, nb::arg("state_json"))
      .def("advance", [](StoreLineFacade& f, const nb::bytes& e) { return f.advance(text(e)); }, nb::arg("events_json"))
      .def("committed_state_json", &StoreLineFacade::committedStateJson)
      .def("max_events", &StoreLineFacade::maxEvents)
      .def("max_bytes", &StoreLineFacade::maxBytes);
}

void bindEmitter(nb::module_& m) {
  nb::class_<EmitterFacade>(m, "EmitterFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const EmitterFacade& f) { return f.initResult(); })
      .def("update", [](EmitterFacade& f, const nb::bytes& s) { return f.update(text(s)); }, nb::arg("state_json"))
      .def("patch", [](EmitterFacade& f, const nb::bytes& ops) { return f.patch(text(ops)); }, nb::arg("ops_json"))
      .def("update_rebased", [](EmitterFacade& f, const nb::bytes& from, const nb::bytes& to) {
        return f.updateRebased(text(from), text(to));
      }, nb::arg("from_json"), nb::arg("to_json"))
      .def("apply_edits",
           [](EmitterFacade& f, const nb::bytes& edits, const std::string& policy, const std::string& epoch) {
             return f.applyEdits(text(edits), policy, epoch);
           },
           nb::arg("edits_json"), nb::arg("policy_json"), nb::arg("client_epoch_json"))
      .def("provenance_json", &EmitterFacade::provenanceJson)
      .def("adopt_history", [](EmitterFacade& f, const nb::bytes& e) { return f.adoptHistory(text(e)); },
           nb::arg("events_json"))
      .def("snapshot", &EmitterFacade::snapshot)
      .def("replay", &EmitterFacade::replay, nb::arg("request_json"))
      .def("catch_up", &EmitterFacade::catchUp, nb::arg("position_json"))
      .def("render_prompt", &EmitterFacade::renderPrompt, nb::arg("options_json"))
      .def("heartbeat", &EmitterFacade::heartbeat)
      .def("state_json", &EmitterFacade::stateJson)
      .def("seq", &EmitterFacade::seq)
      .def("epoch", &EmitterFacade::epoch)
      .def("stats_json", &EmitterFacade::statsJson);
}

// A thread's activities (src/facade/activity_facade.h): emitter.py's ActivityEmitter and the sequencers.
void bindActivities(nb::module_& m) {
  using agui_sync::ActivityFacade;
  nb::class_<ActivityFacade>(m, "ActivityFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const ActivityFacade& f) { return f.initResult(); })
      .def("write", [](ActivityFacade& f, const nb::bytes& e, bool verified) { return f.write(text(e), verified); },
           nb::arg("event_json"), nb::arg("verified") = false)
      .def("write_content",
           [](ActivityFacade& f, const nb::bytes& e, const nb::bytes& c) { return f.writeContent(text(e), text(c)); },
           nb::arg("event_json"), nb::arg("content_json"))
      .def("snapshot",
           [](ActivityFacade& f, const std::string& id, const std::string& type, const nb::bytes& c, bool replace) {
             return f.snapshot(id, type, text(c), replace);
           },
           nb::arg("message_id"), nb::arg("activity_type"), nb::arg("content_json"), nb::arg("replace"))
      .def("patch",
           [](ActivityFacade& f, const std::string& id, const std::string& type, const nb::bytes& ops) {
             return f.patch(id, type, text(ops));
           },
           nb::arg("message_id"), nb::arg("activity_type"), nb::arg("ops_json"))
      .def("catch_up", &ActivityFacade::catchUp, nb::arg("position_json"))
      .def("content_json", &ActivityFacade::contentJson, nb::arg("message_id"))
      .def("seq", &ActivityFacade::seq, nb::arg("message_id"))
      .def("epoch", &ActivityFacade::epoch)
      .def("size", &ActivityFacade::size)
      .def("take_record_ops", &ActivityFacade::takeRecordOps)
      .def("seed_text", &ActivityFacade::seedText)
      .def("settle_record", &ActivityFacade::settleRecord, nb::arg("refusal_code"))
      .def("record_stale", &ActivityFacade::recordStale)
      .def("adopt_record", [](ActivityFacade& f, const nb::bytes& r) { return f.adoptRecord(text(r)); },
           nb::arg("record_json"));
  m.def("activity_record_key", &agui_sync::activityRecordKey, nb::arg("thread_key"));
  using agui_sync::ActivityStreamFacade;
  nb::class_<ActivityStreamFacade>(m, "ActivityStreamFacade")  // one run's stream of a thread's activities
      .def(nb::init<>())
      .def("write",
           [](ActivityStreamFacade& s, ActivityFacade& t, const nb::bytes& e, bool verified) {
             return s.write(t, text(e), verified);
           },
           nb::arg("thread"), nb::arg("event_json"), nb::arg("verified") = false)
      .def("write_content",
           [](ActivityStreamFacade& s, ActivityFacade& t, const nb::bytes& e, const nb::bytes& c) {
             return s.writeContent(t, text(e), text(c));
           },
           nb::arg("thread"), nb::arg("event_json"), nb::arg("content_json"))
      .def("catch_up", &ActivityStreamFacade::catchUp, nb::arg("thread"), nb::arg("position_json"));
}

// The snapshot tax per connection type (src/facade/segment_tax_facade.h): the middleware's flaky_segments.
// One run's life (src/facade/run_facade.h): the middleware's run holder drives it.
void bindRun(nb::module_& m) {
  nb::class_<agui_sync::RunFacade>(m, "RunFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const agui_sync::RunFacade& f) { return f.initResult(); })
      .def("feed", [](agui_sync::RunFacade& f, const nb::bytes& b) { return f.feed(text(b)); }, nb::arg("sse"))
      .def("step", [](agui_sync::RunFacade& f, const nb::bytes& s) { return f.step(text(s)); }, nb::arg("input_json"))
      .def("info_json", &agui_sync::RunFacade::infoJson);
  m.def("requester_json", &agui_sync::requesterJson, nb::arg("credentials_json"));
  // A store-bound emitter's write loop (src/facade/commit_loop_facade.h).
  nb::class_<agui_sync::CommitLoopFacade>(m, "CommitLoopFacade")
      .def(nb::init<>())
      .def("step", [](agui_sync::CommitLoopFacade& f, const nb::bytes& s) { return f.step(text(s)); }, nb::arg("input_json"));
}

void bindSegmentTax(nb::module_& m) {
  using agui_sync::SegmentTaxFacade;
  nb::class_<SegmentTaxFacade>(m, "SegmentTaxFacade")
      .def(nb::init<const std::string&>(), nb::arg("options_json"))
      .def("init_result", [](const SegmentTaxFacade& f) { return f.initResult(); })
      .def("sent", &SegmentTaxFacade::sent, nb::arg("label"), nb::arg("bytes"), nb::arg("snapshot"))
      .def("came_back", &SegmentTaxFacade::cameBack, nb::arg("label"), nb::arg("last_seq"), nb::arg("client_epoch"),
           nb::arg("seq"), nb::arg("epoch"), nb::arg("snapshot"))
      .def("snapshots", &SegmentTaxFacade::snapshots, nb::arg("label"))
      .def("switches", &SegmentTaxFacade::switches, nb::arg("label"));
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "agui-state-sync's C++ core (internal: use the agui_state_sync package)";
  bindSync(m);
  bindEmitter(m);
  bindRun(m);
  bindFramer(m);
  bindCursor(m);
  bindStoreLine(m);
  bindActivities(m);
  bindSegmentTax(m);
  m.def("canonicalize", [](const nb::bytes& j) { return SyncFacade::canonicalize(text(j)); }, nb::arg("json"));
  m.def("verify",
        [](const nb::bytes& a, const nb::bytes& s, const nb::bytes& acts) {
          return SyncFacade::verify(text(a), text(s), text(acts));
        },
        nb::arg("approval_json"), nb::arg("state_json"), nb::arg("activities_json"));
  m.def("judge_approvals", [](const nb::bytes& r) { return agui_sync::judgeApprovalsJson(text(r)); },
        nb::arg("request_json"));  // the middleware's approval gate (src/facade/approval_facade.h)
  m.def("judge_access", [](const nb::bytes& r) { return agui_sync::judgeAccessJson(text(r)); },
        nb::arg("request_json"));  // who may read, change or consume a thread (src/facade/access_facade.h)
  // consume_approval's steps and effect_key (src/facade/approval_consume.h)
  m.def("consume_approval_step", [](const nb::bytes& r) { return agui_sync::consumeApprovalStepJson(text(r)); },
        nb::arg("request_json"));
  m.def("effect_key", [](const nb::bytes& r) { return agui_sync::effectKeyJson(text(r)); }, nb::arg("request_json"));
  m.def("render_prompt",
        [](const nb::bytes& state, const std::string& options) {
          return agui_sync::renderPromptParts(std::string_view(state.c_str(), state.size()), options);
        },
        nb::arg("state_json"), nb::arg("options_json"));
  m.def("code_table", &codeTable, nb::sig("def code_table() -> list[tuple[str, int, str]]"));
  m.attr("WIRE_KEY") = agui_sync::kWireKey;  // metadata's key for our wire fields (docs/wire.md section 10)
  m.def("to_json", &toJson, nb::arg("value").none(), nb::arg("max_depth"), nb::arg("well_formed") = false,
        nb::sig("def to_json(value: object | None, max_depth: int, well_formed: bool = False) "
                "-> tuple[bytes | None, str, str]"));
}
