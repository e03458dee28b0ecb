#pragma once
// Oracles for renderStateForPrompt, shared by tests/native/test_prompt_render.cpp
// and fuzz/fuzz_prompt_render.cpp. Written from the contract in
// include/agui_sync/prompt_render.h, independently of src/render/: its own UTF-8
// decoder, pointer matching by token lists, its own lists of escaped and
// White_Space characters, and a reference that builds the expected value as a
// nlohmann value (not text). Only canonicalJson() (a separately tested public
// API) is used, to size scalars for droppedBytes.
//
// checkRender() returns "" when every invariant holds, else what broke:
//  (1) the block, stripped of its first and last line, parses to exactly the
//      reference's value (numbers compared as the doubles JCS makes of them);
//      truncations and untrusted paths equal the reference's;
//  (2) no closing tag, fence or line start can come from the state: exactly two
//      line breaks (around the JSON), "</" only in the closing tag, no "```", no
//      raw escaped character anywhere in the JSON, and outside JSON strings only
//      JSON tokens;
//  (3) bytes == text.size() <= maxBytes; keys in UTF-16 order;
//  (5) with a datamark, every untrusted string value starts with it and holds
//      no White_Space; trusted strings equal their source (so carry no mark
//      the source did not have).
// (4), a second run giving the same bytes, is the caller's (it needs the renderer).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <agui_sync/canonical_json.h>
#include <agui_sync/prompt_render.h>

#include "../support/whatwg_utf8.h"

namespace prompt_oracle {

using json = nlohmann::json;
using Tokens = std::vector<std::string>;

// ---------------------------------------------------------------------------
// Characters (restated from the contract)
// ---------------------------------------------------------------------------

struct Unit {
  uint32_t cp;  // 0xFFFD for an invalid byte
  size_t len;   // source bytes
};

// Strict UTF-8 (Unicode table 3-7): each byte that does not start a
// well-formed sequence is a unit of its own.
inline std::vector<Unit> decode(const std::string& s, size_t stopAfterBytes = SIZE_MAX) {
  std::vector<Unit> out;
  size_t i = 0;
  while (i < s.size() && i < stopAfterBytes) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    uint32_t cp = 0;
    if (c < 0x80) len = 1, cp = c;
    else if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
    else if (c == 0xE0) len = 3, lo = 0xA0, cp = c & 0x0F;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3, cp = c & 0x0F;
    else if (c == 0xED) len = 3, hi = 0x9F, cp = c & 0x0F;
    else if (c == 0xF0) len = 4, lo = 0x90, cp = c & 0x07;
    else if (c >= 0xF1 && c <= 0xF3) len = 4, cp = c & 0x07;
    else if (c == 0xF4) len = 4, hi = 0x8F, cp = c & 0x07;
    bool ok = len != 0 && s.size() - i >= len;
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char ck = b(k);
      const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (ck < l || ck > h) ok = false;
      else cp = (cp << 6) | (ck & 0x3F);
    }
    if (!ok) out.push_back({0xFFFD, 1}), ++i;
    else out.push_back({cp, len}), i += len;
  }
  return out;
}

inline bool validUtf8(const std::string& s) {
  size_t at = 0;
  for (const Unit& u : decode(s)) {
    if (u.cp == 0xFFFD && u.len == 1 && static_cast<unsigned char>(s[at]) >= 0x80) return false;
    at += u.len;
  }
  return true;
}

inline bool between(uint32_t cp, uint32_t lo, uint32_t hi) { return cp >= lo && cp <= hi; }

