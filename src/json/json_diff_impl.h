#pragma once
// The differ of json_diff.h as a template over the `to` side, so a binding can
// diff the core's JSON state against a value of its own language (a Python
// dict, bindings/python/py_diff_node.h) without writing it out as JSON text and
// parsing it back: one algorithm, one strategy, the same ops and bytes for
// either side. json_diff.cpp instantiates it for JSON (JsonNode).
//
// A Node (the `to` side) provides:
//   static bool equal(const json& a, const Node& b)  a == b as RFC 6902 (and
//                                nlohmann) compare: numbers by value, objects by member
//   bool isObject() const; bool isArray() const
//   size_t size() const; Node at(size_t i) const     (arrays)
//   members() const              a range of {first: key (std::string), second: Node}
//                                in key order (std::string's, i.e. UTF-8 byte order)
//   json value(bool& failed) const   the value as JSON; sets `failed` when it has none
//   size_t measure(size_t limit) const
//                                serializedSize() of that JSON (json_measure.h), some
//                                value > limit once it exceeds `limit`
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json/json_diff.h"
#include "json/json_measure.h"
#include "json/json_pointer.h"

namespace agui_sync {
namespace diff_detail {

using nlohmann::json;

// Bytes of one op object inside the patch array, including its separating comma.
inline size_t opBytes(size_t nameLen, size_t pathQuoted, const json* value, size_t valueLimit = SIZE_MAX) {
  // {"op":"<name>","path":<path>[,"value":<value>]},
  size_t n = 2 + 5 + nameLen + 2 + 1 + 7 + pathQuoted + 1;
  if (value) n += 1 + 8 + serializedSize(*value, valueLimit);
  return n;
}

inline bool isPrefix(const Tokens& prefix, const Tokens& path) {
  if (prefix.size() > path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i] != path[i]) return false;
  return true;
}

inline void appendEscaped(std::string& out, const std::string& token) {
  out.push_back('/');
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
}

template <class Node>
class Differ {
  static constexpr char kKeep = 0, kDel = 1, kIns = 2;

  // The `to` array from index `base` on, indexed like the pointer it replaces.
  struct Items {
    const Node& array;
    size_t base;
    Node operator[](size_t i) const { return array.at(base + i); }
  };

 public:
  Differ(const DiffOptions& options, json::array_t& ops) : opt_(options), ops_(ops) {
    // A guard below another guard is redundant: the outer one tests it already.
    for (const Tokens& g : options.guardedPaths) {
      bool covered = false;
      for (const Tokens& h : options.guardedPaths)
        if (&h != &g && isPrefix(h, g) && (h.size() < g.size() || &h < &g)) covered = true;
      if (!covered) guards_.push_back(&g);
    }
    trackTokens_ = !opt_.testAll && !guards_.empty();
  }

  // False when a value of `b` had no JSON form (Node::value failed): `ops` is
  // then incomplete and must not be used.
  bool run(const json& a, const Node& b) {
    if (!Node::equal(a, b)) diff(a, b);
    return !failed_;
  }

 private:
  // Precondition: a != b.
  void diff(const json& a, const Node& b) {
    const bool deepEnough = opt_.maxDepth != 0 && depth_ >= opt_.maxDepth;
    const bool sameKind = a.is_object() ? b.isObject() : a.is_array() && b.isArray();
    if (deepEnough || !sameKind) {
      // Numbers of different kinds (1 vs 1.5) and scalars land here too.
      emitReplace(a, b);
      return;
    }
    const size_t startOps = ops_.size(), startBytes = bytes_, startCount = count_;
    if (opt_.wholeArrays && a.is_array() && a.size() != b.size()) {
      emitReplace(a, b);
      return;
    }
    if (a.is_object()) diffObject(*a.get_ptr<const json::object_t*>(), b);
    else diffArray(*a.get_ptr<const json::array_t*>(), b);
    if (!opt_.collapse || count_ - startCount < 2 || failed_) return;
    const size_t subBytes = bytes_ - startBytes;
    const size_t replaceBytes = opBytes(7, quotedSize(path_), nullptr) + 1 + 8 + b.measure(subBytes);
    if (replaceBytes >= subBytes) return;
    ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(startOps), ops_.end());
    bytes_ = startBytes;
    count_ = startCount;
    emitReplace(a, b);
  }

