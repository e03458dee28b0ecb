// One render pass: see render/renderer.h. Exception-free: values are read
// through type checks and get_ptr() only.
#include "render/renderer.h"

#include <algorithm>
#include <charconv>

#include "json/ecma_number.h"
#include "json/json_pointer.h"
#include "json/utf16_order.h"
#include "json/utf8.h"
#include "render/prompt_text.h"

namespace agui_sync::render {

namespace {

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

}  // namespace

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
// index order (the trie keeps index tokens in numeric order), never cut (there
// are at most as many as pointers).
bool Renderer::partialArray(const json::array_t& a, const PathNode* t, size_t level, bool inUntrusted) {
  body += '[';
  size_t shown = 0;
  for (const auto& [token, index] : t->children) {
    const PathNode& child = trie_.at(index);
    size_t i = 0;
    if (full_) break;
    if (child.exclude || !(child.include || child.includeBelow) || !parseArrayIndex(token, i) || i >= a.size())
      continue;
    if (!child.include && !a[i].is_structured()) continue;
    path_.push_back({nullptr, i});
    if (partialChild(a[i], &child, level, inUntrusted, shown)) ++shown;
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
  entries.push_back({&m, t, reservedKey(m.first)});
}

// RFC 8785 order of the rendered names. nlohmann's map is in UTF-8 byte order,
// which differs only around U+E000-FFFF vs astral characters and for renamed
// keys, so the check usually finds the entries sorted already. A renamed name
// is spelled out only when it meets one that is not (reserved keys are rare).
void Renderer::sortEntries(std::vector<Entry>& entries) {
  const auto less = [](const Entry& x, const Entry& y) {
    if (x.renamed == y.renamed) return utf16Less(x.key(), y.key());
    return utf16Less(x.renamed ? "$" + x.key() : x.key(), y.renamed ? "$" + y.key() : y.key());
  };
  if (!std::is_sorted(entries.begin(), entries.end(), less)) std::sort(entries.begin(), entries.end(), less);
}

bool Renderer::member(const Entry& e, size_t level, bool selected, bool inUntrusted, bool first) {
  if (!first) body += ',';
  if (body.size() + e.nameSize() > cap_) {  // a key is never cut: give up before copying a huge one
    full_ = true;
    return true;
  }
  body += e.renamed ? "\"$" : "\"";
  appendPromptChars(body, e.key(), nullptr);
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

}  // namespace agui_sync::render