// Characters that must never appear raw in the JSON line (they are escaped).
inline bool mustEscape(uint32_t cp) {
  if (cp < 0x20 || between(cp, 0x7F, 0x9F)) return true;
  if (cp == '"' || cp == '\\' || cp == '<' || cp == '>' || cp == '&' || cp == '`') return true;
  if ((cp & 0xFFFE) == 0xFFFE || between(cp, 0xFDD0, 0xFDEF)) return true;
  static const std::pair<uint32_t, uint32_t> ranges[] = {
      {0xAD, 0xAD},       {0x34F, 0x34F},     {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},
      {0x70F, 0x70F},     {0x890, 0x891},     {0x8E2, 0x8E2},     {0x115F, 0x1160},   {0x17B4, 0x17B5},
      {0x180B, 0x180F},   {0x1FEF, 0x1FEF},   {0xFE60, 0xFE60},   {0xFE64, 0xFE65},   {0xFF06, 0xFF06},
      {0xFF1C, 0xFF1C},   {0xFF1E, 0xFF1E},   {0xFF40, 0xFF40},   {0x200B, 0x200F},   {0x2028, 0x2029},   {0x202A, 0x202E},   {0x2060, 0x206F},
      {0x3164, 0x3164},   {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFFB},
      {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
      {0xE0000, 0xE0FFF}};
  for (const auto& r : ranges)
    if (between(cp, r.first, r.second)) return true;
  return false;
}

inline bool whiteSpace(uint32_t cp) {
  return between(cp, 0x09, 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         between(cp, 0x2000, 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

inline std::u16string toUtf16(const std::string& s) {
  std::u16string out;
  for (const Unit& u : decode(s)) {
    if (u.cp >= 0x10000) {
      out += static_cast<char16_t>(0xD800 + ((u.cp - 0x10000) >> 10));
      out += static_cast<char16_t>(0xDC00 + ((u.cp - 0x10000) & 0x3FF));
    } else {
      out += static_cast<char16_t>(u.cp);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Pointers and sizes
// ---------------------------------------------------------------------------

inline Tokens parsePointer(const std::string& p) {
  Tokens out;
  if (p.empty()) return out;
  std::string token;
  for (size_t i = 1; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '/') {
      out.push_back(token);
      token.clear();
    } else if (p[i] == '~') {
      token += p[++i] == '0' ? '~' : '/';
    } else {
      token += p[i];
    }
  }
  return out;
}

inline std::string formatPointer(const Tokens& path) {
  std::string out;
  for (const auto& t : path) {
    out += '/';
    for (char c : t) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  }
  return out;
}

inline bool isPrefix(const Tokens& p, const Tokens& path) {
  return p.size() <= path.size() && std::equal(p.begin(), p.end(), path.begin());
}

// Length of the RFC 8785 text, iteratively (values may nest 10,000 deep).
inline size_t canonSize(const json& v) {
  size_t total = 0;
  std::vector<const json*> todo{&v};
  while (!todo.empty()) {
    const json* x = todo.back();
    todo.pop_back();
    if (x->is_array()) {
      total += x->empty() ? 2 : 1 + x->size();
      for (const auto& item : *x) todo.push_back(&item);
    } else if (x->is_object()) {
      total += x->empty() ? 2 : 1 + 2 * x->size();
      for (auto it = x->begin(); it != x->end(); ++it) {
        total += agui_sync::canonicalJson(json(it.key())).size();
        todo.push_back(&it.value());
      }
    } else {
      total += agui_sync::canonicalJson(*x).size();
    }
  }
  return total;
}

// ---------------------------------------------------------------------------
// The reference
// ---------------------------------------------------------------------------

using Cut = std::tuple<std::string, std::string, size_t>;  // path, reason, droppedBytes

struct Expected {
  json value;
  std::vector<Cut> cuts;
  std::vector<std::string> untrusted;
};

class Reference {
 public:
  Reference(const agui_sync::RenderOptions& o, const agui_sync::RenderLimits& applied) : o_(o), lim_(applied) {
    for (const auto& p : o.include) include_.push_back(parsePointer(p));
    for (const auto& p : o.exclude) exclude_.push_back(parsePointer(p));
    for (const auto& p : o.untrusted) untrusted_.push_back(parsePointer(p));
  }

  Expected run(const json& state) {
    Tokens path;
    bool kept = true;
    if (excluded(path)) out_.value = nullptr;
    else out_.value = node(state, path, 0, false, kept);
    return out_;
  }

 private:
  bool selected(const Tokens& path) const {
    if (include_.empty()) return true;
    for (const auto& p : include_)
      if (isPrefix(p, path)) return true;
    return false;
  }
  bool onTheWay(const Tokens& path) const {
    for (const auto& p : include_)
      if (p.size() > path.size() && isPrefix(path, p)) return true;
    return false;
  }
  bool excluded(const Tokens& path) const {
    for (const auto& p : exclude_)
      if (isPrefix(p, path)) return true;
    return false;
  }
  bool untrustedAt(const Tokens& path) const {
    return std::find(untrusted_.begin(), untrusted_.end(), path) != untrusted_.end();
  }

  json node(const json& v, Tokens& path, size_t level, bool inU, bool& kept) {
    const bool wrap = !inU && untrustedAt(path);
    json inner = content(v, path, level, inU || wrap, kept);
    if (!wrap) return inner;
    if (kept) out_.untrusted.push_back(formatPointer(path));
    return json{{"$untrusted", std::move(inner)}};
  }

  json content(const json& v, Tokens& path, size_t level, bool inU, bool& kept) {
    const bool sel = selected(path);
    kept = true;
    if (v.is_structured() && !v.empty() && level >= lim_.maxDepth) {
      out_.cuts.emplace_back(formatPointer(path), level >= o_.maxDepth ? "depth" : "budget", canonSize(v));
      return json{{"$truncated", v.is_array() ? "array nested too deep" : "object nested too deep"}};
    }
    if (v.is_array()) return array(v, path, level, inU, sel, kept);
    if (v.is_object()) return object(v, path, level, inU, sel, kept);
    if (!sel) return nullptr;
    if (v.is_string()) return string(v.get<std::string>(), path, inU);
    if (v.is_number()) {
      const double d = v.is_number_unsigned() ? static_cast<double>(v.get<uint64_t>())
                       : v.is_number_integer() ? static_cast<double>(v.get<int64_t>())
                                               : v.get<double>();
      return std::isfinite(d) ? json(d) : json(nullptr);
    }
    if (v.is_boolean()) return v;
    return nullptr;
  }

  // Whether a child is shown, and as a selected or on-the-way node.
  bool wanted(const json& child, const Tokens& path, bool parentSelected) const {
    if (excluded(path)) return false;
    return parentSelected || selected(path) || (onTheWay(path) && child.is_structured());
  }

  json array(const json& v, Tokens& path, size_t level, bool inU, bool sel, bool& kept) {
    json out = json::array();
    std::vector<size_t> omitted;
    for (size_t i = 0; i < v.size(); ++i) {
      path.push_back(std::to_string(i));
      if (wanted(v[i], path, sel)) {
        if (sel && out.size() >= lim_.maxArrayItems) {
          omitted.push_back(i);
        } else {
          bool childKept = true;
          json child = node(v[i], path, level + 1, inU, childKept);
          if (childKept) out.push_back(std::move(child));
        }
      }
      path.pop_back();
    }
    if (!omitted.empty()) {
      size_t dropped = 0;
      for (size_t i : omitted) dropped += canonSize(v[i]) + 1;
      const size_t total = out.size() + omitted.size();
      out_.cuts.emplace_back(formatPointer(path), total > o_.maxArrayItems ? "array" : "budget", dropped);
      out.push_back(json{{"$truncated", std::to_string(omitted.size()) + (omitted.size() == 1 ? " more item" : " more items")}});
    }
    kept = sel || !out.empty() || path.empty();
    return out;
  }

  static bool reserved(const std::string& k) {
    const size_t d = k.find_first_not_of('$');
    if (d == 0 || d == std::string::npos) return false;
    return k.compare(d, std::string::npos, "untrusted") == 0 || k.compare(d, std::string::npos, "truncated") == 0;
  }

  json object(const json& v, Tokens& path, size_t level, bool inU, bool sel, bool& kept) {
    std::vector<std::pair<std::string, const json*>> members;  // (rendered name, value) in source order
    std::vector<std::string> source;
    for (auto it = v.begin(); it != v.end(); ++it) {
      path.push_back(it.key());
      if (wanted(it.value(), path, sel)) {
        if (!validUtf8(it.key())) {
          std::string p;
          for (const Unit& u : decode(formatPointer(path))) agui_test::appendCodePoint(p, u.cp);
          out_.cuts.emplace_back(p, "key", canonSize(json(it.key())) + 1 + canonSize(it.value()) + 1);
        } else {
          members.emplace_back(reserved(it.key()) ? "$" + it.key() : it.key(), &it.value());
          source.push_back(it.key());
        }
      }
      path.pop_back();
    }
    std::vector<size_t> order(members.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return toUtf16(members[a].first) < toUtf16(members[b].first); });
    const size_t keep = sel && lim_.maxObjectMembers ? std::min(lim_.maxObjectMembers, order.size()) : order.size();
    json out = json::object();
    for (size_t k = 0; k < keep; ++k) {
      const size_t i = order[k];
      path.push_back(source[i]);
      bool childKept = true;
      json child = node(*members[i].second, path, level + 1, inU, childKept);
      if (childKept) out[members[i].first] = std::move(child);
      path.pop_back();
    }
    if (keep < order.size()) {
      size_t dropped = 0;
      for (size_t k = keep; k < order.size(); ++k)
        dropped += canonSize(json(source[order[k]])) + 1 + canonSize(*members[order[k]].second) + 1;
      out_.cuts.emplace_back(formatPointer(path), "budget", dropped);
      out["$truncated"] = std::to_string(order.size() - keep) + (order.size() - keep == 1 ? " more member" : " more members");
    }
    kept = sel || !out.empty() || path.empty();
    return out;
  }

  json string(const std::string& s, const Tokens& path, bool inU) {
    std::string text;
    size_t used = 0;
    const bool mark = inU && !o_.datamark.empty();
    if (mark) text += o_.datamark;
    for (const Unit& u : decode(s, lim_.maxStringBytes + 1)) {
      if (used + u.len > lim_.maxStringBytes) break;
      used += u.len;
      if (mark && whiteSpace(u.cp)) text += o_.datamark;
      else agui_test::appendCodePoint(text, u.cp);
    }
    if (used < s.size()) {
      const size_t dropped = s.size() - used;
      out_.cuts.emplace_back(formatPointer(path), s.size() > o_.maxStringBytes ? "string" : "budget", dropped);
      text += "...[truncated " + std::to_string(dropped) + " bytes]";
    }
    return text;
  }

  const agui_sync::RenderOptions& o_;
  agui_sync::RenderLimits lim_;
  std::vector<Tokens> include_, exclude_, untrusted_;
  Expected out_;
};

inline Expected expected(const json& state, const agui_sync::RenderOptions& o, const agui_sync::RenderLimits& applied) {
  if (applied.maxDepth == 0) {  // the whole state did not fit
    Expected e;
    e.value = json{{"$truncated", "state too large"}};
    e.cuts.emplace_back("", "budget", canonSize(state));
    return e;
  }
  return Reference(o, applied).run(state);
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

// Numbers as doubles (the renderer prints what JCS would).
inline bool sameValue(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto jt = b.find(it.key());
      if (jt == b.end() || !sameValue(it.value(), *jt)) return false;
    }
    return true;
  }
  return a == b;
}

// Scans the JSON line: returns "" or the first problem. Outside strings only
// JSON's structural characters and literal/number characters; inside strings
// only well-formed escapes; nowhere a raw character the contract escapes.
inline std::string scanJsonLine(const std::string& line) {
  size_t at = 0;
  bool inString = false, escape = false;
  for (const Unit& u : decode(line)) {
    const size_t pos = at;
    at += u.len;
    if (u.cp == 0xFFFD && u.len == 1 && static_cast<unsigned char>(line[pos]) >= 0x80)
      return "invalid UTF-8 at byte " + std::to_string(pos);
    if (inString && escape) {
      if (std::string("\"\\/bfnrtu").find(static_cast<char>(u.cp)) == std::string::npos)
        return "bad escape at byte " + std::to_string(pos);
      escape = false;
      continue;
    }
    if (u.cp == '"') {
      inString = !inString;
      continue;
    }
    if (inString && u.cp == '\\') {
      escape = true;
      continue;
    }
    if (mustEscape(u.cp)) return "raw U+" + std::to_string(u.cp) + " at byte " + std::to_string(pos);
    if (!inString && std::string("{}[],:-+.eE0123456789truefalsn").find(static_cast<char>(u.cp)) == std::string::npos)
      return "outside a string: U+" + std::to_string(u.cp) + " at byte " + std::to_string(pos);
  }
  return inString ? "unterminated string" : "";
}

// Splits the block; returns "" or the problem.
inline std::string splitBlock(const std::string& text, const std::string& tag, bool& truncatedAttr, std::string& line) {
  const std::string open = "<" + tag + " format=\"json\">\n";
  const std::string openCut = "<" + tag + " format=\"json\" truncated=\"true\">\n";
  const std::string close = "\n</" + tag + ">";
  truncatedAttr = text.compare(0, openCut.size(), openCut) == 0;
  const size_t head = truncatedAttr ? openCut.size() : open.size();
  if (!truncatedAttr && text.compare(0, open.size(), open) != 0) return "does not start with the open tag";
  if (text.size() < head + close.size() || text.compare(text.size() - close.size(), close.size(), close) != 0)
    return "does not end with the closing tag";
  if (std::count(text.begin(), text.end(), '\n') != 2) return "line breaks other than the two around the JSON";
  if (text.find('\r') != std::string::npos) return "a carriage return";
  if (text.find("</") != text.size() - close.size() + 1) return "a closing tag before the end";
  if (text.find("```") != std::string::npos) return "a code fence";
  line = text.substr(head, text.size() - head - close.size());
  return "";
}

inline std::string keyOrder(const nlohmann::ordered_json& v) {
  if (v.is_array()) {
    for (const auto& item : v)
      if (auto e = keyOrder(item); !e.empty()) return e;
  } else if (v.is_object()) {
    std::u16string prev;
    bool first = true;
    size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      const bool marker = it.key() == "$truncated" && i + 1 == v.size() && v.size() > 1;
      if (!marker) {
        const std::u16string k = toUtf16(it.key());
        if (!first && !(prev < k)) return "keys out of UTF-16 order at '" + it.key() + "'";
        prev = k;
        first = false;
      }
      if (auto e = keyOrder(it.value()); !e.empty()) return e;
    }
  }
  return "";
}

// (5): strings under a wrapper start with the mark and hold no White_Space
// (a truncation suffix, which is the renderer's own text, aside).
inline std::string datamarked(const json& v, const std::string& mark, bool inU) {
  if (v.is_object()) {
    const bool wrapper = v.size() == 1 && v.contains("$untrusted");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "$truncated") continue;
      if (auto e = datamarked(it.value(), mark, inU || wrapper); !e.empty()) return e;
    }
  } else if (v.is_array()) {
    for (const auto& item : v)
      if (auto e = datamarked(item, mark, inU); !e.empty()) return e;
  } else if (v.is_string() && inU) {
    std::string s = v.get<std::string>();
    const size_t suffix = s.rfind("...[truncated ");
    if (suffix != std::string::npos) s.resize(suffix);
    if (s.compare(0, mark.size(), mark) != 0) return "untrusted string without the datamark: " + s;
    for (const Unit& u : decode(s))
      if (whiteSpace(u.cp)) return "untrusted string with whitespace: " + s;
  }
  return "";
}

inline std::vector<Cut> sorted(std::vector<Cut> v) {
  std::sort(v.begin(), v.end());
  return v;
}

inline std::string checkRender(const json& state, const agui_sync::RenderOptions& o, const agui_sync::RenderResult& r) {
  if (r.bytes != r.text.size()) return "bytes != text.size()";
  if (r.bytes > o.maxBytes) return "over maxBytes";
  bool truncatedAttr = false;
  std::string line;
  if (auto e = splitBlock(r.text, o.tag, truncatedAttr, line); !e.empty()) return e;
  if (truncatedAttr != !r.truncated.empty()) return "truncated attribute disagrees with the list";
  if (auto e = scanJsonLine(line); !e.empty()) return e;
  const json parsed = json::parse(line, nullptr, false);
  if (parsed.is_discarded()) return "the JSON line does not parse";
  if (auto e = keyOrder(nlohmann::ordered_json::parse(line)); !e.empty()) return e;
  const Expected want = expected(state, o, r.applied);
  if (!sameValue(parsed, want.value)) return "value differs from the reference: got " + parsed.dump() + " want " + want.value.dump();
  std::vector<Cut> got;
  for (const auto& t : r.truncated) got.emplace_back(t.path, t.reason, t.droppedBytes);
  if (sorted(got) != sorted(want.cuts)) return "truncations differ from the reference";
  std::vector<std::string> gu = r.untrustedPaths, wu = want.untrusted;
  std::sort(gu.begin(), gu.end());
  std::sort(wu.begin(), wu.end());
  if (gu != wu) return "untrustedPaths differ from the reference";
  if (!o.datamark.empty()) return datamarked(parsed, o.datamark, false);
  return "";
}

}  // namespace prompt_oracle
