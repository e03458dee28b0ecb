"""sequence_state(): an AG-UI agent's stream (ag_ui.core objects, dicts, or
SSE text from the SDK's EventEncoder) sequenced per thread; a Python
SyncEngine reading the result ends synced on the agent's state."""

from __future__ import annotations

import random

import pytest

from agui_state_sync import StateSequencer, SyncEngine

pytestmark = pytest.mark.anyio
core = pytest.importorskip("ag_ui.core")
encoder_module = pytest.importorskip("ag_ui.encoder")


def node_states(n, rnd):
    """A LangGraph-shaped run: the whole state at each node exit, a few fields changed each time."""
    state = {"messages": [f"m{i}" * 20 for i in range(40)], "plan": {"step": 0, "notes": "x" * 2000}, "count": 0}
    for i in range(n):
        state = {**state, "plan": {**state["plan"], "step": i}, "count": rnd.randrange(100)}
        yield state


def langgraph_run(thread, run, states):
    async def agent(run_input):
        yield core.RunStartedEvent(thread_id=thread, run_id=run)
        for state in states:
            yield core.StateSnapshotEvent(snapshot=state)
        yield core.RunFinishedEvent(thread_id=thread, run_id=run)
    return agent


def run_input(thread="t", run="r", state=None, state_sync=None):
    forwarded = {} if state_sync is None else {"stateSync": state_sync}
    return core.RunAgentInput(thread_id=thread, run_id=run, state=state or {}, messages=[], tools=[], context=[],
                              forwarded_props=forwarded)


async def collect(sequencer, agent, given, client=None):
    out = b""
    async for chunk in sequencer.run(agent, given, sse=True):
        out += chunk
        if client is not None:
            client.feed(chunk)
    return out


async def test_snapshots_become_deltas_and_the_client_ends_synced():
    states = list(node_states(60, random.Random(7)))
    sequencer, client = StateSequencer(), SyncEngine()
    out = await collect(sequencer, langgraph_run("t", "r", states), run_input(state_sync={}), client)
    encoder = encoder_module.EventEncoder()
    bytes_in = sum(len(encoder.encode(core.StateSnapshotEvent(snapshot=s))) for s in states)
    assert client.status == "synced" and client.state == states[-1]
    assert client.last_seq == sequencer.emitter_for("t").seq
    assert len(out) < 0.1 * bytes_in  # deltas, not 60 copies of the state
    # The catch-up (the run starts from {}) and the first node exit; the other 59 are deltas.
    assert out.count(b"STATE_SNAPSHOT") == 2 and out.count(b"STATE_DELTA") == 59


async def test_sse_text_from_the_sdk_encoder_in_any_chunking():
    states = list(node_states(10, random.Random(3)))
    encoder = encoder_module.EventEncoder()
    text = "".join(encoder.encode(e) for e in [core.RunStartedEvent(thread_id="t", run_id="r"),
                                                *[core.StateSnapshotEvent(snapshot=s) for s in states],
                                                core.RunFinishedEvent(thread_id="t", run_id="r")])
    rnd = random.Random(11)
    cuts = sorted(rnd.sample(range(1, len(text)), 40))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]

    async def agent(_):
        for chunk in chunks:
            yield chunk
    client = SyncEngine()
    await collect(StateSequencer(), agent, run_input(state_sync={}), client)
    assert client.status == "synced" and client.state == states[-1]


async def test_a_reconnecting_client_gets_a_replay_after_run_started():
    sequencer, client = StateSequencer(), SyncEngine()
    states = list(node_states(5, random.Random(1)))
    await collect(sequencer, langgraph_run("t", "r1", states[:3]), run_input(run="r1", state_sync={}), client)
    seq_before = client.last_seq
    more = states[3:]
    position = {"lastSeq": client.last_seq, "epoch": client.epoch}
    # The next run's input state is the client's: nothing to move, only the new writes follow.
    out = await collect(sequencer, langgraph_run("t", "r2", more), run_input(run="r2", state=client.state,
                                                                              state_sync=position), client)
    assert out.index(b"RUN_STARTED") < out.index(b"STATE_DELTA") and b"STATE_SNAPSHOT" not in out
    assert client.status == "synced" and client.state == states[-1] and client.last_seq > seq_before


