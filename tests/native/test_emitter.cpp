// The emitter (backend half): json_diff, StateEmitter stamping / digest /
// snapshot fallback / guards / replay, and round-trip properties against the
// receiving SyncEngine.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <agui_sync/canonical_json.h>
#include "wire/wire.h"
#include "json/json_diff.h"
#include "json/json_measure.h"
#include "json/json_patch.h"
#include "random_state.h"
#include <agui_sync/state_emitter.h>
#include <agui_sync/sync_engine.h>

using nlohmann::json;
using agui_sync::DiffOptions;
using agui_sync::EmitterOptions;
using agui_sync::kWireKey;
using agui_sync::StateEmitter;
using agui_sync::SyncEngine;
using agui_sync::SyncStatus;
using agui_test::RandomState;

namespace {

// Tiny states make every delta larger than a snapshot; pad them so deltas win.
json padded(json s) {
  s["pad"] = std::string(300, 'p');
  return s;
}

json op(const char* name, const std::string& path) { return json{{"op", name}, {"path", path}}; }
json op(const char* name, const std::string& path, json value) {
  return json{{"op", name}, {"path", path}, {"value", std::move(value)}};
}

// diffPatch, checked to apply to `from` and give exactly `to`.
json diffChecked(const json& from, const json& to, const DiffOptions& o = DiffOptions{}) {
  json ops = agui_sync::diffPatch(from, to, o);
  json doc = from;
  agui_sync::PatchResult r = agui_sync::applyPatch(doc, ops);
  INFO("from " << from.dump() << "\nto   " << to.dump() << "\nops  " << ops.dump() << "\n" << r.message);
  REQUIRE(r.ok());
  REQUIRE(doc == to);
  return ops;
}

DiffOptions guarded(std::vector<std::string> pointers) {
  DiffOptions o;
  for (const auto& p : pointers) {
    agui_sync::Tokens t;
    std::string err;
    REQUIRE(agui_sync::parsePointer(p, t, err));
    o.guardedPaths.push_back(t);
  }
  return o;
}

std::vector<agui_sync::Outcome> feed(SyncEngine& eng, const std::string& bytes) {
  std::vector<agui_sync::Outcome> out;
  eng.feed(bytes, out);
  return out;
}

bool hasResync(const std::vector<agui_sync::Outcome>& out, agui_sync::Code* reason = nullptr) {
  for (const auto& o : out)
    if (o.kind == agui_sync::OutcomeKind::Resync || o.kind == agui_sync::OutcomeKind::Error) {
      if (reason) *reason = o.reason;
      return true;
    }
  return false;
}

// Feeds a catch-up and requires that it healed the receiver completely: no
// resync, synced, the sender's state and seq, nothing held.
void feedAndRequireHealed(SyncEngine& eng, const StateEmitter& em, const std::vector<json>& catchUp, uint32_t seed,
                          int step) {
  auto out = feed(eng, StateEmitter::encodeAll(catchUp));
  agui_sync::Code reason{};
  if (hasResync(out, &reason) || eng.status() != SyncStatus::Synced || eng.state() != em.state() ||
      eng.lastSeq() != em.seq())
    FAIL("seed " << seed << " step " << step << ": not healed (" << reason << ", "
                 << agui_sync::statusName(eng.status()) << ")");
  REQUIRE(eng.pendingCount() == 0);
}

std::set<std::string> keysOf(const json& obj) {
  std::set<std::string> k;
  for (auto it = obj.begin(); it != obj.end(); ++it) k.insert(it.key());
  return k;
}

// Every array in `doc`, depth first.
void collectArrays(json& doc, std::vector<json*>& out) {
  if (doc.is_array()) out.push_back(&doc);
  if (doc.is_structured())
    for (auto& v : doc) collectArrays(v, out);
}

// One array-shaped edit of the kind agents make (and some they rarely do).
void mutateArray(RandomState& rs, json& doc) {
  std::vector<json*> arrays;
  collectArrays(doc, arrays);
  if (arrays.empty()) {
    if (doc.is_object()) doc["list"] = json::array({rs.scalar(), rs.scalar(), rs.scalar()});
    return;
  }
  json& arr = *arrays[static_cast<size_t>(rs.uniform(0, static_cast<int>(arrays.size()) - 1))];
  auto& a = *arr.get_ptr<json::array_t*>();
  const int n = static_cast<int>(a.size());
  switch (rs.uniform(0, 7)) {
    case 0: {  // insert a block somewhere, maybe also edit another element
      const int at = rs.uniform(0, n), k = rs.uniform(1, 3);
      for (int i = 0; i < k; ++i) a.insert(a.begin() + at, rs.value(2));
      if (n > 0 && rs.chance(0.5)) a[static_cast<size_t>(rs.uniform(0, n + k - 1))] = rs.value(2);
      break;
    }
    case 1: {  // erase a block, maybe also edit another element
      if (n == 0) break;
      const int at = rs.uniform(0, n - 1), k = std::min(rs.uniform(1, 3), n - at);
      a.erase(a.begin() + at, a.begin() + at + k);
      if (!a.empty() && rs.chance(0.5)) a[static_cast<size_t>(rs.uniform(0, static_cast<int>(a.size()) - 1))] = rs.value(2);
      break;
    }
    case 2: std::reverse(a.begin(), a.end()); break;
    case 3: std::shuffle(a.begin(), a.end(), rs.rng()); break;
    case 4: for (int i = rs.uniform(1, 4); i > 0; --i) a.push_back(rs.value(2)); break;
    case 5: for (int i = rs.uniform(1, 3); i > 0 && !a.empty(); --i) a.pop_back(); break;
    case 6: if (n > 1) std::rotate(a.begin(), a.begin() + 1, a.end()); break;
    default: if (n > 0) a[static_cast<size_t>(rs.uniform(0, n - 1))] = rs.value(3); break;
  }
}

// An agent-shaped state with some random structure besides.
json richState(RandomState& rs) {
  json s = rs.agentState(rs.uniform(2, 8));
  s["extra"] = rs.value(4);
  s["items"] = json::array();
  for (int i = rs.uniform(0, 6); i > 0; --i) s["items"].push_back(rs.value(2));
  return s;
}

// One local edit below the root, as agents mostly make (RandomState::op replaces
// the root about a fifth of the time). Applied to `doc`; returns the op (or,
// from the RandomState::op fallback, a [test, replace] pair).
json localEdit(RandomState& rs, json& doc) {
  agui_sync::Tokens path;
  for (int tries = 0; tries < 8 && path.empty(); ++tries) path = rs.existingPath(doc);
  if (path.empty()) return rs.op(doc);  // a scalar or empty root
  json* node = agui_sync::resolvePointer(doc, path, path.size());
  json* parent = agui_sync::resolvePointer(doc, path, path.size() - 1);
  const int kind = rs.uniform(0, 9);
  if (kind < 5) {
    json v = node->is_string() && rs.chance(0.5) ? json(node->get<std::string>() + " edited") : rs.value(2);
    *node = v;
    return op("replace", agui_sync::formatPointer(path), v);
  }
  if (kind < 8 && node->is_structured()) {
    json v = rs.value(2);
    if (node->is_object()) {
      path.push_back(rs.key());
      (*node)[path.back()] = v;
    } else {
      const size_t at = static_cast<size_t>(rs.uniform(0, static_cast<int>(node->size())));
      path.push_back(std::to_string(at));
      node->insert(node->begin() + static_cast<std::ptrdiff_t>(at), v);
    }
    return op("add", agui_sync::formatPointer(path), v);
  }
  std::string p = agui_sync::formatPointer(path);
  if (parent->is_object()) parent->erase(path.back());
  else parent->erase(static_cast<size_t>(std::stoul(path.back())));
  return op("remove", p);
}

// A new state derived from `s` by a random evolution (possibly no change).
json evolve(RandomState& rs, const json& s) {
  json next = s;
  const int kind = rs.uniform(0, 99);
  if (kind < 45) {
    for (int i = rs.uniform(1, 3); i > 0; --i) localEdit(rs, next);
  } else if (kind < 60) {
    rs.op(next);  // includes moves, tests and root replaces
  } else if (kind < 80) {
    mutateArray(rs, next);
  } else if (kind < 82) {
    next = rs.value(3);  // kind changes, scalar roots
  } else if (kind < 85) {
    next = richState(rs);
  } else if (kind < 90 && next.is_object()) {
    next["extra"] = rs.value(4);
  }  // else: unchanged
  if (next.dump().size() < 300 && rs.chance(0.3)) next = richState(rs);  // regrow after a root replace
  return next;
}

// App-written ops for patch(), applied to `doc`.
json appOps(RandomState& rs, json& doc) {
  if (rs.chance(0.3)) return rs.delta(doc, rs.uniform(1, 3));
  json ops = json::array();
  for (int i = rs.uniform(1, 4); i > 0; --i) {
    json o = localEdit(rs, doc);  // RandomState::op may give a [test, replace] pair
    if (o.is_array()) for (auto& x : o) ops.push_back(x);
    else ops.push_back(o);
  }
  return ops;
}

// The STATE_SNAPSHOT the emitter could have sent instead of `delta`.
size_t snapshotAlternativeBytes(const json& delta, const json& state) {
  json meta = delta["metadata"][kWireKey];
  meta.erase("baseSeq");
  json snap = {{"type", "STATE_SNAPSHOT"}, {"snapshot", state}, {"metadata", {{kWireKey, meta}}}};
  return snap.dump().size();
}

void requireWellFormed(const json& ev) {
  REQUIRE(ev.is_object());
  const std::string type = ev["type"].get<std::string>();
  if (type == "STATE_DELTA") {
    REQUIRE(keysOf(ev) == std::set<std::string>{"type", "delta", "metadata"});
    REQUIRE(ev["delta"].is_array());
    REQUIRE(ev["metadata"][kWireKey]["baseSeq"].get<uint64_t>() + 1 == ev["metadata"][kWireKey]["seq"].get<uint64_t>());
  } else {
    REQUIRE(type == "STATE_SNAPSHOT");
    REQUIRE(keysOf(ev) == std::set<std::string>{"type", "snapshot", "metadata"});
    REQUIRE(ev["metadata"][kWireKey].find("baseSeq") == ev["metadata"][kWireKey].end());
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// json_diff
// ---------------------------------------------------------------------------

TEST_CASE("diff: equal values give an empty patch", "[emitter][diff]") {
  json v = {{"a", {1, 2, {{"b", nullptr}}}}, {"c", "x"}};
  REQUIRE(agui_sync::diffPatch(v, v) == json::array());
  REQUIRE(agui_sync::diffPatch(json(1), json(1.0)) == json::array());  // RFC 6902 equality is numeric
}

TEST_CASE("diff: objects key by key", "[emitter][diff]") {
  json from = padded({{"keep", 1}, {"gone", true}, {"change", "old"}});
  json to = padded({{"keep", 1}, {"change", "new"}, {"fresh", {1, 2}}});
  json ops = diffChecked(from, to);
  REQUIRE(ops == json::array({op("replace", "/change", "new"), op("add", "/fresh", {1, 2}), op("remove", "/gone")}));
}

TEST_CASE("diff: recursion into nested containers", "[emitter][diff]") {
  json from = {{"doc", {{"sections", json::array({{{"h", "A"}, {"body", "aaa"}}, {{"h", "B"}, {"body", "bbb"}}})}}}};
  json to = from;
  to["doc"]["sections"][1]["body"] = "BBB";
  REQUIRE(diffChecked(from, to) == json::array({op("replace", "/doc/sections/1/body", "BBB")}));
}

TEST_CASE("diff: arrays", "[emitter][diff]") {
  json big = json::array();
  for (int i = 0; i < 50; ++i) big.push_back({{"id", i}, {"text", "todo " + std::to_string(i)}});

  SECTION("a change to one element is one op, never a whole-array replace") {
    json to = big;
    to[17]["text"] = "edited";
    REQUIRE(diffChecked(big, to) == json::array({op("replace", "/17/text", "edited")}));
    json small = {1, 2, 3}, small2 = {1, 5, 3};
    REQUIRE(diffChecked(small, small2) == json::array({op("replace", "/1", 5)}));
    REQUIRE(diffChecked(json{{"a", {1}}}, json{{"a", {2}}}) == json::array({op("replace", "/a/0", 2)}));
  // Even where a whole replace would be a byte shorter, one change stays one op below it.
  REQUIRE(diffChecked(json::array({1}), json::array({2})) == json::array({op("replace", "/0", 2)}));
  }
  SECTION("appends use /-") {
    json to = big;
    to.push_back("x");
    to.push_back("y");
    REQUIRE(diffChecked(big, to) == json::array({op("add", "/-", "x"), op("add", "/-", "y")}));
    REQUIRE(diffChecked(json{{"l", json::array()}}, json{{"l", {7}}}) == json::array({op("add", "/l/-", 7)}));
  }
  SECTION("shrink removes from the highest index down") {
    json to = big;
    to.erase(49);
    to.erase(48);
    to.erase(47);
    REQUIRE(diffChecked(big, to) == json::array({op("remove", "/49"), op("remove", "/48"), op("remove", "/47")}));
  }
  SECTION("prefix/suffix trimming: one insertion or removal anywhere is one op") {
    json ins = big;
    ins.insert(ins.begin() + 20, "new");
    REQUIRE(diffChecked(big, ins) == json::array({op("add", "/20", "new")}));
    json front = big;
    front.insert(front.begin(), "first");
    REQUIRE(diffChecked(big, front) == json::array({op("add", "/0", "first")}));
    json del = big;
    del.erase(del.begin() + 5);
    REQUIRE(diffChecked(big, del) == json::array({op("remove", "/5")}));
    json del2 = big;
    del2.erase(del2.begin() + 5, del2.begin() + 7);
    REQUIRE(diffChecked(big, del2) == json::array({op("remove", "/6"), op("remove", "/5")}));
  }
  SECTION("an insertion plus an edit elsewhere stays two ops") {
    json to = big;
    to.insert(to.begin() + 3, "ins");
    to[40]["text"] = "edited";  // was element 39
    REQUIRE(diffChecked(big, to) == json::array({op("add", "/3", "ins"), op("replace", "/40/text", "edited")}));
    json to2 = big;
    to2.erase(to2.begin() + 30);
    to2[2]["id"] = -1;
    REQUIRE(diffChecked(big, to2) == json::array({op("replace", "/2/id", -1), op("remove", "/30")}));
  }
  SECTION("a removal plus an append (same length, everything between shifted) is two ops") {
    json to = big;
    to.erase(to.begin() + 10);
    to.push_back({{"id", 50}, {"text", "new"}});
    REQUIRE(diffChecked(big, to) == json::array({op("remove", "/10"), op("add", "/-", to[49])}));
    json to2 = big;  // and an insertion in front plus a removal near the end
    to2.erase(to2.begin() + 45);
    to2.insert(to2.begin() + 1, "x");
    REQUIRE(diffChecked(big, to2) == json::array({op("add", "/1", "x"), op("remove", "/46")}));
  }
  SECTION("reorders, reversals and replacements apply exactly") {
    json rev = big;
    std::reverse(rev.begin(), rev.end());
    diffChecked(big, rev);
    diffChecked(big, json::array());
    diffChecked(json::array(), big);
    diffChecked(json::array({1, 2, 3}), json::array({3, 1, 2}));
  }
}

TEST_CASE("diff: keys are escaped per RFC 6901", "[emitter][diff]") {
  json from = {{"a/b", 1}, {"m~n", {{"x/y~z", 1}}}, {"", 0}};
  json to = {{"a/b", 2}, {"m~n", {{"x/y~z", 2}}}, {"", 1}, {"~1", true}};
  DiffOptions noCollapse;  // tiny objects: the whole-object replace would be shorter
  noCollapse.collapse = false;
  json ops = diffChecked(from, to, noCollapse);
  REQUIRE(ops == json::array({op("replace", "/", 1), op("replace", "/a~1b", 2), op("replace", "/m~0n/x~1y~0z", 2),
                              op("add", "/~01", true)}));
}

TEST_CASE("diff: kind changes and scalar roots replace", "[emitter][diff]") {
  REQUIRE(diffChecked(json{{"v", {{"a", 1}}}}, json{{"v", {1}}}) == json::array({op("replace", "/v", {1})}));
  REQUIRE(diffChecked(json{{"v", 1}}, json{{"v", "1"}}) == json::array({op("replace", "/v", "1")}));
  REQUIRE(diffChecked(json{{"v", 1}}, json{{"v", 1.5}}) == json::array({op("replace", "/v", 1.5)}));
  REQUIRE(diffChecked(json(1), json(2)) == json::array({op("replace", "", 2)}));
  REQUIRE(diffChecked(json::object(), json("s")) == json::array({op("replace", "", "s")}));
  REQUIRE(diffChecked(json(nullptr), json::array({1})) == json::array({op("replace", "", {1})}));
  REQUIRE(diffChecked(json::array({1}), json::object()) == json::array({op("replace", "", json::object())}));
}

TEST_CASE("diff: a container whose diff outweighs a replace is replaced", "[emitter][diff]") {
  json from = {{"p", {{"a", 1}, {"b", 2}, {"c", 3}}}};
  json to = {{"p", {{"x", 1}, {"y", 2}, {"z", 3}}}};
  REQUIRE(diffChecked(from, to) == json::array({op("replace", "/p", to["p"])}));
  DiffOptions noCollapse;
  noCollapse.collapse = false;
  REQUIRE(diffChecked(from, to, noCollapse).size() == 6);
}

TEST_CASE("diff: guarded paths get test preconditions", "[emitter][diff]") {
  json from = {{"proposal", {{"amount", 120}, {"to", "alice"}}}, {"other", 1}, {"list", {1, 2, 3}}};
  DiffOptions g = guarded({"/proposal"});

  json to = from;
  to["proposal"]["amount"] = 500;
  to["other"] = 2;
  REQUIRE(diffChecked(from, to, g) == json::array({op("replace", "/other", 2), op("test", "/proposal/amount", 120),
                                                   op("replace", "/proposal/amount", 500)}));
  json removed = from;
  removed.erase("proposal");
  REQUIRE(diffChecked(from, removed, g) ==
          json::array({op("test", "/proposal", from["proposal"]), op("remove", "/proposal")}));
  json added = from;
  added["proposal"]["note"] = "x";  // nothing overwritten: no test
  REQUIRE(diffChecked(from, added, g) == json::array({op("add", "/proposal/note", "x")}));
  // Overwriting above the guard tests the guarded value itself.
  REQUIRE(diffChecked(from, json(7), g) ==
          json::array({op("test", "/proposal", from["proposal"]), op("replace", "", 7)}));
  // Nested guards are not tested twice.
  REQUIRE(diffChecked(from, json(7), guarded({"/proposal/amount", "/proposal"})) ==
          json::array({op("test", "/proposal", from["proposal"]), op("replace", "", 7)}));

  DiffOptions all;
  all.testAll = true;
  json to2 = from;
  to2["list"].erase(2);
  to2["other"] = 3;
  REQUIRE(diffChecked(from, to2, all) == json::array({op("test", "/list/2", 3), op("remove", "/list/2"),
                                                      op("test", "/other", 1), op("replace", "/other", 3)}));
  // A test that fails is what protects the receiver: applying to drifted state fails.
  json drifted = from;
  drifted["proposal"]["amount"] = 121;
  REQUIRE(agui_sync::applyPatch(drifted, agui_sync::diffPatch(from, to, g)).status ==
          agui_sync::PatchStatus::PreconditionFailed);
}

TEST_CASE("diff: random pairs always apply exactly", "[emitter][diff]") {
  for (uint32_t seed = 1; seed <= 3000; ++seed) {
    RandomState rs(seed);
    json from = rs.chance(0.5) ? rs.value(4) : rs.agentState(rs.uniform(0, 3));
    json to = rs.chance(0.3) ? rs.value(4) : evolve(rs, from);
    DiffOptions o;
    o.testAll = rs.chance(0.2);
    o.collapse = rs.chance(0.8);
    json ops = agui_sync::diffPatch(from, to, o);
    json doc = from;
    agui_sync::PatchResult r = agui_sync::applyPatch(doc, ops);
    if (!r.ok() || doc != to)
      FAIL("seed " << seed << "\nfrom " << from.dump() << "\nto   " << to.dump() << "\nops  " << ops.dump() << "\n"
                   << r.message);
    if (from == to) REQUIRE(ops.empty());
  }
}

TEST_CASE("diff: random array edits", "[emitter][diff]") {
  for (uint32_t seed = 1; seed <= 1500; ++seed) {
    RandomState rs(seed);
    const bool unique = rs.chance(0.6);
    const int n = rs.uniform(0, seed % 10 == 0 ? 3000 : 200);
    int next = 0;
    auto fresh = [&]() -> json { return unique ? json(next++) : json(rs.uniform(0, 3)); };
    json from = json::array();
    for (int i = 0; i < n; ++i) from.push_back(fresh());
    json to = from;
    const int edits = rs.chance(0.1) ? rs.uniform(20, 200) : rs.uniform(1, 8);
    for (int e = 0; e < edits; ++e) {
      auto& arr = *to.get_ptr<json::array_t*>();
      const int kind = rs.uniform(0, 2), size = static_cast<int>(arr.size());
      if (kind == 0 || size == 0) arr.insert(arr.begin() + rs.uniform(0, size), fresh());
      else if (kind == 1) arr.erase(arr.begin() + rs.uniform(0, size - 1));
      else arr[static_cast<size_t>(rs.uniform(0, size - 1))] = fresh();
    }
    const bool shuffled = rs.chance(0.05);
    if (shuffled) std::shuffle(to.begin(), to.end(), rs.rng());
    DiffOptions o;
    o.collapse = rs.chance(0.5);
    json ops = agui_sync::diffPatch(from, to, o);
    json doc = from;
    agui_sync::PatchResult r = agui_sync::applyPatch(doc, ops);
    if (!r.ok() || doc != to) FAIL("seed " << seed << ": " << r.message << "\nops " << ops.dump());
    // With distinct elements and few edits, the script is no longer than the edits.
    if (unique && !shuffled && edits <= 8 && ops.size() > static_cast<size_t>(edits))
      FAIL("seed " << seed << ": " << ops.size() << " ops for " << edits << " edits: " << ops.dump());
  }
}

TEST_CASE("serializedSize is dump().size()", "[emitter][diff]") {
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    RandomState rs(seed);
    json v = {{"v", rs.value(5)}};
    v["ctl"] = std::string("q\"b\\s\b\f\n\r\t\x01\x1f\x7f\xc3\xa9");
    v["num"] = {-1, 0, uint64_t(18446744073709551615ull), int64_t(-9223372036854775807ll - 1), 1e300, -0.0, 0.1};
    const size_t exact = v.dump().size();
    REQUIRE(agui_sync::serializedSize(v) == exact);
    REQUIRE(agui_sync::serializedSize(v, exact) == exact);
    REQUIRE(agui_sync::serializedSize(v, exact / 2) > exact / 2);
  }
}

// ---------------------------------------------------------------------------
// StateEmitter
// ---------------------------------------------------------------------------

TEST_CASE("emitter: stamping, no-op updates and event shape", "[emitter]") {
  EmitterOptions o;
  o.startSeq = 40;
  o.epoch = "run-7";
  o.digestEvery = 0;
  StateEmitter em(o, padded(json{{"count", 0}, {"items", json::array()}}));
  REQUIRE(em.configError().empty());
  REQUIRE(em.seq() == 40);
  REQUIRE(em.update(em.state()).empty());
  REQUIRE(!em.lastFailure());
  REQUIRE(em.seq() == 40);

  auto ev = em.update(padded(json{{"count", 1}, {"items", json::array()}}));
  REQUIRE(ev.size() == 1);
  requireWellFormed(ev[0]);
  REQUIRE(ev[0] == json{{"type", "STATE_DELTA"},
                        {"delta", {op("replace", "/count", 1)}},
                        {"metadata", {{kWireKey, {{"seq", 41}, {"baseSeq", 40}, {"epoch", "run-7"}}}}}});
  REQUIRE(em.seq() == 41);
  REQUIRE(em.state()["count"] == 1);

  json snap = em.snapshot();
  requireWellFormed(snap);
  REQUIRE(snap["snapshot"] == em.state());
  REQUIRE(snap["metadata"][kWireKey] == json{{"seq", 41}, {"epoch", "run-7"}});

  REQUIRE(StateEmitter::encode(ev[0]) == "id: 41\ndata: " + ev[0].dump() + "\n\n");
  REQUIRE(StateEmitter::encode(ev[0], false) == "data: " + ev[0].dump() + "\n\n");
  REQUIRE(StateEmitter::encode(json{{"type", "RUN_STARTED"}}) == "data: {\"type\":\"RUN_STARTED\"}\n\n");
  REQUIRE(em.heartbeat() == ": hb 41\n\n");
  json withNewline = {{"type", "STATE_SNAPSHOT"}, {"snapshot", "a\nb\r\nc"}, {"metadata", {{"seq", 1}}}};
  REQUIRE(StateEmitter::encode(withNewline).find("b\r") == std::string::npos);

  // The engine takes it all, including the heartbeat and the SSE id.
  SyncEngine eng;
  auto out = feed(eng, em.snapshotSse() + em.heartbeat());
  REQUIRE(!hasResync(out));
  REQUIRE(eng.status() == SyncStatus::Synced);
  REQUIRE(eng.lastSeq() == 41u);
  REQUIRE(eng.lastEventId() == std::string("41"));
  REQUIRE(eng.metrics().heartbeats == 1);
  REQUIRE(feed(eng, em.updateSse(padded(json{{"count", 2}, {"items", {1}}}))).size() == 1);
  REQUIRE(eng.state() == em.state());
  REQUIRE(eng.lastEventId() == std::string("42"));
}

TEST_CASE("emitter: digest on every K-th event", "[emitter]") {
  EmitterOptions o;
  o.digestEvery = 4;
  StateEmitter em(o);
  SyncEngine eng;
  feed(eng, em.snapshotSse());
  REQUIRE(em.snapshot()["metadata"][kWireKey]["digest"] == agui_sync::stateDigest(em.state()));
  for (int i = 1; i <= 12; ++i) {
    auto ev = em.update(json{{"n", i}, {"pad", std::string(200, 'x')}});
    REQUIRE(ev.size() == 1);
    const json& meta = ev[0]["metadata"][kWireKey];
    if (i % 4 == 0) REQUIRE(meta["digest"] == agui_sync::stateDigest(em.state()));
    else REQUIRE(meta.find("digest") == meta.end());
    REQUIRE(!hasResync(feed(eng, StateEmitter::encode(ev[0]))));
  }
  REQUIRE(eng.metrics().digestChecks == 1 + 3);
  REQUIRE(em.stats().digests == 3);

  o.digestEvery = 0;
  StateEmitter never(o);
  for (int i = 1; i <= 20; ++i) {
    json meta = never.update(json{{"n", i}})[0]["metadata"][kWireKey];
    REQUIRE(meta.find("digest") == meta.end());
  }
  json snapMeta = never.snapshot()["metadata"][kWireKey];
  REQUIRE(snapMeta.find("digest") == snapMeta.end());
}

TEST_CASE("emitter: the receiver checks metadata.digest", "[emitter]") {
  EmitterOptions o;
  o.digestEvery = 1;
  StateEmitter em(o, padded(json{{"a", 1}}));
  SyncEngine eng;
  REQUIRE(!hasResync(feed(eng, em.snapshotSse())));

  json ev = em.update(padded(json{{"a", 2}}))[0];
  REQUIRE(ev["type"] == "STATE_DELTA");
  json tampered = ev;
  tampered["metadata"][kWireKey]["digest"] = "sha256:" + std::string(64, '0');
  agui_sync::Code reason{};
  REQUIRE(hasResync(feed(eng, StateEmitter::encode(tampered)), &reason));
  REQUIRE(reason == agui_sync::Code::DigestMismatch);
  REQUIRE(eng.status() == SyncStatus::Resyncing);
  REQUIRE(eng.state() == padded(json{{"a", 1}}));  // rolled back
  // The resync is answered by a snapshot, which heals. (Replayed deltas would
  // not: a resyncing receiver holds deltas until a snapshot arrives.)
  REQUIRE(!hasResync(feed(eng, em.snapshotSse())));
  REQUIRE(eng.status() == SyncStatus::Synced);
  REQUIRE(eng.state() == em.state());

  // A snapshot whose digest does not match is refused as well.
  json snap = em.snapshot();
  snap["metadata"][kWireKey]["digest"] = "sha256:" + std::string(64, 'f');
  REQUIRE(hasResync(feed(eng, StateEmitter::encode(snap)), &reason));
  REQUIRE(reason == agui_sync::Code::DigestMismatch);

  // A receiver that drifted silently (its patches all applied) is caught by the digest.
  SyncEngine drifted;
  json base = em.snapshot();
  base["snapshot"]["a"] = 999;
  base["metadata"][kWireKey].erase("digest");
  feed(drifted, StateEmitter::encode(base));
  REQUIRE(hasResync(feed(drifted, em.updateSse(padded(json{{"a", 2}, {"b", true}}))), &reason));
  REQUIRE(reason == agui_sync::Code::DigestMismatch);
}

TEST_CASE("emitter: snapshot fallback by ratio", "[emitter]") {
  json state = {{"title", "t"}, {"items", json::array()}};
  for (int i = 0; i < 20; ++i) state["items"].push_back("item " + std::to_string(i));
  StateEmitter em(EmitterOptions{}, state);

  // Small change: a delta.
  json s1 = state;
  s1["title"] = "u";
  auto ev = em.update(s1);
  REQUIRE(ev[0]["type"] == "STATE_DELTA");
  REQUIRE(em.replayEvents() == 1);

  // Everything changes: the delta would cost about as much as the state.
  json s2 = {{"completely", "different"}, {"items", json::array({"z", "y"})}};
  ev = em.update(s2);
  REQUIRE(ev.size() == 1);
  requireWellFormed(ev[0]);
  REQUIRE(ev[0]["type"] == "STATE_SNAPSHOT");
  REQUIRE(ev[0]["snapshot"] == s2);
  REQUIRE(ev[0]["metadata"][kWireKey]["seq"] == 2);
  REQUIRE(em.stats().snapshots == 1);
  REQUIRE(em.replayEvents() == 0);  // the ring restarts after a snapshot
  REQUIRE(em.replayFloor() == 2);

  // ratio <= 0: always a snapshot; a huge ratio: practically never.
  EmitterOptions always;
  always.snapshotRatio = 0;
  StateEmitter a(always, state);
  REQUIRE(a.update(s1)[0]["type"] == "STATE_SNAPSHOT");
  EmitterOptions never;
  never.snapshotRatio = 1e9;
  StateEmitter n(never, state);
  REQUIRE(n.update(s2)[0]["type"] == "STATE_DELTA");

  // The decision is on exact bytes: just over / under the threshold.
  for (double ratio : {0.3, 0.5, 0.8, 1.0}) {
    EmitterOptions r;
    r.snapshotRatio = ratio;
    r.digestEvery = 0;
    StateEmitter e(r, state);
    for (int i = 0; i < 20; ++i) {
      json next = e.state();
      next["items"][static_cast<size_t>(i)] = "changed " + std::to_string(i) + " at " + std::to_string(ratio);
      auto events = e.update(next);
      REQUIRE(events.size() == 1);
      json out = events[0];
      if (out["type"] == "STATE_DELTA") {
        REQUIRE(static_cast<double>(out.dump().size()) <= ratio * static_cast<double>(snapshotAlternativeBytes(out, e.state())));
      } else {
        json wouldBe = {{"type", "STATE_DELTA"},
                        {"delta", agui_sync::diffPatch(state, next)},
                        {"metadata", {{kWireKey, {{"seq", e.seq()}, {"baseSeq", e.seq() - 1}}}}}};
        REQUIRE(static_cast<double>(wouldBe.dump().size()) > ratio * static_cast<double>(out.dump().size()));
      }
      state = next;
    }
  }
}

TEST_CASE("emitter: guarded paths in update()", "[emitter]") {
  EmitterOptions o;
  o.guardedPaths = {"/proposal", "not-a-pointer"};
  o.digestEvery = 0;
  json s = padded({{"proposal", {{"amount", 120}, {"recipient", "alice"}}}, {"log", json::array()}});
  StateEmitter em(o, s);
  REQUIRE(em.configError().find("not-a-pointer") != std::string::npos);
  json next = s;
  next["proposal"]["amount"] = 90;
  next["log"].push_back("lowered");
  auto ev = em.update(next);
  REQUIRE(ev[0]["delta"] == json::array({op("add", "/log/-", "lowered"), op("test", "/proposal/amount", 120),
                                         op("replace", "/proposal/amount", 90)}));
  // A receiver whose proposal drifted fails the precondition instead of silently
  // holding an amount the agent never proposed.
  SyncEngine eng;
  json bad = em.snapshot();
  bad["snapshot"]["proposal"]["amount"] = 999;
  bad["metadata"][kWireKey]["seq"] = 0;
  feed(eng, StateEmitter::encode(bad));
  agui_sync::Code reason{};
  REQUIRE(hasResync(feed(eng, StateEmitter::encode(ev[0])), &reason));
  REQUIRE(reason == agui_sync::Code::PreconditionFailed);

  o.testAll = true;
  o.guardedPaths.clear();
  StateEmitter all(o, s);
  next = s;
  next["log"] = json::array({"x"});
  REQUIRE(all.update(next)[0]["delta"] == json::array({op("add", "/log/-", "x")}));  // adds overwrite nothing
  next.erase("proposal");
  REQUIRE(all.update(next)[0]["delta"] == json::array({op("test", "/proposal", s["proposal"]), op("remove", "/proposal")}));
}

TEST_CASE("emitter: patch() applies atomically and emits exactly the app's ops", "[emitter]") {
  EmitterOptions o;
  o.guardedPaths = {"/proposal"};  // update() only: patch() sends what the app wrote
  o.digestEvery = 3;
  json s = {{"proposal", {{"amount", 120}}}, {"todos", json::array()}, {"pad", std::string(300, 'p')}};
  StateEmitter em(o, s);
  SyncEngine eng;
  feed(eng, em.snapshotSse());

  json ops = json::array({op("replace", "/proposal/amount", 130), op("add", "/todos/-", {{"t", "x"}})});
  agui_sync::PatchOutcome r = em.patch(ops);
  REQUIRE(r.ok());
  REQUIRE(r.events.size() == 1);
  requireWellFormed(r.events[0]);
  REQUIRE(r.events[0]["delta"] == ops);
  REQUIRE(r.events[0]["metadata"][kWireKey] == json{{"seq", 1}, {"baseSeq", 0}});
  REQUIRE(em.state()["proposal"]["amount"] == 130);
  REQUIRE(!hasResync(feed(eng, StateEmitter::encodeAll(r.events))));

  // A failing op rolls back everything: no event, no seq, state unchanged.
  json before = em.state();
  r = em.patch(json::array({op("replace", "/proposal/amount", 1), op("remove", "/nope")}));
  REQUIRE(r.failure->code == agui_sync::Code::PatchFailed);
  REQUIRE(r.failure->opIndex == size_t{1});
  REQUIRE(r.events.empty());
  REQUIRE(em.state() == before);
  REQUIRE(em.seq() == 1);
  REQUIRE(em.lastFailure().has_value());

  r = em.patch(json::array({op("test", "/proposal/amount", 5), op("replace", "/proposal/amount", 6)}));
  REQUIRE(r.failure->code == agui_sync::Code::PreconditionFailed);
  REQUIRE(em.state() == before);
  r = em.patch(json{{"op", "add"}});
  REQUIRE(r.failure->code == agui_sync::Code::InvalidPatch);
  r = em.patch(json::array());
  REQUIRE(r.ok());
  REQUIRE(r.events.empty());

  // seq 2 and 3: the third carries the digest (K = 3).
  r = em.patch(json::array({op("test", "/proposal/amount", 130), op("replace", "/proposal/amount", 140)}));
  REQUIRE(r.events[0]["delta"].size() == 2);
  REQUIRE(!hasResync(feed(eng, StateEmitter::encodeAll(r.events))));
  std::string sse = em.patchSse(json::array({op("copy", "/todos/-", nullptr)}) /* malformed: copy needs from */, &r);
  REQUIRE(sse.empty());
  REQUIRE(!r.ok());
  sse = em.patchSse(json::array({json{{"op", "move"}, {"from", "/todos/0"}, {"path", "/moved"}}}), &r);
  REQUIRE(r.ok());
  REQUIRE(r.events[0]["metadata"][kWireKey]["digest"] == agui_sync::stateDigest(em.state()));
  REQUIRE(!hasResync(feed(eng, sse)));
  REQUIRE(eng.state() == em.state());
  REQUIRE(eng.lastSeq() == 3u);

  // Too deep for the receiver: refused here rather than sent.
  json deep = 1;
  for (int i = 0; i < 200; ++i) deep = json::array({deep});
  r = em.patch(json::array({op("add", "/deep", deep)}));
  REQUIRE(r.failure->code == agui_sync::Code::LimitExceeded);
  REQUIRE(em.seq() == 3);
}

TEST_CASE("emitter: values the wire cannot carry are repaired or refused", "[emitter]") {
  EmitterOptions o;
  o.digestEvery = 1;
  StateEmitter em(o);
  SyncEngine eng;
  feed(eng, em.snapshotSse());
  json s = {{"bad", std::string("ok\xff\xfe")}, {std::string("k\xc0"), 1}, {"nan", std::nan("")},
            {"inf", HUGE_VAL}, {"good", "é"}};
  auto ev = em.update(s);
  REQUIRE(ev.size() == 1);
  REQUIRE(!em.lastFailure());
  REQUIRE(em.state()["bad"] == "ok\xEF\xBF\xBD\xEF\xBF\xBD");
  REQUIRE(em.state()["nan"].is_null());
  REQUIRE(em.state().contains("k\xEF\xBF\xBD"));
  REQUIRE(em.stats().repaired == 1);
  REQUIRE(!hasResync(feed(eng, StateEmitter::encodeAll(ev))));
  REQUIRE(eng.state() == em.state());
  REQUIRE(em.update(s).empty());  // the same input again is no change
  REQUIRE(em.update(json(s)).empty());

  json deep = 1;
  for (int i = 0; i < 130; ++i) deep = json::array({deep});
  REQUIRE(em.update(json{{"deep", deep}}).empty());
  REQUIRE(em.lastFailure()->code == agui_sync::Code::LimitExceeded);
  REQUIRE(em.state()["good"] == "é");
  // Exactly at the limit (the path counts, as in the receiver) is fine.
  json fits = 1;
  for (int i = 0; i < 127; ++i) fits = json::array({fits});
  ev = em.update(json{{"deep", fits}});
  REQUIRE(ev.size() == 1);
  REQUIRE(!hasResync(feed(eng, StateEmitter::encodeAll(ev))));
  REQUIRE(eng.state() == em.state());

  StateEmitter tooDeep(o, json{{"deep", deep}});
  REQUIRE(!tooDeep.configError().empty());
  REQUIRE(tooDeep.state() == json::object());
}

TEST_CASE("emitter: replay ring caps and semantics", "[emitter]") {
  EmitterOptions o;
  o.replayMaxEvents = 4;
  o.epoch = "e1";
  o.digestEvery = 0;
  json s = {{"n", 0}, {"pad", std::string(1000, 'x')}};
  StateEmitter em(o, s);
  REQUIRE(em.replaySince(0).empty());
  for (int i = 1; i <= 10; ++i) {
    s["n"] = i;
    REQUIRE(em.update(s)[0]["type"] == "STATE_DELTA");
  }
  REQUIRE(em.replayEvents() == 4);
  REQUIRE(em.replayFloor() == 6);
  REQUIRE(em.replaySince(10).empty());  // current
  auto r = em.replaySince(7);
  REQUIRE(r.size() == 3);
  for (size_t i = 0; i < r.size(); ++i) REQUIRE(r[i]["metadata"][kWireKey]["baseSeq"] == 7 + i);
  REQUIRE(em.replaySince(6).size() == 4);
  for (uint64_t gone : {0ull, 5ull}) {  // older than the ring
    r = em.replaySince(gone);
    REQUIRE(r.size() == 1);
    REQUIRE(r[0]["type"] == "STATE_SNAPSHOT");
    REQUIRE(r[0]["metadata"][kWireKey]["seq"] == 10);
  }
  REQUIRE(em.replaySince(11)[0]["type"] == "STATE_SNAPSHOT");  // from the future
  REQUIRE(em.replaySince(8, "e1").size() == 2);
  REQUIRE(em.replaySince(8, "e0")[0]["type"] == "STATE_SNAPSHOT");  // other epoch
  REQUIRE(em.replaySince(10, "").size() == 1);
  // Every catch-up answered with a snapshot counts, replaySince's own and a forced one.
  const uint64_t before = em.stats().replaySnapshots;
  REQUIRE(em.catchUpSnapshot() == em.snapshot());
  REQUIRE(em.stats().replaySnapshots == before + 1);
  REQUIRE(em.stats().replays == 3);  // from 7, from 6, from 8 in epoch e1; the rest were current or snapshots

  // Byte cap: each delta is ~100 bytes; 250 bytes keep two.
  EmitterOptions b;
  b.replayMaxBytes = 250;
  b.digestEvery = 0;
  StateEmitter eb(b, s);
  for (int i = 11; i <= 15; ++i) {
    s["n"] = i;
    eb.update(s);
  }
  REQUIRE(eb.replayEvents() == 2);
  REQUIRE(eb.replayBytes() <= 250);
  REQUIRE(eb.replayFloor() == 3);
  REQUIRE(eb.replaySince(3).size() == 2);
  REQUIRE(eb.replaySince(2)[0]["type"] == "STATE_SNAPSHOT");

  // Replaying more than a snapshot's worth of deltas sends the snapshot.
  EmitterOptions c;
  c.digestEvery = 0;
  StateEmitter ec(c, padded(json{{"n", 0}}));
  for (int i = 1; i <= 50; ++i) REQUIRE(ec.update(padded(json{{"n", i}}))[0]["type"] == "STATE_DELTA");
  REQUIRE(ec.replaySince(49).size() == 1);
  REQUIRE(ec.replaySince(49)[0]["type"] == "STATE_DELTA");
  REQUIRE(ec.replaySince(10)[0]["type"] == "STATE_SNAPSHOT");
  REQUIRE(ec.replaySince(10).size() == 1);

  // replayMaxEvents = 0: no ring, every gap is a snapshot.
  EmitterOptions z;
  z.replayMaxEvents = 0;
  StateEmitter ez(z, json{{"n", 0}});
  ez.update(json{{"n", 1}});
  REQUIRE(ez.replayFloor() == 1);
  REQUIRE(ez.replaySince(0)[0]["type"] == "STATE_SNAPSHOT");
}

TEST_CASE("emitter: a replay leaves out the seqs the client holds", "[emitter]") {
  EmitterOptions o;
  o.epoch = "e1";
  o.digestEvery = 0;
  json s = {{"n", 0}, {"pad", std::string(1000, 'x')}};
  StateEmitter em(o, s);
  for (int i = 1; i <= 6; ++i) {
    s["n"] = i;
    REQUIRE(em.update(s)[0]["type"] == "STATE_DELTA");
  }
  auto seqsOf = [](const std::vector<json>& events) {
    std::vector<uint64_t> out;
    for (const json& e : events) {
      REQUIRE(e["type"] == "STATE_DELTA");
      out.push_back(e["metadata"][kWireKey]["seq"].get<uint64_t>());
    }
    return out;
  };
  const std::string ours = "e1", other = "e0", none;
  CHECK(seqsOf(em.replaySince(2, &ours, {4, 6})) == std::vector<uint64_t>{3, 5});
  CHECK(seqsOf(em.replaySince(2, nullptr, {4, 6})) == std::vector<uint64_t>{3, 5});
  // The first missed delta is never left out (a client holding it would have applied it).
  CHECK(seqsOf(em.replaySince(2, nullptr, {3, 4, 5, 6})) == std::vector<uint64_t>{3});
  // Unsorted, repeated, already-applied and future seqs are harmless.
  CHECK(seqsOf(em.replaySince(2, nullptr, {6, 0, 2, 4, 4, 99})) == std::vector<uint64_t>{3, 5});
  CHECK(seqsOf(em.replaySince(2, nullptr, {})) == std::vector<uint64_t>{3, 4, 5, 6});
  // The epoch is still checked ("" is not "don't check"); a current client gets nothing.
  CHECK(em.replaySince(2, &other, {4})[0]["type"] == "STATE_SNAPSHOT");
  CHECK(em.replaySince(2, &none, {4})[0]["type"] == "STATE_SNAPSHOT");
  CHECK(em.replaySince(6, &ours, {4}).empty());
  CHECK(em.replaySince(7, &ours, {8})[0]["type"] == "STATE_SNAPSHOT");  // from the future

  // The snapshot-or-replay rule weighs only the deltas actually sent.
  EmitterOptions c;
  c.digestEvery = 0;
  StateEmitter ec(c, padded(json{{"n", 0}}));
  for (int i = 1; i <= 50; ++i) REQUIRE(ec.update(padded(json{{"n", i}}))[0]["type"] == "STATE_DELTA");
  REQUIRE(ec.replaySince(10)[0]["type"] == "STATE_SNAPSHOT");
  std::vector<uint64_t> held;
  for (uint64_t q = 12; q <= 50; ++q) held.push_back(q);
  CHECK(seqsOf(ec.replaySince(10, nullptr, held)) == std::vector<uint64_t>{11});
}

TEST_CASE("emitter round trip: a replay that skips the held seqs converges", "[emitter][property]") {
  size_t skipped = 0, heals = 0;
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    RandomState rs(seed * 15485863u);
    EmitterOptions o;
    o.epoch = "e" + std::to_string(seed);
    o.digestEvery = rs.chance(0.5) ? 4 : 0;
    o.snapshotRatio = 100;  // always replay: this test is about the deltas
    StateEmitter em(o, richState(rs));
    agui_sync::Options eo;
    eo.maxGapEvents = 1000;  // gaps stay open until the stream ends
    eo.reorderWindow = 8;
    SyncEngine eng(eo);
    feed(eng, em.snapshotSse());
    for (int step = 0; step < 40; ++step) {
      for (const json& ev : em.update(evolve(rs, em.state())))
        if (!rs.chance(0.3)) feed(eng, StateEmitter::encode(ev));
      if (!rs.chance(0.3) && step != 39) continue;
      // The connection breaks: an open gap becomes a resync whose request lists the held seqs.
      std::vector<agui_sync::Outcome> ended;
      eng.end(ended);
      eng.reset();
      const std::vector<uint64_t> held = eng.heldSeqs();
      REQUIRE(held.size() == eng.pendingCount());
      REQUIRE(held.size() <= eo.reorderWindow);
      REQUIRE(std::is_sorted(held.begin(), held.end()));
      if (!held.empty()) {
        REQUIRE(eng.status() == SyncStatus::Resyncing);
        REQUIRE(eng.resyncRequest()->reason == agui_sync::Code::Gap);
        REQUIRE(held.front() > eng.lastSeq().value() + 1);
      }
      std::vector<json> replay = eng.status() == SyncStatus::Resyncing && eng.resyncRequest()->reason != agui_sync::Code::Gap
                                     ? std::vector<json>{em.snapshot()}
                                     : em.replaySince(*eng.lastSeq(), &*eng.epoch(), held);
      for (const json& e : replay)
        if (e["type"] == "STATE_DELTA")
          REQUIRE_FALSE(std::binary_search(held.begin(), held.end(), e["metadata"][kWireKey]["seq"].get<uint64_t>()));
      const size_t missing = em.seq() - *eng.lastSeq();
      if (!replay.empty() && replay[0]["type"] == "STATE_DELTA" && replay.size() < missing) ++skipped;
      ++heals;
      feedAndRequireHealed(eng, em, replay, seed, step);
      REQUIRE(eng.heldSeqs().empty());
    }
  }
  INFO("heals " << heals << ", replays that skipped held deltas " << skipped);
  REQUIRE(skipped > 100);
}

// ---------------------------------------------------------------------------
// Round-trip properties
// ---------------------------------------------------------------------------

TEST_CASE("emitter round trip: >= 10,000 random evolutions reproduce the state exactly", "[emitter][property]") {
  size_t updates = 0, deltas = 0, snapshots = 0, patches = 0, noops = 0;
  uint64_t digestChecks = 0;
  for (uint32_t seed = 1; seed <= 250; ++seed) {
    RandomState rs(seed * 7919u);
    EmitterOptions o;
    const size_t ks[] = {0, 1, 3, 16};
    o.digestEvery = ks[rs.uniform(0, 3)];
    if (rs.chance(0.5)) o.epoch = "epoch-" + std::to_string(seed);
    if (rs.chance(0.4)) o.guardedPaths = {"/proposal", "/items"};
    o.testAll = rs.chance(0.15);
    o.startSeq = static_cast<uint64_t>(rs.uniform(0, 1000));
    StateEmitter em(o, rs.chance(0.9) ? richState(rs) : rs.value(3));
    SyncEngine eng;
    if (hasResync(feed(eng, em.snapshotSse()))) FAIL("seed " << seed << ": initial snapshot refused");
    for (int step = 0; step < 50; ++step) {
      std::vector<json> events;
      if (rs.chance(0.2)) {
        json doc = em.state();
        json ops = appOps(rs, doc);
        agui_sync::PatchOutcome r = em.patch(ops);
        if (!r.ok()) FAIL("seed " << seed << " step " << step << ": patch refused: " << r.failure->message << "\n" << ops.dump());
        if (em.state() != doc) FAIL("seed " << seed << " step " << step << ": patch result differs");
        if (r.events[0]["type"] == "STATE_DELTA" && r.events[0]["delta"] != ops)
          FAIL("seed " << seed << ": patch() did not emit the app's ops");
        events = std::move(r.events);
        ++patches;
      } else {
        const uint64_t before = em.seq();
        json next = evolve(rs, em.state());
        const bool same = next == em.state();
        events = rs.chance(0.5) ? em.update(next) : em.update(json(next));  // in place / adopted
        if (em.lastFailure()) FAIL("seed " << seed << ": " << em.lastFailure()->message);
        if (same != events.empty()) FAIL("seed " << seed << " step " << step << ": no-op mismatch");
        if (same) {
          ++noops;
          REQUIRE(em.seq() == before);
          continue;
        }
        if (em.state() != next) FAIL("seed " << seed << ": emitter state is not the new state");
      }
      ++updates;
      REQUIRE(events.size() == 1);
      const json& ev = events[0];
      requireWellFormed(ev);
      if (ev["type"] == "STATE_DELTA") {
        ++deltas;
        const size_t deltaBytes = ev.dump().size(), snapBytes = snapshotAlternativeBytes(ev, em.state());
        if (deltaBytes > snapBytes)
          FAIL("seed " << seed << " step " << step << ": delta " << deltaBytes << " B > snapshot " << snapBytes << " B");
      } else {
        ++snapshots;
      }
      auto out = feed(eng, StateEmitter::encode(ev));
      agui_sync::Code reason{};
      if (hasResync(out, &reason) || eng.status() != SyncStatus::Synced || eng.state() != em.state() ||
          eng.lastSeq() != em.seq())
        FAIL("seed " << seed << " step " << step << ": receiver diverged (" << reason << ")\nevent "
                     << ev.dump() << "\nemitter  " << em.state().dump() << "\nreceiver " << eng.state().dump());
    }
    digestChecks += eng.metrics().digestChecks;
  }
  INFO("updates " << updates << " deltas " << deltas << " snapshots " << snapshots << " patches " << patches
                  << " no-ops " << noops << " digest checks " << digestChecks);
  REQUIRE(updates >= 10000);
  REQUIRE(snapshots > 0);
  REQUIRE(deltas > snapshots);
  REQUIRE(digestChecks > 500);
}

TEST_CASE("emitter round trip: replaySince heals dropped events", "[emitter][property]") {
  size_t healedByDeltas = 0, healedBySnapshot = 0, resyncHeals = 0, dropped = 0, heals = 0;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    RandomState rs(seed * 104729u);
    EmitterOptions o;
    const size_t caps[] = {2, 6, 32, 1024};
    o.replayMaxEvents = caps[rs.uniform(0, 3)];
    o.replayMaxBytes = rs.chance(0.3) ? 2000 : (4u << 20);
    o.digestEvery = rs.chance(0.5) ? 5 : 0;
    if (rs.chance(0.5)) o.epoch = "e" + std::to_string(seed);
    StateEmitter em(o, richState(rs));
    SyncEngine eng;
    feed(eng, em.snapshotSse());
    for (int step = 0; step < 60; ++step) {
      auto events = em.update(evolve(rs, em.state()));
      for (const json& ev : events) {
        if (rs.chance(0.2)) {
          ++dropped;
          continue;
        }
        feed(eng, StateEmitter::encode(ev));
      }
      if (!rs.chance(0.25) && step != 59) continue;
      // The client reconnects with its lastSeq (and epoch); the server replays.
      ++heals;
      if (rs.chance(0.15)) {  // the connection broke first: a gap still open becomes a resync
        std::vector<agui_sync::Outcome> ended;
        eng.end(ended);
        eng.reset();
      }
      std::vector<json> replay;
      if (eng.status() == SyncStatus::Resyncing) {
        // A resyncing receiver holds deltas until a snapshot; answer with one.
        replay = {em.snapshot()};
        ++resyncHeals;
      } else {
        REQUIRE(eng.lastSeq().has_value());
        const uint64_t last = *eng.lastSeq();
        replay = em.replaySince(last, eng.epoch().value_or(""));
        if (last == em.seq()) REQUIRE(replay.empty());
        if (!replay.empty() && replay[0]["type"] == "STATE_DELTA") {
          REQUIRE(last >= em.replayFloor());  // only what the ring covers comes as deltas
          REQUIRE(replay[0]["metadata"][kWireKey]["baseSeq"] == last);
          ++healedByDeltas;
        } else if (!replay.empty()) {
          ++healedBySnapshot;
        }
      }
      feedAndRequireHealed(eng, em, replay, seed, step);
    }
  }
  INFO("heals " << heals << " by deltas " << healedByDeltas << " by snapshot " << healedBySnapshot
                << " after resync " << resyncHeals << " dropped " << dropped);
  REQUIRE(dropped > 1000);
  REQUIRE(healedByDeltas > 300);
  REQUIRE(healedBySnapshot > 50);
  REQUIRE(resyncHeals > 10);
}
