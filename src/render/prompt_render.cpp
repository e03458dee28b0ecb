#include <agui_sync/prompt_render.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

#include "json/ecma_number.h"
#include "json/json_measure.h"
#include "json/json_pointer.h"
#include "json/utf16_order.h"
#include "json/utf8.h"
#include "render/path_trie.h"
#include "render/prompt_text.h"

// The contract (format, escaping, markers, budget) is documented in
// include/agui_sync/prompt_render.h. Exception-free: values are read through
// type checks and get_ptr() only.

namespace agui_sync {

namespace {

using json = nlohmann::json;
using Member = json::object_t::value_type;

// Budget passes never cut strings below this (unless configured lower): a cut
// string also carries a ~25-byte marker, so shorter cuts save nothing.
constexpr size_t kStringFloor = 32;
constexpr char kTooLarge[] = "{\"$truncated\":\"state too large\"}";

// The checked options of one call.
struct Plan {
  const RenderOptions* options = nullptr;
  PathTrie trie;
  RenderLimits configured;
  const std::string* mark = nullptr;  // the datamark, nullptr when off
};

enum class CutKind { String, ArrayTail, ObjectTail, Depth, Key };

// A truncation as the walk sees it. What it dropped is measured only for the
// pass that is returned (earlier passes are abandoned), so a cut keeps what it
// needs to measure later.
struct Cut {
  CutKind kind = CutKind::String;
  std::string path;
  const char* reason = "";
  size_t dropped = 0;                       // String: known at once
  const json* node = nullptr;               // Depth: the container
  const json::array_t* array = nullptr;     // ArrayTail: the array ...
  size_t from = 0;                          // ... its first omitted index ...
  const PathNode* trie = nullptr;           // ... and the trie node (excluded elements are not omitted)
  std::vector<const Member*> members;       // ObjectTail / Key: the omitted members
};

void appendDecimal(std::string& out, size_t n) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  out.append(buf, static_cast<size_t>(end - buf));
}

// "$untrusted", "$$truncated", ...: the keys that get one more '$' so that the
// markers' own spelling stays unambiguous.
bool reservedKey(const std::string& key) {
  size_t dollars = 0;
  while (dollars < key.size() && key[dollars] == '$') ++dollars;
  if (dollars == 0) return false;
  const std::string_view word(key.data() + dollars, key.size() - dollars);
  return word == "untrusted" || word == "truncated";
}

void appendPointerToken(std::string& out, std::string_view token) {
  out += '/';
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
}

class Renderer {
 public:
  Renderer(const Plan& plan, const RenderLimits& limits, size_t cap)
      : plan_(plan), trie_(plan.trie), limits_(limits), cap_(cap) {}

  // Renders the JSON line; false when it outgrew the cap (the pass is abandoned
  // at that point, so a pass costs at most about `cap` bytes of output).
  bool run(const json& state) {
    const PathNode* root = &trie_.root();
    if (root->exclude) body += "null";
    else node(state, root, 0, !trie_.hasInclude() || root->include, false);
    return !full_;
  }

  std::string body;
  std::vector<Cut> cuts;
  std::vector<std::string> untrusted;

 private:
  struct Entry {
    const Member* member;
    const PathNode* trie;
    std::string renamed;  // "$" + key for a reserved key, else empty
    std::string_view name() const { return renamed.empty() ? std::string_view(member->first) : renamed; }
  };
  struct Step {
    const std::string* key;  // nullptr for an array element
    size_t index;
  };
  struct Checkpoint {
    size_t body, cuts, untrusted;
  };

  bool node(const json& v, const PathNode* t, size_t level, bool selected, bool inUntrusted);
  bool content(const json& v, const PathNode* t, size_t level, bool selected, bool inUntrusted);
  void scalar(const json& v);
  void string(const std::string& s, bool inUntrusted);
  void depthMarker(const json& v, size_t level);
  void array(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted);
  void arrayTail(const json::array_t& a, const PathNode* t, size_t from, size_t shown);
  bool partialArray(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted);
  void object(const json::object_t& o, const PathNode* t, size_t level, bool inUntrusted);
  bool partialObject(const json::object_t& o, const PathNode* t, size_t level, bool inUntrusted);
  void addEntry(std::vector<Entry>& entries, const Member& m, const PathNode* t);
  static void sortEntries(std::vector<Entry>& entries);
  void objectTail(const std::vector<Entry>& entries, size_t keep);
  bool member(const Entry& e, size_t level, bool selected, bool inUntrusted, bool first);
  bool partialChild(const json& v, const PathNode* t, size_t level, bool inUntrusted, size_t shown);
  void checkCap() {
    if (body.size() > cap_) full_ = true;
  }
  std::string pointer() const;
  Checkpoint checkpoint() const { return {body.size(), cuts.size(), untrusted.size()}; }
  void rollback(const Checkpoint& c) {
    body.resize(c.body);
    cuts.resize(c.cuts);
    untrusted.resize(c.untrusted);
  }