async def test_client_edits_are_judged_before_the_agent_runs_and_acknowledged():
    sequencer, client = StateSequencer(edits={"ownership": {"/plan": "agent"}}), SyncEngine()
    await collect(sequencer, langgraph_run("t", "r1", [{"limit": 10, "plan": "p"}]), run_input(state_sync={}), client)
    assert client.edit([{"op": "replace", "path": "/limit", "value": 50}])["ok"]
    assert client.edit([{"op": "replace", "path": "/plan", "value": "mine"}])["ok"]
    seen = {}

    async def agent(prepared):
        seen.update(prepared)
        yield {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}
        yield {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/done", "value": True}]}
        yield {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}
    given = client.run_input()
    state_sync = {**given["forwardedProps"]["stateSync"], "lastSeq": client.last_seq, "epoch": client.epoch}
    await collect(sequencer, agent, run_input(run="r2", state=given["state"], state_sync=state_sync), client)
    assert seen["state"] == {"limit": 50, "plan": "p"}  # the accepted edit, not the agent-owned one
    assert "edits" not in seen["forwardedProps"]["stateSync"]
    assert client.pending_edits() == [] and client.status == "synced"
    assert client.state == {"limit": 50, "plan": "p", "done": True} == sequencer.emitter_for("t").state


@pytest.mark.parametrize("epoch", ["an-earlier-instance", 7])
async def test_edits_made_in_another_epoch_are_judged_as_made_at_the_threads_start(epoch):
    # The engine places baseSeqs (src/emit/state_emitter.cpp): the agent wrote /limit after the
    # emitter's start, which a client of another incarnation cannot have seen, so a conflict.
    sequencer, client = StateSequencer(), SyncEngine()
    await collect(sequencer, langgraph_run("t", "r1", [{"limit": 10}]), run_input(state_sync={}), client)
    assert client.edit([{"op": "replace", "path": "/limit", "value": 50}])["ok"]
    given = client.run_input()
    state_sync = {**given["forwardedProps"]["stateSync"], "lastSeq": client.last_seq, "epoch": epoch}
    await collect(sequencer, langgraph_run("t", "r2", []), run_input(run="r2", state=given["state"], state_sync=state_sync))
    emitter = sequencer.emitter_for("t")
    assert emitter.state == {"limit": 10}
    [verdict] = [a for e in emitter.replay_since(0) for a in (e.get("metadata", {}).get("agui-state-sync", {}).get("acks") or [])]
    assert (verdict["status"], verdict["reason"]) == ("rejected", "conflict")


async def test_a_delta_that_does_not_apply_suspends_the_run_until_its_next_snapshot():
    reports = []
    sequencer, client = StateSequencer(on_inconsistent=reports.append), SyncEngine()

    async def agent(_):
        yield {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
        yield {"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}
        yield {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/missing", "value": 2}]}
        yield {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 3}]}
        yield {"type": "STATE_SNAPSHOT", "snapshot": {"n": 4}}
    await collect(sequencer, agent, run_input(state_sync={}), client)
    assert [r["reason"] for r in reports] == ["refused", "suspended"]
    assert reports[0]["error"].code == "patch-failed"
    assert client.state == {"n": 4} and client.status == "synced"


async def test_a_snapshot_from_a_run_older_than_another_writer_is_rebased():
    sequencer = StateSequencer()
    await collect(sequencer, langgraph_run("t", "r0", [{"a": 0, "b": 0}]), run_input())

    async def slow_agent(_):
        yield {"type": "RUN_STARTED", "threadId": "t", "runId": "rA"}
        yield {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "b": 0}}  # the agent changed only a
    run_a = sequencer.run(slow_agent, run_input(run="rA", state={"a": 0, "b": 0}))
    first = await run_a.__anext__()
    assert first["type"] == "RUN_STARTED"
    # Meanwhile another run writes b.
    await collect(sequencer, langgraph_run("t", "rB", [{"a": 0, "b": 9}]), run_input(run="rB", state={"a": 0, "b": 0}))
    rest = [e async for e in run_a]
    assert [e["type"] for e in rest] in (["STATE_DELTA"], ["STATE_SNAPSHOT"])
    assert sequencer.emitter_for("t").state == {"a": 1, "b": 9}  # b stands where run A did not write


async def test_sdk_delta_events_carry_their_ops_as_data():
    # ag_ui.core holds a STATE_DELTA's ops as models (MoveOperation's "from" is
    # the field from_); a replace to None is a null value, not a missing one.
    async def agent(_):
        yield core.RunStartedEvent(thread_id="d", run_id="r")
        yield core.StateSnapshotEvent(snapshot={"a": 1, "b": {"x": 1}, "pad": "p" * 500})
        yield core.StateDeltaEvent(delta=[{"op": "replace", "path": "/a", "value": None},
                                          {"op": "move", "from": "/b", "path": "/c"}])
        yield core.RunFinishedEvent(thread_id="d", run_id="r")
    sequencer, client = StateSequencer(), SyncEngine()
    await collect(sequencer, agent, run_input(thread="d", state_sync={}), client)
    assert client.status == "synced" and client.state == {"a": None, "c": {"x": 1}, "pad": "p" * 500}


async def test_stamped_state_events_never_carry_what_ag_ui_1_0_ends_a_run_on():
    # An agent's state event with metadata: null, rawEvent: null, a fractional
    # timestamp: the stamped event drops them; well-formed fields ride along.
    async def agent(_):
        yield {"type": "RUN_STARTED", "threadId": "w", "runId": "r"}
        yield {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}, "metadata": None, "rawEvent": None, "timestamp": 1.5,
               "subagentRunId": None}
        yield {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": 2}], "metadata": {},
               "rawEvent": {"kept": True}, "timestamp": 7}
        yield {"type": "RUN_FINISHED", "threadId": "w", "runId": "r"}
    sequencer = StateSequencer()
    out = [e async for e in sequencer.run(agent, run_input(thread="w", state_sync={}))]
    first, second = [e for e in out if e["type"].startswith("STATE_")][-2:]  # after the catch-up
    assert not {"rawEvent", "timestamp", "subagentRunId"} & first.keys()
    assert isinstance(first["metadata"], dict)
    assert (second["rawEvent"], second["timestamp"]) == ({"kept": True}, 7)