  // Both sides' members in key order (the `to` side's as Node::members gives them).
  void diffObject(const json::object_t& a, const Node& to) {
    const auto b = to.members();
    auto ia = a.begin();
    auto ib = b.begin();
    while (ia != a.end() || ib != b.end()) {
      if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
        push(ia->first);
        emitRemove(ia->second);
        pop();
        ++ia;
      } else if (ia == a.end() || ib->first < ia->first) {
        push(ib->first);
        emitAdd(ib->second);
        pop();
        ++ib;
      } else {
        if (!Node::equal(ia->second, ib->second)) {
          push(ia->first);
          diff(ia->second, ib->second);
          pop();
        }
        ++ia;
        ++ib;
      }
    }
  }

  void child(size_t index, const json& a, const Node& b) {
    push(std::to_string(index));
    diff(a, b);
    pop();
  }

  void diffArray(const json::array_t& a, const Node& b) {
    const size_t n = a.size(), m = b.size();
    size_t p = 0;
    while (p < n && p < m && Node::equal(a[p], b.at(p))) ++p;
    size_t s = 0;
    while (s < n - p && s < m - p && Node::equal(a[n - 1 - s], b.at(m - 1 - s))) ++s;
    const size_t ln = n - p - s, lm = m - p - s;
    const json* A = a.data() + p;
    const Items B{b, p};
    if (opt_.wholeArrays) {
      for (size_t i = 0; i < ln; ++i)
        if (!Node::equal(A[i], B[i])) child(p + i, A[i], B[i]);
      return;
    }
    if (ln == lm) {
      // Index-wise pairing costs one (recursive) op per mismatch; an edit script
      // only helps when elements shifted (a removal plus an insertion elsewhere).
      std::vector<size_t> mismatches;
      std::vector<char> same(ln);  // the index pairs' equality, which the edit script's diagonal 0 reuses
      for (size_t i = 0; i < ln; ++i) {
        same[i] = Node::equal(A[i], B[i]);
        if (!same[i]) mismatches.push_back(i);
      }
      std::vector<char> script;
      if (mismatches.size() > 2 && editScript(A, ln, B, lm, script, &same) &&
          scriptOps(script) < mismatches.size()) {
        emitScript(script, A, B, p, n);
        return;
      }
      for (size_t i : mismatches) child(p + i, A[i], B[i]);
      return;
    }
    std::vector<char> script;
    if (editScript(A, ln, B, lm, script)) {
      emitScript(script, A, B, p, n);
      return;
    }
    blockAlign(A, ln, B, lm, p, s);
  }

  // Myers' O((N+M)D) shortest edit script (insertions and deletions) between
  // A[0..n) and B[0..m), into `script`. Gives up (false) beyond kMaxEdits edits or
  // a comparison budget linear in n + m, so a hostile array cannot make it quadratic.
  // `diagonal`, when given: A[i] == B[i] for every i, already known (equal
  // lengths), so walking diagonal 0 compares nothing again; the answer and the
  // budget are those of comparing.
  bool editScript(const json* A, size_t n, const Items& B, size_t m, std::vector<char>& script,
                  const std::vector<char>* diagonal = nullptr) {
    static constexpr ptrdiff_t kMaxEdits = 128;
    static constexpr ptrdiff_t kUnreached = -1;
    const ptrdiff_t N = static_cast<ptrdiff_t>(n), M = static_cast<ptrdiff_t>(m);
    const ptrdiff_t maxD = std::min(N + M, kMaxEdits);
    size_t budget = 8 * (n + m) + 2048;
    // trace[d][k + d] = furthest x on diagonal k (= x - y) after d edits.
    std::vector<std::vector<ptrdiff_t>> trace;
    auto get = [&](ptrdiff_t d, ptrdiff_t k) -> ptrdiff_t {
      if (d < 0 || k < -d || k > d) return kUnreached;
      return trace[static_cast<size_t>(d)][static_cast<size_t>(k + d)];
    };
    // Which neighbour diagonal the best path to (d, k) came from: +1 = an
    // insertion (down from k+1), -1 = a deletion (right from k-1), 0 = none.
    auto from = [&](ptrdiff_t d, ptrdiff_t k) -> int {
      const ptrdiff_t up = get(d - 1, k + 1), left = get(d - 1, k - 1);
      const bool canDown = up != kUnreached && up - (k + 1) < M;
      const bool canRight = left != kUnreached && left < N;
      if (canDown && (!canRight || left < up)) return 1;
      return canRight ? -1 : 0;
    };
    for (ptrdiff_t d = 0; d <= maxD; ++d) {
      trace.emplace_back(static_cast<size_t>(2 * d + 1), kUnreached);
      for (ptrdiff_t k = -d; k <= d; k += 2) {
        ptrdiff_t x = 0;
        if (d > 0) {
          const int dir = from(d, k);
          if (dir == 0) continue;
          x = dir > 0 ? get(d - 1, k + 1) : get(d - 1, k - 1) + 1;
        }
        ptrdiff_t y = x - k;
        while (x < N && y < M) {
          if (budget-- == 0) return false;
          if (diagonal != nullptr && k == 0 ? !(*diagonal)[static_cast<size_t>(x)] : !Node::equal(A[x], B[y])) break;
          ++x, ++y;
        }
        trace.back()[static_cast<size_t>(k + d)] = x;
        if (x >= N && y >= M) {
          backtrack(trace.size() - 1, k, N, M, get, from, script);
          return true;
        }
      }
    }
    return false;
  }

  template <typename Get, typename From>
  static void backtrack(size_t D, ptrdiff_t k, ptrdiff_t x, ptrdiff_t y, Get& get, From& from,
                        std::vector<char>& script) {
    script.clear();
    for (ptrdiff_t d = static_cast<ptrdiff_t>(D); d > 0; --d) {
      const int dir = from(d, k);
      const ptrdiff_t pk = k + dir;
      const ptrdiff_t px = get(d - 1, pk), py = px - pk;
      const ptrdiff_t sx = dir > 0 ? px : px + 1;  // where the snake after the edit starts
      for (; x > sx; --x, --y) script.push_back(kKeep);
      script.push_back(dir > 0 ? kIns : kDel);
      x = px, y = py, k = pk;
    }
    for (; x > 0; --x) script.push_back(kKeep);
    std::reverse(script.begin(), script.end());
  }

  // Ops the script will emit: per run of edits between kept elements, the
  // larger of its deletions and insertions (pairs become in-place diffs).
  static size_t scriptOps(const std::vector<char>& script) {
    size_t ops = 0, dels = 0, ins = 0;
    for (size_t i = 0; i <= script.size(); ++i) {
      if (i == script.size() || script[i] == kKeep) {
        ops += std::max(dels, ins);
        dels = ins = 0;
      } else {
        (script[i] == kDel ? dels : ins)++;
      }
    }
    return ops;
  }

  // Emits `script` over the middle A/B that starts at index p of an array of
  // length n, left to right, tracking how earlier edits shifted the indices.
  void emitScript(const std::vector<char>& script, const json* A, const Items& B, size_t p, size_t n) {
    size_t ai = 0, bi = 0, len = n;
    ptrdiff_t shift = 0;
    for (size_t i = 0; i < script.size();) {
      if (script[i] == kKeep) {
        ++ai, ++bi, ++i;
        continue;
      }
      size_t dels = 0, ins = 0;
      for (; i < script.size() && script[i] != kKeep; ++i) (script[i] == kDel ? dels : ins)++;
      const size_t k = std::min(dels, ins);
      const size_t cur = static_cast<size_t>(static_cast<ptrdiff_t>(p + ai) + shift);
      for (size_t q = 0; q < k; ++q)
        if (!Node::equal(A[ai + q], B[bi + q])) child(cur + q, A[ai + q], B[bi + q]);
      for (size_t j = dels; j-- > k;) {  // from the highest index down
        push(std::to_string(cur + j));
        emitRemove(A[ai + j]);
        pop();
      }
      for (size_t j = k; j < ins; ++j) {
        const size_t at = cur + j;
        push(at == len - (dels - k) + (j - k) ? std::string("-") : std::to_string(at));
        emitAdd(B[bi + j]);
        pop();
      }
      len = len - dels + ins;
      shift += static_cast<ptrdiff_t>(ins) - static_cast<ptrdiff_t>(dels);
      ai += dels, bi += ins;
    }
  }

  // Fallback when the edit script is too long: one contiguous block of d
  // elements is inserted (lm > ln) or removed (ln > lm). Pair i of the
  // k = min(ln, lm) kept pairs is (A[i], B[i]) before the block position t and
  // shifted by d after it; pick t with the most equal pairs (ties: at the end).
  void blockAlign(const json* A, size_t ln, const Items& B, size_t lm, size_t p, size_t s) {
    const bool grow = lm > ln;
    const size_t k = grow ? ln : lm, d = grow ? lm - ln : ln - lm;
    // head[i]: the shorter side's i-th equals the longer side's i-th; tail[i]: its (i + d)-th.
    std::vector<char> head(k), tail(k);
    for (size_t i = 0; i < k; ++i) {
      head[i] = Node::equal(A[i], B[i]);
      tail[i] = grow ? Node::equal(A[i], B[i + d]) : Node::equal(A[i + d], B[i]);
    }
    size_t best = k, bestScore = 0, score = 0;
    for (size_t i = 0; i < k; ++i) score += head[i];  // t = k: every pair unshifted
    bestScore = score;
    for (size_t t = k; t-- > 0;) {  // moving t down turns pair t from head- to tail-aligned
      score = score - head[t] + tail[t];
      if (score > bestScore) bestScore = score, best = t;
    }
    const size_t t = best;
    // Pairs first, at their current (unshifted) indices.
    for (size_t i = 0; i < k; ++i) {
      const bool before = i < t;
      if (before ? head[i] : tail[i]) continue;
      if (grow) child(p + i, A[i], before ? B[i] : B[i + d]);
      else child(before ? p + i : p + i + d, before ? A[i] : A[i + d], B[i]);
    }
    if (grow) {
      const bool append = s == 0 && t == k;
      for (size_t j = 0; j < d; ++j) {
        push(append ? std::string("-") : std::to_string(p + t + j));
        emitAdd(B[t + j]);
        pop();
      }
    } else {
      for (size_t j = d; j-- > 0;) {
        push(std::to_string(p + t + j));
        emitRemove(A[t + j]);
        pop();
      }
    }
  }

  // --- emission ---------------------------------------------------------------

  void push(const std::string& token) {
    marks_.push_back(path_.size());
    appendEscaped(path_, token);
    if (trackTokens_) tokens_.push_back(token);
    ++depth_;
  }
  void pop() {
    path_.resize(marks_.back());
    marks_.pop_back();
    if (trackTokens_) tokens_.pop_back();
    --depth_;
  }

  static json makeOp(const char* name, const std::string& path, const json* value) {
    json op(json::value_t::object);
    auto& o = *op.get_ptr<json::object_t*>();
    o.emplace("op", name);
    o.emplace("path", path);
    if (value) o.emplace("value", *value);
    return op;
  }
  static json makeOp(const char* name, const std::string& path, json&& value) {
    json op = makeOp(name, path, nullptr);
    op.get_ptr<json::object_t*>()->emplace("value", std::move(value));
    return op;
  }

  void guardTests(const json& old) {
    if (opt_.testAll) {
      ops_.push_back(makeOp("test", path_, &old));
      return;
    }
    if (guards_.empty()) return;
    for (const Tokens* g : guards_) {
      if (isPrefix(*g, tokens_)) {  // at or below a guarded pointer: test what is overwritten
        ops_.push_back(makeOp("test", path_, &old));
        return;
      }
    }
    for (const Tokens* g : guards_) {  // above guarded pointers: test each one overwritten
      if (!isPrefix(tokens_, *g)) continue;
      Tokens rest(g->begin() + static_cast<std::ptrdiff_t>(tokens_.size()), g->end());
      if (const json* v = resolvePointer(old, rest, rest.size())) ops_.push_back(makeOp("test", formatPointer(*g), v));
    }
  }

  void emitReplace(const json& old, const Node& to) {
    json value = to.value(failed_);
    guardTests(old);
    bytes_ += opBytes(7, quotedSize(path_), &value);
    ops_.push_back(makeOp("replace", path_, std::move(value)));
    ++count_;
  }
  void emitRemove(const json& old) {
    guardTests(old);
    ops_.push_back(makeOp("remove", path_, nullptr));
    bytes_ += opBytes(6, quotedSize(path_), nullptr);
    ++count_;
  }
  void emitAdd(const Node& to) {
    json value = to.value(failed_);
    bytes_ += opBytes(3, quotedSize(path_), &value);
    ops_.push_back(makeOp("add", path_, std::move(value)));
    ++count_;
  }

  const DiffOptions& opt_;
  json::array_t& ops_;
  std::vector<const Tokens*> guards_;
  bool trackTokens_ = false;
  std::string path_;
  std::vector<size_t> marks_;
  Tokens tokens_;
  size_t depth_ = 0;
  size_t bytes_ = 0;  // estimated serialized bytes of the non-test ops emitted
  size_t count_ = 0;  // non-test ops emitted
  bool failed_ = false;  // a value of `to` had no JSON form
};

}  // namespace diff_detail

