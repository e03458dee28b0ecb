#include "event_decoder.h"

namespace agui_sync {

using nlohmann::json;

size_t scanDepth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

bool mayBeStateEvent(std::string_view text) {
  // A type we can see that is not a state type means "no"; otherwise assume yes.
  if (text.find("STATE_SNAPSHOT") != std::string_view::npos) return true;
  if (text.find("STATE_DELTA") != std::string_view::npos) return true;
  size_t t = text.find("\"type\"");
  if (t == std::string_view::npos) return true;
  size_t colon = text.find(':', t + 6);
  size_t quote = colon == std::string_view::npos ? colon : text.find('"', colon);
  return quote == std::string_view::npos;
}

namespace {

// A sequence number: a JSON integer in [0, 2^53 - 1]. Floats with an integral
// value (5.0) are accepted because JS senders cannot tell them apart.
bool readSeq(const json& v, uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<uint64_t>();
    return out <= kMaxSeq;
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0) return false;
    out = static_cast<uint64_t>(i);
    return out <= kMaxSeq;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!(d >= 0 && d <= static_cast<double>(kMaxSeq)) || static_cast<double>(static_cast<uint64_t>(d)) != d)
      return false;
    out = static_cast<uint64_t>(d);
    return true;
  }
  return false;
}

// Looks up `name` in metadata first, then at top level under `topName`.
const json* findField(const json& event, const json* metadata, const char* name, const char* topName) {
  if (metadata) {
    auto it = metadata->find(name);
    if (it != metadata->end() && !it->is_null()) return &*it;
  }
  auto it = event.find(topName);
  if (it != event.end() && !it->is_null()) return &*it;
  return nullptr;
}

bool fail(DecodeError& err, const char* code, std::string msg, bool stateEvent) {
  err.code = code;
  err.message = std::move(msg);
  err.stateEvent = stateEvent;
  return false;
}

}  // namespace

bool decodeEvent(std::string_view data, const Options& options, DecodedEvent& out, DecodeError& err) {
  if (data.size() > options.maxEventBytes)
    return fail(err, "limit-exceeded", "event of " + std::to_string(data.size()) + " bytes exceeds maxEventBytes",
                mayBeStateEvent(data.substr(0, 4096)));
  // The envelope adds up to 3 levels above a state value (event > delta > op > value).
  const size_t depthLimit = options.maxDepth + 3;
  if (scanDepth(data, depthLimit) > depthLimit)
    return fail(err, "limit-exceeded", "event nests deeper than maxDepth (" + std::to_string(options.maxDepth) + ")",
                mayBeStateEvent(data.substr(0, 4096)));

  // JSON text never contains a raw NUL, and nlohmann's lexer would take one for
  // the end of input, silently ignoring whatever follows it.
  if (data.find('\0') != std::string_view::npos)
    return fail(err, "invalid-json", "event data contains a NUL byte", mayBeStateEvent(data.substr(0, 4096)));
  out.doc = json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (out.doc.is_discarded())
    return fail(err, "invalid-json", "event data is not valid JSON", mayBeStateEvent(data));
  // Valid JSON that is not an object cannot have been a state event.
  if (!out.doc.is_object()) return fail(err, "invalid-event", "an AG-UI event must be a JSON object", false);
  auto typeIt = out.doc.find("type");
  if (typeIt == out.doc.end() || !typeIt->is_string())
    return fail(err, "invalid-event", "an AG-UI event needs a string 'type'", true);
  out.type = *typeIt->get_ptr<const std::string*>();
  out.seq = SeqInfo{};
  if (out.type == "STATE_SNAPSHOT") out.cls = EventClass::StateSnapshot;
  else if (out.type == "STATE_DELTA") out.cls = EventClass::StateDelta;
  else {
    out.cls = EventClass::Other;
    return true;  // other events pass through untouched; their metadata is theirs
  }

  const bool isDelta = out.cls == EventClass::StateDelta;
  if (isDelta) {
    auto d = out.doc.find("delta");
    if (d == out.doc.end() || !d->is_array())
      return fail(err, "invalid-event", "STATE_DELTA needs a 'delta' array", true);
  } else if (out.doc.find("snapshot") == out.doc.end()) {
    return fail(err, "invalid-event", "STATE_SNAPSHOT needs a 'snapshot'", true);
  }

  const json* metadata = nullptr;
  auto m = out.doc.find("metadata");
  if (m != out.doc.end() && m->is_object()) metadata = &*m;

  uint64_t value = 0;
  if (const json* s = findField(out.doc, metadata, "seq", "seq")) {
    if (!readSeq(*s, value)) return fail(err, "invalid-seq", "seq must be an integer in [0, 2^53-1]", true);
    out.seq.seq = value;
  }
  const json* b = findField(out.doc, metadata, "baseSeq", "base_seq");
  if (isDelta && b) {
    if (!readSeq(*b, value)) return fail(err, "invalid-seq", "baseSeq must be an integer in [0, 2^53-1]", true);
    out.seq.baseSeq = value;
  }
  if (isDelta && out.seq.seq.has_value() != out.seq.baseSeq.has_value())
    return fail(err, "invalid-seq", "a sequenced STATE_DELTA needs both seq and baseSeq", true);
  if (isDelta && out.seq.seq && *out.seq.seq <= *out.seq.baseSeq)
    return fail(err, "invalid-seq", "a STATE_DELTA's seq must be greater than its baseSeq", true);

  if (metadata) {
    auto e = metadata->find("epoch");
    if (e != metadata->end()) {
      if (e->is_string()) out.seq.epoch = *e->get_ptr<const std::string*>();
      else if (e->is_number_integer()) out.seq.epoch = e->dump();
      else if (!e->is_null()) return fail(err, "invalid-seq", "metadata.epoch must be a string or integer", true);
    }
    auto g = metadata->find("digest");
    if (g != metadata->end() && !g->is_null()) {
      if (!g->is_string() || g->get_ptr<const std::string*>()->rfind("sha256:", 0) != 0)
        return fail(err, "invalid-seq", "metadata.digest must be a 'sha256:<hex>' string", true);
      out.seq.digest = *g->get_ptr<const std::string*>();
    }
  }
  return true;
}

}  // namespace agui_sync
