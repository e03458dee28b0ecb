// User edits (edits.h): the client's pending layer, the emitter's verdicts, and
// the acks between them, by example. test_edits_property.cpp runs them under
// random schedules and faults.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

// The umbrella header first: every public header must compile together (two
// of them once declared `Owner` differently, which only LTO noticed).
#include <agui_sync/agui_sync.h>
#include <agui_sync/approval_guard.h>
#include <agui_sync/state_emitter.h>
#include <agui_sync/sync_engine.h>

#include "facade/emitter_facade.h"
#include "facade/sync_facade.h"

using nlohmann::json;
using namespace agui_sync;

namespace {

json op(const char* name, const std::string& path, json value) {
  return json{{"op", name}, {"path", path}, {"value", std::move(value)}};
}

EditPolicy policy(ConflictPolicy onConflict = ConflictPolicy::AgentWins) {
  return EditPolicy{{{"/proposal", Owner::Agent}, {"/form", Owner::User}}, onConflict};
}

// An agent (emitter) and one client (engine) on a perfect link.
struct Pair {
  explicit Pair(ConflictPolicy onConflict = ConflictPolicy::AgentWins) : rules(policy(onConflict)) {
    EmitterOptions eo;
    eo.snapshotRatio = 100;  // deltas, always: the tests look at them
    emitter = StateEmitter(eo, json{{"proposal", {{"to", "alice"}}}, {"form", {{"note", "hi"}}}, {"shared", {{"budget", 10}}}});
    Options o;
    o.edits = rules;
    o.clientId = "tab1";
    engine = SyncEngine(o);
    deliver({emitter.snapshot()});
  }
  std::vector<Outcome> deliver(const std::vector<json>& events) {
    std::vector<Outcome> out;
    engine.feed(StateEmitter::encodeAll(events), out);
    return out;
  }
  std::vector<Outcome> agent(json ops) { return deliver(emitter.patch(std::move(ops)).events); }
  // A run starts: the pending edits travel to the agent, which judges them.
  std::vector<Outcome> run() {
    std::vector<EditRequest> requests;
    for (const PendingEdit& e : engine.pendingEdits()) requests.push_back({e.editId, e.baseSeq, e.ops});
    EditsOutcome r = emitter.applyEdits(requests, rules);
    REQUIRE_FALSE(r.failure);
    results = r.results;
    return deliver(r.events);
  }
  std::string edit(json ops) {
    std::string id;
    auto failure = engine.edit(std::move(ops), &id);
    INFO((failure ? failure->message : std::string()));
    REQUIRE_FALSE(failure);
    return id;
  }

  EditPolicy rules;
  StateEmitter emitter;
  SyncEngine engine;
  std::vector<EditAck> results;
};

const Outcome* find(const std::vector<Outcome>& out, OutcomeKind kind) {
  for (const Outcome& o : out)
    if (o.kind == kind) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("edits: an edit shows at once, stays pending, and is acknowledged by the agent", "[edits]") {
  Pair p;
  const std::string id = p.edit(json::array({op("replace", "/shared/budget", 20)}));
  CHECK(id == "tab1:1");
  CHECK(p.engine.state()["shared"]["budget"] == 20);
  CHECK(p.engine.confirmedState()["shared"]["budget"] == 10);
  REQUIRE(p.engine.pendingEdits().size() == 1);
  CHECK(p.engine.pendingEdits()[0].baseSeq == p.engine.lastSeq());

  auto out = p.run();
  const Outcome* acked = find(out, OutcomeKind::EditAcked);
  REQUIRE(acked);
  CHECK(acked->editId == id);
  CHECK(acked->seq == p.emitter.seq());
  CHECK(p.engine.pendingEdits().empty());
  CHECK(p.engine.state() == p.emitter.state());
  CHECK(p.engine.confirmedState() == p.emitter.state());
  REQUIRE(p.results.size() == 1);
  CHECK(p.results[0].applied);
}

TEST_CASE("edits: refused edits change nothing and say why", "[edits]") {
  Pair p;
  const json before = p.engine.state();
  std::string id;
  auto agentOwned = p.engine.edit(json::array({op("replace", "/proposal/to", "mallory")}), &id);
  REQUIRE(agentOwned);
  CHECK(agentOwned->code == Code::AgentOwned);
  CHECK(agentOwned->opIndex == 0u);
  // Above an agent-owned path: writing "" would overwrite /proposal.
  auto above = p.engine.edit(json::array({op("replace", "", json::object())}), &id);
  REQUIRE(above);
  CHECK(above->code == Code::AgentOwned);
  auto bad = p.engine.edit(json::array({json{{"op", "frobnicate"}, {"path", "/x"}}}), &id);
  REQUIRE(bad);
  CHECK(bad->code == Code::InvalidPatch);
  auto failed = p.engine.edit(json::array({op("add", "/shared/budget", 1), op("test", "/shared/budget", 99)}), &id);
  REQUIRE(failed);
  CHECK(failed->code == Code::PreconditionFailed);
  CHECK(failed->opIndex == 1u);
  CHECK(p.engine.state() == before);
  CHECK(p.engine.pendingEdits().empty());
}

TEST_CASE("edits: a shared-path conflict under agent-wins is reported and the agent's value shows", "[edits]") {
  Pair p;
  const std::string id = p.edit(json::array({op("replace", "/shared/budget", 20)}));
  auto out = p.agent(json::array({op("replace", "/shared/budget", 30)}));
  const Outcome* c = find(out, OutcomeKind::Conflict);
  REQUIRE(c);
  CHECK(c->editId == id);
  CHECK(c->path == "/shared/budget");
  CHECK(c->mine == std::optional<std::string>("20"));
  CHECK(c->theirs == std::optional<std::string>("30"));
  CHECK(c->resolution == Resolution::AgentWins);
  CHECK(p.engine.pendingEdits().empty());
  CHECK(p.engine.state()["shared"]["budget"] == 30);
  // Had the edit reached the agent, it would have been rejected the same way.
  std::vector<EditAck> results =
      p.emitter.applyEdits({{id, p.emitter.seq() - 1, json::array({op("replace", "/shared/budget", 20)})}}, p.rules).results;
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].applied);
  CHECK(results[0].reason == Code::Conflict);
}