struct JsonMembers;

// The `to` side as JSON: what diffPatch()/appendDiff() use.
struct JsonNode {
  const nlohmann::json* v;

  static bool equal(const nlohmann::json& a, const JsonNode& b) { return a == *b.v; }
  bool isObject() const { return v->is_object(); }
  bool isArray() const { return v->is_array(); }
  size_t size() const { return v->size(); }
  JsonNode at(size_t i) const { return JsonNode{&(*v->get_ptr<const nlohmann::json::array_t*>())[i]}; }
  JsonMembers members() const;
  nlohmann::json value(bool&) const { return *v; }
  size_t measure(size_t limit) const { return serializedSize(*v, limit); }
};

// An object's members as {key, JsonNode}, in the object's (key) order.
struct JsonMembers {
  struct Member {
    const std::string& first;
    JsonNode second;
  };
  struct Iter {
    nlohmann::json::object_t::const_iterator it;
    struct Arrow {
      Member m;
      const Member* operator->() const { return &m; }
    };
    Arrow operator->() const { return Arrow{Member{it->first, JsonNode{&it->second}}}; }
    Iter& operator++() { return ++it, *this; }
    bool operator==(const Iter& o) const { return it == o.it; }
    bool operator!=(const Iter& o) const { return it != o.it; }
  };
  const nlohmann::json::object_t& o;
  Iter begin() const { return Iter{o.begin()}; }
  Iter end() const { return Iter{o.end()}; }
};

inline JsonMembers JsonNode::members() const { return JsonMembers{*v->get_ptr<const nlohmann::json::object_t*>()}; }

// appendDiff() with any Node as `to`. False (and `ops` unusable) when a value
// of `to` had no JSON form.
template <class Node>
bool appendDiffOf(const nlohmann::json& from, const Node& to, const DiffOptions& options,
                  nlohmann::json::array_t& ops) {
  diff_detail::Differ<Node> d(options, ops);
  return d.run(from, to);
}

}  // namespace agui_sync
