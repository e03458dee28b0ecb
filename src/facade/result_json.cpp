#include "facade/result_json.h"

#include <agui_sync/sync_engine.h>

#include "json/json_escape.h"

namespace agui_sync {

namespace {

void appendOptionalSeq(std::string& out, const std::optional<uint64_t>& v) {
  if (v) out += std::to_string(*v);
  else out += "null";
}

void appendOptionalString(std::string& out, const std::optional<std::string>& v) {
  if (v) appendJsonString(out, *v);
  else out += "null";
}

// {"editId", then: edit-acked "seq"; edit-rejected "reason"; conflict "path",
// "mine"?, "theirs"? (absent = no such path on that side), "resolution", "seq"}.
void appendEditOutcome(std::string& out, const Outcome& o) {
  out += ",\"editId\":";
  appendJsonString(out, o.editId);
  if (o.kind == OutcomeKind::EditRejected) {
    out += ",\"reason\":";
    appendJsonString(out, codeName(o.reason));
    return;
  }
  out += ",\"seq\":";
  appendOptionalSeq(out, o.seq);
  if (o.kind != OutcomeKind::Conflict) return;
  out += ",\"path\":";
  appendJsonString(out, o.path);
  if (o.mine) out += ",\"mine\":" + *o.mine;
  if (o.theirs) out += ",\"theirs\":" + *o.theirs;
  out += ",\"resolution\":\"";
  out += resolutionName(o.resolution);
  out.push_back('"');
}

// "edits":[{"editId","applies"}...] while edits are pending (omitted otherwise).
void appendPendingEdits(std::string& out, const SyncEngine& engine) {
  const std::vector<PendingEdit> edits = engine.pendingEdits();
  if (edits.empty()) return;
  out += ",\"edits\":[";
  for (size_t i = 0; i < edits.size(); ++i) {
    if (i) out.push_back(',');
    out += "{\"editId\":";
    appendJsonString(out, edits[i].editId);
    out += edits[i].applies ? ",\"applies\":true}" : ",\"applies\":false}";
  }
  out.push_back(']');
}

// null, or {"reason","lastSeq","lastEventId"} and, for the state's, "held":[seq,...].
void appendResync(std::string& out, const ResyncRequest* r, const SyncEngine* heldOf) {
  if (!r) {
    out += "null";
    return;
  }
  out += "{\"reason\":";
  appendJsonString(out, codeName(r->reason));
  out += ",\"lastSeq\":";
  appendOptionalSeq(out, r->lastSeq);
  out += ",\"lastEventId\":";
  appendOptionalString(out, r->lastEventId);
  if (heldOf) {
    out += ",\"held\":[";
    const std::vector<uint64_t> held = heldOf->heldSeqs();
    for (size_t i = 0; i < held.size(); ++i) {
      if (i) out.push_back(',');
      out += std::to_string(held[i]);
    }
    out.push_back(']');
  }
  out.push_back('}');
}

}  // namespace

// "activities":[{"messageId","activityType","status","lastSeq","epoch","held","resync"}...],
// every activity, when an outcome of this Result named one (omitted otherwise:
// nothing about them changed). O(activities), at most maxActivities.
void appendActivities(std::string& out, const SyncEngine& engine, const std::vector<Outcome>& outcomes) {
  bool touched = false;
  for (const Outcome& o : outcomes) touched = touched || !o.messageId.empty();
  if (!touched) return;
  out += ",\"activities\":[";
  bool first = true;
  for (const ActivityView& a : engine.activities()) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"messageId\":";
    appendJsonString(out, *a.messageId);
    out += ",\"activityType\":";
    appendJsonString(out, *a.activityType);
    out += ",\"status\":\"";
    out += statusName(a.status);
    out += "\",\"lastSeq\":";
    appendOptionalSeq(out, a.lastSeq);
    out += ",\"epoch\":";
    appendOptionalString(out, *a.epoch);
    out += ",\"held\":" + std::to_string(a.held) + ",\"resync\":";
    appendResync(out, a.resync, nullptr);
    out.push_back('}');
  }
  out.push_back(']');
}

void appendOutcomeJson(std::string& out, const Outcome& o) {
  out += "{\"kind\":\"";
  out += outcomeKindName(o.kind);
  out += '"';
  switch (o.kind) {
    case OutcomeKind::Applied:
      out += ",\"type\":";
      appendJsonString(out, o.type);
      out += ",\"seq\":";
      appendOptionalSeq(out, o.seq);
      out += ",\"changedPaths\":[";
      for (size_t i = 0; i < o.changedPaths.size(); ++i) {
        if (i) out.push_back(',');
        appendJsonString(out, o.changedPaths[i]);
      }
      out += "],\"event\":";
      out += o.raw;
      break;
    case OutcomeKind::Event:
      out += ",\"event\":";
      out += o.raw;
      break;
    case OutcomeKind::Resync:
      out += ",\"reason\":";
      appendJsonString(out, codeName(o.reason));
      out += ",\"lastSeq\":";
      appendOptionalSeq(out, o.lastSeq);
      out += ",\"lastEventId\":";
      appendOptionalString(out, o.lastEventId);
      out += ",\"detail\":";
      appendJsonString(out, o.detail);
      break;
    case OutcomeKind::Ignored:
      out += ",\"reason\":";
      appendJsonString(out, codeName(o.reason));
      out += ",\"seq\":";
      appendOptionalSeq(out, o.seq);
      break;
    case OutcomeKind::Error:
      out += ",\"code\":";
      appendJsonString(out, codeName(o.reason));
      out += ",\"message\":";
      appendJsonString(out, o.detail);
      break;
    case OutcomeKind::Conflict:
    case OutcomeKind::EditAcked:
    case OutcomeKind::EditRejected:
      appendEditOutcome(out, o);
      break;
  }
  if (!o.messageId.empty()) {
    out += ",\"messageId\":";
    appendJsonString(out, o.messageId);
  }
  out.push_back('}');
}

std::string resultJson(const SyncEngine& engine, const std::vector<Outcome>& outcomes) {
  std::string out;
  appendResultJson(out, engine, outcomes);
  return out;
}

void appendResultJson(std::string& out, const SyncEngine& engine, const std::vector<Outcome>& outcomes) {
  size_t reserve = out.size() + 160;
  for (const auto& o : outcomes) reserve += o.raw.size() + 96;
  out.reserve(reserve);
  out += "{\"outcomes\":[";
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (i) out.push_back(',');
    appendOutcomeJson(out, outcomes[i]);
  }
  out += "],\"status\":\"";
  out += statusName(engine.status());
  out += "\",\"lastSeq\":";
  appendOptionalSeq(out, engine.lastSeq());
  out += ",\"lastEventId\":";
  appendOptionalString(out, engine.lastEventId());
  out += ",\"epoch\":";
  appendOptionalString(out, engine.epoch());
  out += ",\"pending\":";
  out += std::to_string(engine.pendingCount());
  appendPendingEdits(out, engine);
  appendActivities(out, engine, outcomes);
  out += ",\"resync\":";
  appendResync(out, engine.resyncRequest() ? &*engine.resyncRequest() : nullptr, &engine);
  out.push_back('}');
}

}  // namespace agui_sync