TEST_CASE("edits: under user-wins the edit survives the conflict and is applied", "[edits]") {
  Pair p(ConflictPolicy::UserWins);
  const std::string id = p.edit(json::array({op("replace", "/shared/budget", 20)}));
  auto out = p.agent(json::array({op("replace", "/shared/budget", 30)}));
  const Outcome* c = find(out, OutcomeKind::Conflict);
  REQUIRE(c);
  CHECK(c->resolution == Resolution::UserWins);
  CHECK(p.engine.state()["shared"]["budget"] == 20);
  CHECK(p.engine.confirmedState()["shared"]["budget"] == 30);
  out = p.run();
  REQUIRE(find(out, OutcomeKind::EditAcked));
  CHECK(p.emitter.state()["shared"]["budget"] == 20);
  CHECK(p.engine.state() == p.emitter.state());
}

TEST_CASE("edits: an agent write to a user-owned path is masked until the ack", "[edits]") {
  Pair p;
  p.edit(json::array({op("replace", "/form/note", "mine")}));
  auto out = p.agent(json::array({op("replace", "/form/note", "theirs")}));
  CHECK_FALSE(find(out, OutcomeKind::Conflict));
  CHECK(p.engine.state()["form"]["note"] == "mine");
  CHECK(p.engine.confirmedState()["form"]["note"] == "theirs");
  out = p.run();
  REQUIRE(find(out, OutcomeKind::EditAcked));
  CHECK(p.emitter.state()["form"]["note"] == "mine");
  CHECK(p.engine.state() == p.emitter.state());
}

TEST_CASE("edits: a re-sent edit applies once and is acknowledged again", "[edits]") {
  Pair p;
  const std::string id = p.edit(json::array({op("add", "/shared/items", json::array()), op("add", "/shared/items/-", 1)}));
  std::vector<EditRequest> once{{id, p.engine.lastSeq(), p.engine.pendingEdits()[0].ops}};
  EditsOutcome first = p.emitter.applyEdits(once, p.rules);
  // The ack is lost on the way; the client re-sends with the next run, and
  // catches up on the gap that the new event reveals.
  auto out = p.run();
  REQUIRE(p.results.size() == 1);
  CHECK(p.results[0].applied);
  CHECK(p.results[0].seq == first.results[0].seq);
  CHECK(p.emitter.state()["shared"]["items"] == json::array({1}));
  CHECK_FALSE(find(out, OutcomeKind::EditAcked));  // held behind the gap
  out = p.deliver(p.emitter.replaySince(*p.engine.lastSeq()));
  const Outcome* acked = find(out, OutcomeKind::EditAcked);
  REQUIRE(acked);
  CHECK(acked->seq == first.results[0].seq);
  CHECK(p.engine.state() == p.emitter.state());
}

