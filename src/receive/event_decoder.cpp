#include "receive/event_decoder.h"

#include "edit/edit_acks.h"

#include "json/json_measure.h"
#include "json/json_reader.h"
#include "json/json_write.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;
using namespace std::string_view_literals;

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

bool mayBeActivityEvent(std::string_view text) {
  return text.find("ACTIVITY_SNAPSHOT") != std::string_view::npos || text.find("ACTIVITY_DELTA") != std::string_view::npos;
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

// The members of `metadata` the engine reads (null = absent). Read member by
// member: building a map for two numbers was a visible cost per event.
struct SeqFields {
  json seq, baseSeq, epoch, digest, acks;
};

// `metadata` as read: its own top-level fields (version 1) and those under
// our key (version 2, docs/wire.md section 10), which alone count when present.
struct MetaFields {
  SeqFields top, ours;
  bool hasOurs = false;
};

bool readSeqFields(JsonReader& r, SeqFields& f, MetaFields* outer) {
  f = SeqFields{};
  if (!r.enterObject()) return false;
  std::string key;
  for (bool first = true;; first = false) {
    bool end = false;
    if (!r.nextMember(key, first, &end)) return false;
    if (end) return true;
    if (outer && key == kWireKey) {  // a duplicate member: the last one wins
      outer->hasOurs = r.peek() == '{';
      if (!(outer->hasOurs ? readSeqFields(r, outer->ours, nullptr) : r.skipValue())) return false;
      continue;
    }
    json* target = key == "seq"sv ? &f.seq : key == "baseSeq"sv ? &f.baseSeq : key == "epoch"sv ? &f.epoch
                 : key == "digest"sv ? &f.digest : key == "acks"sv ? &f.acks : nullptr;
    if (!target) {
      if (!r.skipValue()) return false;
      continue;
    }
    *target = json();  // a duplicate member: the last one wins
    if (!r.readValue(*target)) return false;
  }
}

// The metadata field when present and not null, else the top-level one.
const json* pick(const json& fromMetadata, const json& topLevel) {
  if (!fromMetadata.is_null()) return &fromMetadata;
  return topLevel.is_null() ? nullptr : &topLevel;
}

bool fail(DecodeError& err, Code code, std::string msg, bool stateEvent) {
  err.code = code;
  err.message = std::move(msg);
  err.stateEvent = stateEvent;
  return false;
}

// The types whose members the engine reads: documents it keeps (activities
// only with options.activities).
bool isDocumentType(const std::string& type, bool activities) {
  return type == "STATE_SNAPSHOT" || type == "STATE_DELTA" ||
         (activities && (type == "ACTIVITY_SNAPSHOT" || type == "ACTIVITY_DELTA"));
}

// The members of one operation object as read from the wire.
struct OpText {
  std::string key, opName, path, from;  // key: scratch, reused across members
  json value;
  bool hasOp = false, hasPath = false, hasFrom = false, hasValue = false;
};

// Reads one operation object's members; false on a syntax error.
bool readOpMembers(JsonReader& r, OpText& t) {
  t.hasOp = t.hasPath = t.hasFrom = t.hasValue = false;
  t.value = json();
  if (!r.enterObject()) return false;
  for (bool first = true;; first = false) {
    bool end = false;
    if (!r.nextMember(t.key, first, &end)) return false;
    if (end) return true;
    // A duplicate member: the last one wins, as in any JSON object.
    const std::string& key = t.key;
    if (key == "op"sv || key == "path"sv || key == "from"sv) {
      std::string& target = key == "op"sv ? t.opName : key == "path"sv ? t.path : t.from;
      bool& has = key == "op"sv ? t.hasOp : key == "path"sv ? t.hasPath : t.hasFrom;
      has = r.peek() == '"';
      if (has ? !r.readString(target) : !r.skipValue()) return false;
    } else if (key == "value"sv) {
      t.value = json();
      if (!r.readValue(t.value)) return false;
      t.hasValue = true;
    } else if (!r.skipValue()) {  // RFC 6902 4: other members are ignored
      return false;
    }
  }
}

// The operation's identity for duplicate verification (see DecodedEvent::deltaHash).
uint64_t hashOp(const OpText& t, uint64_t hash) {
  hash = hashBytes(t.hasOp ? std::string_view(t.opName) : std::string_view("\x01", 1), hash);
  hash = hashBytes(t.hasPath ? std::string_view(t.path) : std::string_view("\x01", 1), hash);
  hash = hashBytes(t.hasFrom ? std::string_view(t.from) : std::string_view("\x01", 1), hash);
  return t.hasValue ? contentHash(t.value, hash) : hashBytes("\x02", hash);
}

// Checks the operation's structure and, while no earlier one failed, keeps it.
void keepOp(size_t index, OpText& t, DecodedEvent& out) {
  if (!out.opsProblem.ok()) return;
  OpFields fields;
  fields.op = t.hasOp ? &t.opName : nullptr;
  fields.path = t.hasPath ? &t.path : nullptr;
  fields.from = t.hasFrom ? &t.from : nullptr;
  fields.hasValue = t.hasValue;
  PatchOp op;
  out.opsProblem = checkOp(index, fields, op);
  if (!out.opsProblem.ok()) {
    out.ops.clear();
    return;
  }
  op.path = std::move(t.path);
  if (t.hasFrom) op.from = std::move(t.from);
  if (t.hasValue) op.value = std::move(t.value);
  out.ops.push_back(std::move(op));
}

// An array element that is not an operation object: skipped, hashed by its
// text, and (if first) the delta's structural problem.
bool skipNonObject(JsonReader& r, size_t index, uint64_t& hash, DecodedEvent& out) {
  const char* start = r.position();
  if (!r.skipValue()) return false;
  hash = hashBytes(std::string_view(start, static_cast<size_t>(r.position() - start)), hash ^ 0x6e6f6f626a);
  if (out.opsProblem.ok()) {
    OpFields notObject;
    notObject.isObject = false;
    PatchOp unused;
    out.opsProblem = checkOp(index, notObject, unused);
    out.ops.clear();
  }
  return true;
}

// Reads a `delta` array straight into PatchOps. Returns false only on a JSON
// syntax (or depth) error; structural problems of the operations go to
// out.opsProblem (the first one, as validatePatch() would report it).
bool readOps(JsonReader& r, DecodedEvent& out) {
  out.ops.clear();
  out.ops.reserve(4);  // agents send a handful of ops per delta: one allocation, not three
  out.opsProblem = PatchResult{};
  uint64_t hash = 0x6f70730a;
  if (!r.enterArray()) return false;
  OpText text;
  bool done = false;
  for (size_t index = 0;; ++index) {
    if (!r.nextElement(index == 0, &done)) return false;
    if (done) break;
    if (r.peek() != '{') {
      if (!skipNonObject(r, index, hash, out)) return false;
      continue;
    }
    if (!readOpMembers(r, text)) return false;
    hash = hashOp(text, hash);
    keepOp(index, text, out);
  }
  out.deltaHash = hash;
  return true;
}

}  // namespace