  const Plan& plan_;
  const PathTrie& trie_;
  const RenderLimits limits_;
  const size_t cap_;
  bool full_ = false;
  std::vector<Step> path_;
};

std::string Renderer::pointer() const {
  std::string out;
  for (const Step& s : path_) {
    if (s.key) {
      appendPointerToken(out, *s.key);
    } else {
      out += '/';
      appendDecimal(out, s.index);
    }
  }
  return out;
}

// The untrusted wrapper goes around the value at the pointer; inside an
// untrusted subtree nested pointers add nothing.
bool Renderer::node(const json& v, const PathNode* t, size_t level, bool selected, bool inUntrusted) {
  if (t == nullptr || !t->untrusted || inUntrusted) return content(v, t, level, selected, inUntrusted);
  untrusted.push_back(pointer());
  body += "{\"$untrusted\":";
  const bool any = content(v, t, level, selected, true);
  body += '}';
  checkCap();
  return any;
}

// Returns false only for a container on the way to include pointers that ended
// up with nothing in it (its parent then leaves it out).
bool Renderer::content(const json& v, const PathNode* t, size_t level, bool selected, bool inUntrusted) {
  if (v.is_structured() && !v.empty() && level >= limits_.maxDepth) {
    depthMarker(v, level);
    return true;
  }
  if (const auto* a = v.get_ptr<const json::array_t*>()) {
    if (!selected) return partialArray(*a, t, level, inUntrusted);
    array(*a, t, level, inUntrusted);
  } else if (const auto* o = v.get_ptr<const json::object_t*>()) {
    if (!selected) return partialObject(*o, t, level, inUntrusted);
    object(*o, t, level, inUntrusted);
  } else if (!selected) {
    body += "null";  // a scalar root that no include pointer selects
  } else if (const auto* s = v.get_ptr<const json::string_t*>()) {
    string(*s, inUntrusted);
  } else {
    scalar(v);
  }
  checkCap();
  return true;
}

void Renderer::scalar(const json& v) {
  switch (v.type()) {
    case json::value_t::boolean: body += *v.get_ptr<const json::boolean_t*>() ? "true" : "false"; return;
    // Integers become doubles first, as in RFC 8785: what a JavaScript peer sees.
    case json::value_t::number_integer:
      appendEcmaNumber(static_cast<double>(*v.get_ptr<const json::number_integer_t*>()), body);
      return;
    case json::value_t::number_unsigned:
      appendEcmaNumber(static_cast<double>(*v.get_ptr<const json::number_unsigned_t*>()), body);
      return;
    case json::value_t::number_float: appendEcmaNumber(*v.get_ptr<const json::number_float_t*>(), body); return;
    default: body += "null"; return;  // null, and binary/discarded, which JSON cannot hold
  }
}

void Renderer::string(const std::string& s, bool inUntrusted) {
  const size_t keep = promptCutPoint(s, limits_.maxStringBytes);
  if (body.size() + keep > cap_) {  // escaping never shrinks text: give up before copying
    full_ = true;
    return;
  }
  body += '"';
  appendPromptChars(body, std::string_view(s).substr(0, keep), inUntrusted ? plan_.mark : nullptr);
  if (keep < s.size()) {
    Cut cut;
    cut.kind = CutKind::String;
    cut.path = pointer();
    cut.reason = s.size() > plan_.configured.maxStringBytes ? "string" : "budget";
    cut.dropped = s.size() - keep;
    body += "...[truncated ";
    appendDecimal(body, cut.dropped);
    body += " bytes]";
    cuts.push_back(std::move(cut));
  }
  body += '"';
}

void Renderer::depthMarker(const json& v, size_t level) {
  body += v.is_array() ? "{\"$truncated\":\"array nested too deep\"}" : "{\"$truncated\":\"object nested too deep\"}";
  Cut cut;
  cut.kind = CutKind::Depth;
  cut.path = pointer();
  cut.reason = level >= plan_.configured.maxDepth ? "depth" : "budget";
  cut.node = &v;
  cuts.push_back(std::move(cut));
  checkCap();
}

void Renderer::array(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted) {
  body += '[';
  size_t shown = 0, i = 0;
  for (; i < a.size() && !full_; ++i) {
    const PathNode* child = trie_.child(t, i);
    if (child && child->exclude) continue;
    if (shown == limits_.maxArrayItems) break;
    if (shown++) body += ',';
    path_.push_back({nullptr, i});
    node(a[i], child, level + 1, true, inUntrusted);
    path_.pop_back();
  }
  if (!full_ && i < a.size()) arrayTail(a, t, i, shown);
  body += ']';
}

// The marker element after the last one shown; excluded elements are not
// counted among the omitted (they were never going to be shown).
void Renderer::arrayTail(const json::array_t& a, const PathNode* t, size_t from, size_t shown) {
  size_t omitted = a.size() - from;
  if (t && !t->children.empty()) {
    for (size_t j = from; j < a.size(); ++j) {
      const PathNode* child = trie_.child(t, j);
      if (child && child->exclude) --omitted;
    }
  }
  if (omitted == 0) return;
  body += ",{\"$truncated\":\"";
  appendDecimal(body, omitted);
  body += omitted == 1 ? " more item\"}" : " more items\"}";
  Cut cut;
  cut.kind = CutKind::ArrayTail;
  cut.path = pointer();
  cut.reason = shown + omitted > plan_.configured.maxArrayItems ? "array" : "budget";
  cut.array = &a;
  cut.from = from;
  cut.trie = t;
  cuts.push_back(std::move(cut));
  checkCap();
}

// An array on the way to include pointers: only the elements they name, in
// index order, never cut (there are at most as many as pointers).
bool Renderer::partialArray(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted) {
  std::vector<std::pair<size_t, const PathNode*>> picked;
  for (const auto& [token, index] : t->children) {
    const PathNode& child = trie_.at(index);
    size_t i = 0;
    if (child.exclude || !(child.include || child.includeBelow) || !parseArrayIndex(token, i) || i >= a.size())
      continue;
    if (child.include || a[i].is_structured()) picked.emplace_back(i, &child);
  }
  std::sort(picked.begin(), picked.end());
  body += '[';
  size_t shown = 0;
  for (const auto& [i, child] : picked) {
    if (full_) break;
    path_.push_back({nullptr, i});
    if (partialChild(a[i], child, level, inUntrusted, shown)) ++shown;
    path_.pop_back();
  }
  body += ']';
  return shown > 0;
}

// One child of a partial container: rendered, or rolled back when it is itself
// a partial container that found nothing.
bool Renderer::partialChild(const json& v, const PathNode* t, size_t level, bool inUntrusted, size_t shown) {
  const Checkpoint before = checkpoint();
  if (shown) body += ',';
  if (node(v, t, level + 1, t->include, inUntrusted) || full_) return true;
  rollback(before);
  return false;
}

void Renderer::addEntry(std::vector<Entry>& entries, const Member& m, const PathNode* t) {
  if (!validUtf8(m.first)) {
    // No JSON text yields such a key; only a state built in code can hold one.
    // Repaired, it could collide with another key, so the member is left out.
    Cut cut;
    cut.kind = CutKind::Key;
    cut.path = pointer();
    appendPointerToken(cut.path, m.first);
    cut.path = repairUtf8(cut.path);
    cut.reason = "key";
    cut.members.push_back(&m);
    cuts.push_back(std::move(cut));
    return;
  }
  entries.push_back({&m, t, reservedKey(m.first) ? "$" + m.first : std::string()});
}

// RFC 8785 order of the rendered names. nlohmann's map is in UTF-8 byte order,
// which differs only around U+E000-FFFF vs astral characters and for renamed
// keys, so the check usually finds the entries sorted already.
void Renderer::sortEntries(std::vector<Entry>& entries) {
  const auto less = [](const Entry& x, const Entry& y) { return utf16Less(x.name(), y.name()); };
  if (!std::is_sorted(entries.begin(), entries.end(), less)) std::sort(entries.begin(), entries.end(), less);
}

bool Renderer::member(const Entry& e, size_t level, bool selected, bool inUntrusted, bool first) {
  if (!first) body += ',';
  if (body.size() + e.name().size() > cap_) {  // a key is never cut: give up before copying a huge one
    full_ = true;
    return true;
  }
  body += '"';
  appendPromptChars(body, e.name(), nullptr);
  body += "\":";
  path_.push_back({&e.member->first, 0});
  const bool any = node(e.member->second, e.trie, level + 1, selected, inUntrusted);
  path_.pop_back();
  return any;
}

void Renderer::object(const json::object_t& o, const PathNode* t, size_t level, bool inUntrusted) {
  std::vector<Entry> entries;
  entries.reserve(o.size());
  for (const Member& m : o) {
    const PathNode* child = trie_.child(t, m.first);
    if (!(child && child->exclude)) addEntry(entries, m, child);
  }
  sortEntries(entries);
  const size_t cut = limits_.maxObjectMembers;
  const size_t keep = cut != 0 && cut < entries.size() ? cut : entries.size();
  body += '{';
  for (size_t i = 0; i < keep && !full_; ++i) member(entries[i], level, true, inUntrusted, i == 0);
  if (!full_ && keep < entries.size()) objectTail(entries, keep);
  body += '}';
}

// Objects are cut only by the budget: the marker member comes last, after the
// members it summarizes.
void Renderer::objectTail(const std::vector<Entry>& entries, size_t keep) {
  body += ",\"$truncated\":\"";
  appendDecimal(body, entries.size() - keep);
  body += entries.size() - keep == 1 ? " more member\"" : " more members\"";
  Cut cut;
  cut.kind = CutKind::ObjectTail;
  cut.path = pointer();
  cut.reason = "budget";
  for (size_t i = keep; i < entries.size(); ++i) cut.members.push_back(entries[i].member);
  cuts.push_back(std::move(cut));
  checkCap();
}

// An object on the way to include pointers: only the members they name (looked
// up from the trie, so the cost does not depend on the object's size).
bool Renderer::partialObject(const json::object_t& o, const PathNode* t, size_t level, bool inUntrusted) {
  std::vector<Entry> entries;
  for (const auto& [token, index] : t->children) {
    const PathNode& child = trie_.at(index);
    if (child.exclude || !(child.include || child.includeBelow)) continue;
    auto it = o.find(token);
    if (it != o.end() && (child.include || it->second.is_structured())) addEntry(entries, *it, &child);
  }
  sortEntries(entries);
  body += '{';
  size_t shown = 0;
  for (const Entry& e : entries) {
    if (full_) break;
    const Checkpoint before = checkpoint();
    if (member(e, level, e.trie->include, inUntrusted, shown == 0) || full_) ++shown;
    else rollback(before);
  }
  body += '}';
  return shown > 0;
}

// ---------------------------------------------------------------------------
// Options, passes, results
// ---------------------------------------------------------------------------

bool validTag(const std::string& tag) {
  if (tag.empty() || tag.size() > kMaxTagBytes || tag[0] < 'a' || tag[0] > 'z') return false;
  for (char c : tag)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

std::string openTag(const std::string& tag, bool truncated) {
  return "<" + tag + (truncated ? " format=\"json\" truncated=\"true\">\n" : " format=\"json\">\n");
}

std::string closeTag(const std::string& tag) { return "\n</" + tag + ">"; }

std::optional<std::string> addPointers(const std::vector<std::string>& pointers, const char* name,
                                       PathTrie::Flag flag, PathTrie& trie) {
  Tokens tokens;
  std::string error;
  for (size_t i = 0; i < pointers.size(); ++i) {
    if (!parsePointer(pointers[i], tokens, error))
      return std::string(name) + "[" + std::to_string(i) + "]: " + error;
    trie.add(tokens, flag);
  }
  return std::nullopt;
}

std::optional<std::string> checkLimits(const RenderOptions& o) {
  if (o.maxStringBytes == 0) return std::string("maxStringBytes must be at least 1");
  if (o.maxArrayItems == 0) return std::string("maxArrayItems must be at least 1");
  if (o.maxDepth == 0 || o.maxDepth > kMaxRenderDepth)
    return "maxDepth must be between 1 and " + std::to_string(kMaxRenderDepth);
  if (!validTag(o.tag)) return std::string("tag must match [a-z][a-z0-9_-]* (at most 64 bytes)");
  if (!o.datamark.empty() && !validDatamark(o.datamark, kMaxDatamarkBytes))
    return std::string("datamark must be 1 to 16 bytes of UTF-8 without whitespace or escaped characters");
  if (!o.untrustedAuto && !(o.ownership.empty() && o.userWritten.empty()))
    return std::string("ownership is read only with untrusted 'auto'");
  if (o.maxBytes < minRenderBytes(o.tag))
    return "maxBytes must be at least " + std::to_string(minRenderBytes(o.tag)) + " for this tag";
  return std::nullopt;
}

std::optional<std::string> makePlan(const json& state, const RenderOptions& o, Plan& plan) {
  if (auto problem = checkLimits(o)) return problem;
  if (auto problem = addPointers(o.include, "include", PathTrie::Include, plan.trie)) return problem;
  if (auto problem = addPointers(o.exclude, "exclude", PathTrie::Exclude, plan.trie)) return problem;
  if (auto problem = addPointers(o.untrusted, "untrusted", PathTrie::Untrusted, plan.trie)) return problem;
  if (o.untrustedAuto) {
    std::vector<std::string> owned;
    Failure failure;
    if (!autoUntrustedPaths(state, o.ownership, o.userWritten, owned, &failure)) return failure.message;
    if (auto problem = addPointers(owned, "auto", PathTrie::Untrusted, plan.trie)) return problem;
  }
  plan.options = &o;
  plan.configured = {o.maxStringBytes, o.maxArrayItems, 0, o.maxDepth};
  plan.mark = o.datamark.empty() ? nullptr : &o.datamark;
  return std::nullopt;
}

// The next, tighter limits after a pass that did not fit; false when none are
// left. Strings and arrays halve together (objects are cut like arrays from the
// first budget pass on), then depth halves.
bool shrink(RenderLimits& l, const RenderLimits& configured) {
  const size_t floor = std::min(configured.maxStringBytes, kStringFloor);
  if (l.maxStringBytes > floor || l.maxArrayItems > 1 || l.maxObjectMembers != l.maxArrayItems) {
    l.maxStringBytes = std::max(floor, l.maxStringBytes / 2);
    l.maxArrayItems = std::max<size_t>(1, l.maxArrayItems / 2);
    l.maxObjectMembers = l.maxArrayItems;
    return true;
  }
  if (l.maxDepth <= 1) return false;
  l.maxDepth /= 2;
  return true;
}

size_t memberSize(const Member& m) { return quotedSize(m.first) + 1 + canonicalSize(m.second) + 1; }

size_t droppedBytes(const Cut& cut, const PathTrie& trie) {
  size_t total = 0;
  switch (cut.kind) {
    case CutKind::String: return cut.dropped;
    case CutKind::Depth: return canonicalSize(*cut.node);
    case CutKind::ArrayTail:
      for (size_t j = cut.from; j < cut.array->size(); ++j) {
        const PathNode* child = trie.child(cut.trie, j);
        if (!(child && child->exclude)) total += canonicalSize((*cut.array)[j]) + 1;
      }
      return total;
    case CutKind::ObjectTail:
    case CutKind::Key:
      for (const Member* m : cut.members) total += memberSize(*m);
      return total;
  }
  return total;
}

void finish(Renderer& r, const Plan& plan, const RenderLimits& limits, std::string text, RenderResult& out) {
  out.text = std::move(text);
  out.bytes = out.text.size();
  out.truncated.clear();
  out.truncated.reserve(r.cuts.size());
  for (const Cut& cut : r.cuts) out.truncated.push_back({cut.path, cut.reason, droppedBytes(cut, plan.trie)});
  out.untrustedPaths = std::move(r.untrusted);
  out.applied = limits;
}

void tooLarge(const json& state, const std::string& tag, RenderResult& out) {
  out.text = openTag(tag, true) + kTooLarge + closeTag(tag);
  out.bytes = out.text.size();
  out.truncated = {{"", "budget", canonicalSize(state)}};
  out.untrustedPaths.clear();
  out.applied = RenderLimits{};
}

}  // namespace

size_t minRenderBytes(const std::string& tag) {
  return openTag(tag, true).size() + std::strlen(kTooLarge) + closeTag(tag).size();
}

bool renderStateForPrompt(const json& state, const RenderOptions& options, RenderResult& out, Failure* failure) {
  Plan plan;
  if (auto problem = makePlan(state, options, plan)) {
    if (failure) *failure = Failure{Code::InvalidOptions, "renderStateForPrompt: " + *problem, {}};
    return false;
  }
  const std::string close = closeTag(options.tag);
  const size_t frame = openTag(options.tag, false).size() + close.size();
  RenderLimits limits = plan.configured;
  do {
    Renderer r(plan, limits, options.maxBytes - frame);
    if (!r.run(state)) continue;
    std::string text = openTag(options.tag, !r.cuts.empty());
    if (text.size() + r.body.size() + close.size() > options.maxBytes) continue;
    text += r.body;
    text += close;
    finish(r, plan, limits, std::move(text), out);
    return true;
  } while (shrink(limits, plan.configured));
  tooLarge(state, options.tag, out);
  return true;
}

}  // namespace agui_sync