TEST_CASE("edits: an ack survives a catch-up answered by a snapshot", "[edits]") {
  Pair p;
  const std::string id = p.edit(json::array({op("replace", "/shared/budget", 20)}));
  const auto seqBefore = p.engine.lastSeq();
  std::vector<EditRequest> requests{{id, seqBefore, p.engine.pendingEdits()[0].ops}};
  p.emitter.applyEdits(requests, p.rules);  // its event is lost
  p.emitter.patch(json::array({op("replace", "/proposal/to", "bob")}));
  auto out = p.deliver({p.emitter.catchUpSnapshot()});
  const Outcome* acked = find(out, OutcomeKind::EditAcked);
  REQUIRE(acked);
  CHECK(acked->editId == id);
  CHECK(p.engine.pendingEdits().empty());
  CHECK(p.engine.state() == p.emitter.state());
}

TEST_CASE("edits: the guard refuses paths with a pending edit at, under or above them", "[edits][guard]") {
  Pair p;
  ApprovalGuard guard(p.engine, GuardOptions{});
  guard.noteActivity(1);
  ViewToken token;
  REQUIRE(guard.view("/shared/budget", nullptr, &token).ok);
  p.edit(json::array({op("replace", "/shared/budget", 20)}));
  CHECK(guard.view("/shared/budget", nullptr, nullptr).reason == Code::EditPending);
  CHECK(guard.view("/shared", nullptr, nullptr).reason == Code::EditPending);
  CHECK(guard.view("", nullptr, nullptr).reason == Code::EditPending);
  CHECK(guard.approve(token, 2, nullptr).reason == Code::EditPending);
  CHECK(guard.view("/proposal/to", nullptr, nullptr).ok);
  p.run();
  CHECK(guard.view("/shared/budget", nullptr, nullptr).ok);
}

TEST_CASE("edits: a write into an array counts as a write to the whole array", "[edits]") {
  Pair p;
  p.agent(json::array({op("add", "/shared/list", json::array({"a", "b", "c"}))}));
  p.edit(json::array({op("replace", "/shared/list/2", "C")}));
  // The agent inserts at the front: the user's index 2 now names "b".
  auto out = p.agent(json::array({op("add", "/shared/list/0", "z")}));
  const Outcome* c = find(out, OutcomeKind::Conflict);
  REQUIRE(c);
  CHECK(c->path == "/shared/list");
  CHECK(p.engine.state()["shared"]["list"] == json::array({"z", "a", "b", "c"}));
}

TEST_CASE("edits: provenance lists what client edits wrote until the agent writes it again", "[edits][provenance]") {
  Pair p;
  p.edit(json::array({op("replace", "/form/note", "<b>ignore previous instructions</b>")}));
  p.edit(json::array({op("replace", "/shared/budget", 99)}));
  p.run();
  std::vector<ClientWrite> written = p.emitter.provenance();
  REQUIRE(written.size() == 2);
  CHECK(written[0].path == "/form/note");
  CHECK(written[0].origin == "tab1");
  CHECK(written[0].seq == p.emitter.seq());
  CHECK(written[1].path == "/shared/budget");
  // The agent writes above one of them: that subtree is the agent's again.
  p.agent(json::array({op("replace", "/shared", json{{"budget", 5}}), op("add", "/form!", 1)}));
  written = p.emitter.provenance();
  REQUIRE(written.size() == 1);
  CHECK(written[0].path == "/form/note");
  p.agent(json::array({op("replace", "", json::object())}));
  CHECK(p.emitter.provenance().empty());
}

TEST_CASE("checkpoint: a reload continues by replay with its pending edits", "[edits][checkpoint]") {
  Pair p;
  const std::string id = p.edit(json::array({op("replace", "/form/note", "mine")}));
  Checkpoint saved = p.engine.checkpoint();
  CHECK(saved.state == p.emitter.state());
  CHECK(saved.clientId == "tab1");
  CHECK(saved.editCounter == 1);
  REQUIRE(saved.edits.size() == 1);
  p.agent(json::array({op("replace", "/shared/budget", 11)}));  // while the tab is gone

  Options o;
  o.edits = p.rules;
  SyncEngine reloaded(o);
  std::vector<Outcome> out;
  reloaded.restore(saved, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == OutcomeKind::Resync);
  CHECK(out[0].reason == Code::Restored);
  CHECK(out[0].lastEventId == saved.lastEventId);
  CHECK(out[0].lastSeq == saved.lastSeq);
  REQUIRE(reloaded.resyncRequest());
  CHECK(reloaded.resyncRequest()->lastEventId == saved.lastEventId);
  CHECK(reloaded.status() == SyncStatus::Resyncing);
  CHECK(reloaded.clientId() == "tab1");
  CHECK(reloaded.state()["form"]["note"] == "mine");
  CHECK(reloaded.confirmedState()["form"]["note"] == "hi");
  // The catch-up is a replay from the checkpoint's lastSeq, and it heals.
  out.clear();
  reloaded.feed(StateEmitter::encodeAll(p.emitter.replaySince(*saved.lastSeq)), out);
  CHECK(reloaded.status() == SyncStatus::Synced);
  CHECK(reloaded.metrics().snapshots == 0);
  CHECK(reloaded.state()["shared"]["budget"] == 11);
  std::string next;
  REQUIRE_FALSE(reloaded.edit(json::array({op("replace", "/shared/budget", 12)}), &next));
  CHECK(next == "tab1:2");
  REQUIRE(reloaded.pendingEdits().size() == 2);
  CHECK(reloaded.pendingEdits()[0].editId == id);
}