namespace {

// What the envelope walk found, besides what it read into the DecodedEvent.
struct Envelope {
  bool typeIsString = false, hasDelta = false, deltaIsArray = false, hasSnapshot = false;
  // ACTIVITY_*: `patch` and `content` read as a delta's ops and a snapshot are;
  // `ambiguous`: both of a pair came before the type said which one counts.
  bool hasPatch = false, patchIsArray = false, hasContent = false, contentIsObject = false, ambiguous = false;
  bool messageIdIsString = false;
  bool activities = false;  // options.activities
  MetaFields metadata;
  bool metadataIsObject = false;
  json topSeq, topBaseSeq;  // some backends send seq / base_seq at the top level
};

void clearDecoded(DecodedEvent& out) {
  out.cls = EventClass::Other;
  out.type.clear();
  out.seq = SeqInfo{};
  out.snapshot = json();
  out.snapshotDepth = 0;
  out.ops.clear();
  out.opsProblem = PatchResult{};
  out.deltaHash = 0;
  out.messageId.clear();
  out.activityType.clear();
  out.replace = true;
}

bool readSnapshot(JsonReader& r, DecodedEvent& out) {
  const size_t base = r.depth();
  r.resetDeepest();
  out.snapshot = json();
  const bool ok = r.readValue(out.snapshot);
  out.snapshotDepth = r.deepest() - base;
  return ok;
}

// Whether a member of the pair (delta/patch, snapshot/content) counts for the
// event's type: yes once the type says so, and, before the type is known, yes
// for both (the pair then must not both be there: see Envelope::ambiguous).
bool counts(const Envelope& env, const std::string& type, const char* mineType) {
  return !env.typeIsString || type == mineType;
}

// The activity members (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA); false: not one of them.
bool readActivityMember(JsonReader& r, const std::string& key, DecodedEvent& out, Envelope& env, bool& ok) {
  if (key == "messageId"sv) {
    env.messageIdIsString = r.peek() == '"';
    ok = env.messageIdIsString ? r.readString(out.messageId) : r.skipValue();
  } else if (key == "activityType"sv) {
    ok = r.peek() == '"' ? r.readString(out.activityType) : r.skipValue();
  } else if (key == "replace"sv) {
    out.replace = r.peek() != 'f';  // AG-UI: a boolean, true unless false
    ok = r.skipValue();
  } else {
    return false;
  }
  return true;
}

// One member of the event object. Once the type is known to be another
// event, its members are only validated.
bool readMember(JsonReader& r, const std::string& key, DecodedEvent& out, Envelope& env) {
  const bool otherEvent = env.typeIsString && !isDocumentType(out.type, env.activities);
  if (key == "type"sv) {
    env.typeIsString = r.peek() == '"';
    return env.typeIsString ? r.readString(out.type) : r.skipValue();
  }
  if (key == "delta"sv || key == "patch"sv) {
    const bool isDelta = key == "delta"sv;
    const bool mine = !otherEvent && (isDelta || env.activities) && counts(env, out.type, isDelta ? "STATE_DELTA" : "ACTIVITY_DELTA");
    bool& has = isDelta ? env.hasDelta : env.hasPatch;
    bool& isArray = isDelta ? env.deltaIsArray : env.patchIsArray;
    has = true;
    isArray = r.peek() == '[' && mine;
    if (isArray && (isDelta ? env.patchIsArray : env.deltaIsArray)) env.ambiguous = true;
    return isArray ? readOps(r, out) : r.skipValue();
  }
  if (key == "snapshot"sv || key == "content"sv) {
    const bool isSnapshot = key == "snapshot"sv;
    const bool mine = !otherEvent && (isSnapshot || env.activities) && counts(env, out.type, isSnapshot ? "STATE_SNAPSHOT" : "ACTIVITY_SNAPSHOT");
    if (!mine) return r.skipValue();
    if (isSnapshot ? env.hasContent : env.hasSnapshot) env.ambiguous = true;
    (isSnapshot ? env.hasSnapshot : env.hasContent) = true;
    if (!isSnapshot) env.contentIsObject = r.peek() == '{';
    return readSnapshot(r, out);
  }
  if (otherEvent) return r.skipValue();
  bool ok = false;
  if (env.activities && readActivityMember(r, key, out, env, ok)) return ok;
  if (key == "metadata"sv) {
    env.metadataIsObject = r.peek() == '{';
    env.metadata = MetaFields{};  // a duplicate metadata replaces an earlier one
    if (env.metadataIsObject) return readSeqFields(r, env.metadata.top, &env.metadata);
    return r.skipValue();
  }
  if (key == "seq"sv) return r.readValue(env.topSeq = json());
  if (key == "base_seq"sv) return r.readValue(env.topBaseSeq = json());
  return r.skipValue();
}

// Walks the event object member by member; false on a syntax error.
bool readEnvelope(JsonReader& r, DecodedEvent& out, Envelope& env) {
  std::string key;
  if (!r.enterObject()) return false;
  for (bool first = true;; first = false) {
    bool end = false;
    if (!r.nextMember(key, first, &end)) return false;
    if (end) return r.finish();
    if (!readMember(r, key, out, env)) return false;
  }
}

// seq / baseSeq, epoch and digest: under our key of metadata when it is there
// (version 2), else metadata's own fields, then the top level (version 1).
bool readSequencing(const Envelope& env, DecodedEvent& out, DecodeError& err) {
  const bool isDelta = out.cls == EventClass::StateDelta || out.cls == EventClass::ActivityDelta;
  const SeqFields none;
  const bool v2 = env.metadataIsObject && env.metadata.hasOurs;
  const SeqFields& meta = !env.metadataIsObject ? none : v2 ? env.metadata.ours : env.metadata.top;
  const json noTop;
  const json& topSeq = v2 ? noTop : env.topSeq;
  const json& topBaseSeq = v2 ? noTop : env.topBaseSeq;
  uint64_t value = 0;
  if (const json* s = pick(meta.seq, topSeq)) {
    if (!readSeq(*s, value)) return fail(err, Code::InvalidSeq, "seq must be an integer in [0, 2^53-1]", true);
    out.seq.seq = value;
  }
  const json* b = pick(meta.baseSeq, topBaseSeq);
  if (isDelta && b) {
    if (!readSeq(*b, value)) return fail(err, Code::InvalidSeq, "baseSeq must be an integer in [0, 2^53-1]", true);
    out.seq.baseSeq = value;
  }
  if (isDelta && out.seq.seq.has_value() != out.seq.baseSeq.has_value())
    return fail(err, Code::InvalidSeq, "a sequenced " + out.type + " needs both seq and baseSeq", true);
  if (isDelta && out.seq.seq && *out.seq.seq <= *out.seq.baseSeq)
    return fail(err, Code::InvalidSeq, "a " + out.type + "'s seq must be greater than its baseSeq", true);
  const json& e = meta.epoch;
  if (e.is_string()) out.seq.epoch = *e.get_ptr<const std::string*>();
  else if (e.is_number_integer()) out.seq.epoch = jsonText(e);
  else if (!e.is_null()) return fail(err, Code::InvalidSeq, "metadata.epoch must be a string or integer", true);
  const json& g = meta.digest;
  if (!g.is_null()) {
    if (!g.is_string() || g.get_ptr<const std::string*>()->rfind("sha256:", 0) != 0)
      return fail(err, Code::InvalidSeq, "metadata.digest must be a 'sha256:<hex>' string", true);
    out.seq.digest = *g.get_ptr<const std::string*>();
  }
  readAcks(meta.acks, out.seq.acks);  // lenient: acks never make a state event fail
  return true;
}

// An ACTIVITY_* event: what AG-UI requires of it (a messageId; a content
// object, a patch array). A failure names the activity when it can.
bool classifyActivity(const Envelope& env, DecodedEvent& out, DecodeError& err) {
  const bool snapshot = out.type == "ACTIVITY_SNAPSHOT";
  out.cls = snapshot ? EventClass::ActivitySnapshot : EventClass::ActivityDelta;
  auto bad = [&](const char* message) {
    fail(err, Code::InvalidEvent, message, false);
    err.activityEvent = true;
    if (env.messageIdIsString) err.activityId = out.messageId;
    return false;
  };
  if (!env.messageIdIsString) return bad("an activity event needs a string 'messageId'");
  if (env.ambiguous) return bad("an activity event carries both 'delta' and 'patch', or 'snapshot' and 'content'");
  if (snapshot && !(env.hasContent && env.contentIsObject)) return bad("ACTIVITY_SNAPSHOT needs a 'content' object");
  if (!snapshot && !(env.hasPatch && env.patchIsArray)) return bad("ACTIVITY_DELTA needs a 'patch' array");
  if (readSequencing(env, out, err)) return true;
  err.stateEvent = false;
  err.activityEvent = true;
  err.activityId = out.messageId;
  return false;
}

// After the walk: classify the event and check what a state event must carry.
bool classify(const Envelope& env, DecodedEvent& out, DecodeError& err) {
  if (!env.typeIsString) return fail(err, Code::InvalidEvent, "an AG-UI event needs a string 'type'", true);
  if (env.activities && (out.type == "ACTIVITY_SNAPSHOT" || out.type == "ACTIVITY_DELTA"))
    return classifyActivity(env, out, err);
  if (env.ambiguous) return fail(err, Code::InvalidEvent, "a state event carries both 'delta' and 'patch', or 'snapshot' and 'content'", true);
  if (out.type == "STATE_SNAPSHOT") {
    out.cls = EventClass::StateSnapshot;
    if (!env.hasSnapshot) return fail(err, Code::InvalidEvent, "STATE_SNAPSHOT needs a 'snapshot'", true);
  } else if (out.type == "STATE_DELTA") {
    out.cls = EventClass::StateDelta;
    if (!env.hasDelta || !env.deltaIsArray)
      return fail(err, Code::InvalidEvent, "STATE_DELTA needs a 'delta' array", true);
  } else {
    out.cls = EventClass::Other;  // other events pass through untouched; their metadata is theirs
    out.snapshot = json();
    out.ops.clear();
    return true;
  }
  return readSequencing(env, out, err);
}

}  // namespace

