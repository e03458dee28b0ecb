#include "outcome_json.h"

#include "sync_engine.h"

namespace agui_sync {

void appendJsonString(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  // Runs that need no escaping are appended at once (per-character push_back
  // was a visible cost per event in WebAssembly).
  size_t runStart = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + runStart, i - runStart);
    runStart = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
  }
  out.append(s.data() + runStart, s.size() - runStart);
  out.push_back('"');
}

namespace {

void appendOptionalSeq(std::string& out, const std::optional<uint64_t>& v) {
  if (v) out += std::to_string(*v);
  else out += "null";
}

void appendOptionalString(std::string& out, const std::optional<std::string>& v) {
  if (v) appendJsonString(out, *v);
  else out += "null";
}

}  // namespace

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
      appendJsonString(out, o.reason);
      out += ",\"lastSeq\":";
      appendOptionalSeq(out, o.lastSeq);
      out += ",\"lastEventId\":";
      appendOptionalString(out, o.lastEventId);
      out += ",\"detail\":";
      appendJsonString(out, o.detail);
      break;
    case OutcomeKind::Ignored:
      out += ",\"reason\":";
      appendJsonString(out, o.reason);
      out += ",\"seq\":";
      appendOptionalSeq(out, o.seq);
      break;
    case OutcomeKind::Error:
      out += ",\"code\":";
      appendJsonString(out, o.reason);
      out += ",\"message\":";
      appendJsonString(out, o.detail);
      break;
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
  appendOptionalString(out, engine.receiver().epoch());
  out += ",\"pending\":";
  out += std::to_string(engine.receiver().pendingCount());
  out += ",\"resync\":";
  const auto& r = engine.receiver().resyncRequest();
  if (!r) {
    out += "null";
  } else {
    out += "{\"reason\":";
    appendJsonString(out, r->reason);
    out += ",\"lastSeq\":";
    appendOptionalSeq(out, r->lastSeq);
    out += ",\"lastEventId\":";
    appendOptionalString(out, r->lastEventId);
    out += ",\"held\":[";
    const std::vector<uint64_t> held = engine.receiver().heldSeqs();
    for (size_t i = 0; i < held.size(); ++i) {
      if (i) out.push_back(',');
      out += std::to_string(held[i]);
    }
    out += "]}";
  }
  out.push_back('}');
}

}  // namespace agui_sync