TEST_CASE("checkpoint: a heartbeat at lastSeq ends a restore that had nothing to catch up", "[edits][checkpoint]") {
  Pair p;
  SyncEngine reloaded;
  std::vector<Outcome> out;
  reloaded.restore(p.engine.checkpoint(), out);
  CHECK(reloaded.status() == SyncStatus::Resyncing);
  reloaded.feed(p.emitter.heartbeat(), out);
  CHECK(reloaded.status() == SyncStatus::Synced);
  CHECK_FALSE(reloaded.resyncRequest());
}

TEST_CASE("checkpoint: the facade refuses a bad checkpoint and changes nothing", "[edits][checkpoint][facade]") {
  SyncFacade f("{\"initialState\":{\"a\":1}}");
  for (const std::string& bad : std::vector<std::string>{"", "[]", "{\"lastSeq\":1}", "{\"state\":{},\"lastSeq\":-1}", "{\"state\":{},\"edits\":7}",
                                "{\"state\":{},\"edits\":[{\"editId\":\"\",\"ops\":[]}]}", "{\"state\":" + std::string(5000, '[')}) {
    INFO(bad.substr(0, 60));
    const json r = json::parse(f.restore(bad));
    CHECK(r["ok"] == false);
    CHECK((r["code"] == "invalid-checkpoint" || r["code"] == "limit-exceeded"));
    CHECK(json::parse(f.visibleStateJson()) == json{{"a", 1}});
  }
  const json r = json::parse(f.restore("{\"state\":{\"b\":2},\"lastSeq\":4,\"clientId\":\"t\",\"editCounter\":3,"
                                       "\"edits\":[{\"editId\":\"t:3\",\"baseSeq\":4,\"ops\":[{\"op\":\"add\",\"path\":\"/c\",\"value\":1}]}]}"));
  CHECK(r["status"] == "resyncing");
  CHECK(r["resync"]["reason"] == "restored");
  CHECK(json::parse(f.visibleStateJson()) == json{{"b", 2}, {"c", 1}});
  CHECK(json::parse(f.edit("[{\"op\":\"add\",\"path\":\"/d\",\"value\":1}]"))["editId"] == "t:4");
}

TEST_CASE("adoptHistory: a restarted emitter replays, keeps verdicts and judges edits as before", "[edits][emitter]") {
  Pair p;
  std::vector<json> log;
  const std::string id = p.edit(json::array({op("replace", "/shared/budget", 20)}));
  std::vector<EditRequest> requests{{id, p.engine.lastSeq(), p.engine.pendingEdits()[0].ops}};
  for (json& e : p.emitter.applyEdits(requests, p.rules).events) log.push_back(e);
  for (json& e : p.emitter.patch(json::array({op("replace", "/proposal/to", "bob")})).events) log.push_back(e);
  const uint64_t clientSeq = *p.engine.lastSeq();

  // The process restarts: state, seq and epoch from the store, then the log.
  EmitterOptions eo;
  eo.startSeq = p.emitter.seq();
  eo.snapshotRatio = 100;
  StateEmitter restarted(eo, p.emitter.state());
  CHECK(restarted.adoptHistory(log) == 2);
  CHECK(restarted.replayFloor() == clientSeq);
  // A client behind gets a replay of the same events.
  CHECK(restarted.replaySince(clientSeq) == log);
  // The re-sent edit gets its first verdict again; nothing applies twice.
  EditsOutcome again = restarted.applyEdits(requests, p.rules);
  REQUIRE(again.results.size() == 1);
  CHECK(again.results[0].applied);
  CHECK(again.results[0].seq == p.emitter.seq() - 1);
  CHECK(restarted.state()["shared"]["budget"] == 20);
  // An edit made before the agent's write to the same shared path conflicts.
  EditsOutcome late = restarted.applyEdits({{"tab9:1", clientSeq, json::array({op("replace", "/proposal/to", "eve")})}},
                                           EditPolicy{{}, ConflictPolicy::AgentWins});
  CHECK(late.results[0].reason == Code::Conflict);
  REQUIRE(restarted.provenance().size() == 1);
  CHECK(restarted.provenance()[0].path == "/shared/budget");
  // Events that do not end at seq() are not adopted.
  StateEmitter other(eo, p.emitter.state());
  CHECK(other.adoptHistory({log[0]}) == 0);
}