bool decodeEvent(std::string_view data, const Options& options, DecodedEvent& out, DecodeError& err) {
  if (data.size() > options.maxEventBytes)
    return fail(err, Code::LimitExceeded, "event of " + std::to_string(data.size()) + " bytes exceeds maxEventBytes",
                mayBeStateEvent(data.substr(0, 4096)));
  // JSON text never contains a raw NUL (json::parse would even take one for
  // the end of input); say so plainly.
  if (data.find('\0') != std::string_view::npos)
    return fail(err, Code::InvalidJson, "event data contains a NUL byte", mayBeStateEvent(data.substr(0, 4096)));
  clearDecoded(out);
  // The envelope adds up to 3 levels above a state value (event > delta > op > value).
  JsonReader r(data, options.maxDepth + 3);
  auto syntaxError = [&]() {
    if (r.depthExceeded())
      return fail(err, Code::LimitExceeded, "event nests deeper than maxDepth (" + std::to_string(options.maxDepth) + ")",
                  mayBeStateEvent(data.substr(0, 4096)));
    return fail(err, Code::InvalidJson, "event data is not valid JSON (" + r.error() + ")", mayBeStateEvent(data));
  };
  if (r.peek() != '{') {
    // Valid JSON that is not an object cannot have been a state event.
    if (!r.skipValue() || !r.finish()) return syntaxError();
    return fail(err, Code::InvalidEvent, "an AG-UI event must be a JSON object", false);
  }
  Envelope env;
  env.activities = options.activities;
  if (!readEnvelope(r, out, env)) return syntaxError();
  return classify(env, out, err);
}

}  // namespace agui_sync