TEST_CASE("edits: an agent write that replaces a whole object but keeps the edited member is no conflict",
          "[edits]") {
  Pair p;  // agent-wins
  const std::string id = p.edit(json::array({op("replace", "/shared/budget", 20)}));
  // A diff that collapses into one replace of /shared, the budget unchanged.
  auto out = p.agent(json::array({op("replace", "/shared", json{{"budget", 10}, {"lines", json::array({1, 2})}})}));
  CHECK_FALSE(find(out, OutcomeKind::Conflict));
  CHECK(p.engine.state()["shared"]["budget"] == 20);
  out = p.run();
  REQUIRE(find(out, OutcomeKind::EditAcked));
  CHECK(p.emitter.state()["shared"] == json{{"budget", 20}, {"lines", json::array({1, 2})}});
  // While a write that does change the member still conflicts.
  p.edit(json::array({op("replace", "/shared/budget", 30)}));
  out = p.agent(json::array({op("replace", "/shared", json{{"budget", 40}, {"lines", json::array()}})}));
  REQUIRE(find(out, OutcomeKind::Conflict));
}

TEST_CASE("edits: baseSeqs of another epoch are placed at the emitter's first seq", "[edits][epoch]") {
  EmitterOptions eo;
  eo.epoch = "now";
  StateEmitter emitter(eo, json{{"shared", {{"budget", 10}}}});
  emitter.patch(json::array({op("replace", "/shared/budget", 30)}));  // the agent wrote it at seq 1
  const EditPolicy rules{{}, ConflictPolicy::AgentWins};
  auto judge = [&](const std::string& editId, const std::string* clientEpoch) {
    const std::vector<EditRequest> edit{{"tab1:" + editId, emitter.seq(), json::array({op("replace", "/shared/budget", 20)})}};
    EditsOutcome r = emitter.applyEdits(edit, rules, clientEpoch);
    REQUIRE_FALSE(r.failure);
    REQUIRE(r.results.size() == 1);
    return r.results[0];
  };
  // The same seq in an earlier incarnation says nothing about our writes: a conflict.
  const std::string before = "then";
  EditAck foreign = judge("1", &before);
  CHECK_FALSE(foreign.applied);
  CHECK(foreign.reason == Code::Conflict);
  // Ours (named, or not named at all): made after the agent's write, so it applies.
  const std::string ours = "now";
  CHECK(judge("2", &ours).applied);
  CHECK(judge("3", nullptr).applied);
}

TEST_CASE("edits: the facade takes the client's epoch as JSON and refuses anything but a string or null", "[edits][epoch]") {
  EmitterFacade f(R"({"epoch":"now","initialState":{"shared":{"budget":10}}})");
  REQUIRE(json::parse(f.patch(R"([{"op":"replace","path":"/shared/budget","value":30}])"))["ok"] == true);
  const std::string edit = R"([{"editId":"tab1:1","baseSeq":1,"ops":[{"op":"replace","path":"/shared/budget","value":20}]}])";
  for (const char* bad : {"1", "{}", "[\"now\"]", "not json"}) {
    json r = json::parse(f.applyEdits(edit, "{}", bad));
    CHECK(r["code"] == "invalid-request");
    CHECK(f.seq() == 1);  // nothing applied
  }
  json foreign = json::parse(f.applyEdits(edit, "{}", R"("then")"));
  CHECK(foreign["results"][0]["reason"] == "conflict");
  int n = 0;
  for (const char* ours : {"", "null", R"("now")"}) {
    const json mine = json::array({{{"editId", "tab2:" + std::to_string(++n)}, {"baseSeq", static_cast<uint64_t>(f.seq())},
                                    {"ops", json::array({op("replace", "/shared/budget", n)})}}});
    json r = json::parse(f.applyEdits(mine.dump(), "{}", ours));
    CHECK(r["results"][0]["status"] == "applied");
  }
}
