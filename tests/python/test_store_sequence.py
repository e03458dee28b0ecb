"""sequence_state / StateSequencer / StateSyncMiddleware with a store: each
thread's emitter is bound to its threadId there, so another instance (or a
restarted one) continues the thread's epoch and seq and catches a client up
by replay. The middleware reads the client's position from its
X-AGUI-State-* headers and says how it caught it up in X-AGUI-State-Sync."""

from __future__ import annotations

import json

import pytest

from agui_state_sync import AguiSyncError, StateSequencer, StateSyncMiddleware, SyncEngine, memory_store, sequence_state
from agui_state_sync.durable import DurableStateEmitter

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402


def states_of(first, n):
    return [{"plan": "p", "step": first + i, "notes": "n" * 600} for i in range(n)]


def agent_of(states):
    async def agent(run_input):
        yield {"type": "RUN_STARTED", "threadId": run_input["threadId"], "runId": run_input["runId"]}
        for state in states:
            yield {"type": "STATE_SNAPSHOT", "snapshot": state}
        yield {"type": "RUN_FINISHED", "threadId": run_input["threadId"], "runId": run_input["runId"]}
    return agent


def run_input(run, state=None, state_sync=None):
    forwarded = {} if state_sync is None else {"stateSync": state_sync}
    return {"threadId": "t", "runId": run, "state": state or {}, "messages": [], "tools": [], "context": [],
            "forwardedProps": forwarded}


async def collect(stream, client):
    out = b""
    async for chunk in stream:
        out += chunk
        client.feed(chunk)
    return out


async def test_another_instance_continues_the_thread_and_replays():
    store = memory_store()
    first, second = StateSequencer(store=store), StateSequencer(store=store)
    client = SyncEngine()
    await collect(first.run(agent_of(states_of(0, 4)), run_input("r1", state_sync={}), sse=True), client)
    emitter = first.emitter_for("t")
    assert isinstance(emitter, DurableStateEmitter) and client.status == "synced"
    seen = client.last_seq
    # The next run lands on the other instance: same epoch, the seq goes on, no snapshot.
    position = {"lastSeq": client.last_seq, "epoch": client.epoch}
    out = await collect(second.run(agent_of(states_of(4, 3)), run_input("r2", client.state, position), sse=True),
                        client)
    assert second.emitter_for("t").epoch == emitter.epoch and b"STATE_SNAPSHOT" not in out
    assert client.status == "synced" and client.state == states_of(4, 3)[-1] and client.last_seq > seen
    # A client that stayed behind on the first instance gets the second's writes replayed.
    late = await first.emitter_for("t").catch_up({"headers": {"X-AGUI-State-Seq": str(seen),
                                                               "X-AGUI-State-Epoch": emitter.epoch}})
    assert late["mode"] == "replay" and late["events"][-1]["metadata"]["agui-state-sync"]["seq"] == client.last_seq


async def test_sequence_state_with_a_store_continues_after_a_restart():
    store, client = memory_store(), SyncEngine()
    await collect(sequence_state(agent_of(states_of(0, 2)), run_input("r1", state_sync={}), store=store, sse=True),
                  client)
    restarted = StateSequencer(store=store)  # a new process: nothing in memory, the store holds the thread
    position = {"lastSeq": client.last_seq, "epoch": client.epoch}
    out = await collect(restarted.run(agent_of(states_of(2, 2)), run_input("r2", client.state, position), sse=True),
                        client)
    assert b"STATE_SNAPSHOT" not in out and client.status == "synced" and client.state == states_of(2, 2)[-1]
    with pytest.raises(TypeError):
        sequence_state(agent_of([]), run_input("r3"), store=store, sequencer=restarted)


async def test_a_client_state_behind_the_thread_is_never_written_back():
    """Issue 40: with a store, the client's RunAgentInput.state is where the agent
    starts, not a write: a client behind another instance's commit must not take
    it back. The same rule holds for a client whose state is the thread's."""
    store, client = memory_store(), SyncEngine()
    one, two = StateSequencer(store=store), StateSequencer(store=store)
    await collect(one.run(agent_of([{"a": 1, "b": 1}]), run_input("r1", state_sync={}), sse=True), client)
    stale, position = client.state, {"lastSeq": client.last_seq, "epoch": client.epoch}
    # Another instance commits b = 2 (its agent changed b only).
    other = SyncEngine()
    await collect(two.run(agent_of([{"a": 1, "b": 2}]), run_input("r2", stale, {}), sse=True), other)
    assert two.emitter_for("t").state == {"a": 1, "b": 2}
    # The stale client runs on the first instance; its agent changes a only, from the client's state.
    seq = two.emitter_for("t").seq
    await one.emitter_for("t").refresh()  # the first instance has seen b = 2 too
    await collect(one.run(agent_of([{"a": 5, "b": 1}]), run_input("r3", stale, position), sse=True), client)
    await one.emitter_for("t").refresh()
    assert one.emitter_for("t").state == {"a": 5, "b": 2}, "the other instance's b stands"
    assert one.emitter_for("t").seq == seq + 1, "one write: the agent's change, nothing for the client's state"
    assert client.status == "synced" and client.state == {"a": 5, "b": 2}


class Down:
    """A store that cannot be reached."""

    incremental_state = True

    def __getattr__(self, name):
        async def call(*args):
            raise AguiSyncError("store-unavailable", "down (test)")
        return call


def app_of(store, states):
    async def agent(request: Request):
        body = await request.json()

        async def stream():
            async for event in agent_of(states)(body):
                yield f"data: {json.dumps(event)}\n\n"
        return StreamingResponse(stream(), media_type="text/event-stream")
    app = starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])
    app.add_middleware(StateSyncMiddleware, paths=["/agent"], store=store)
    return app


async def post(app, payload, headers=None):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        return await http.post("/agent", json=payload, headers=headers or {})


async def test_the_middleware_reads_the_position_from_headers_and_says_how_it_caught_up():
    store, client = memory_store(), SyncEngine()
    one, two = app_of(store, states_of(0, 3)), app_of(store, [])
    response = await post(one, run_input("r1", state_sync={}))
    assert response.headers["x-agui-state-sync"] == "snapshot"
    client.feed(response.content)
    here = {"X-AGUI-State-Seq": str(client.last_seq), "X-AGUI-State-Epoch": client.epoch}
    # The other instance: a client exactly where the thread is needs nothing.
    response = await post(two, run_input("r2", client.state), here)
    assert response.status_code == 200 and response.headers["x-agui-state-sync"] == "current"
    # Nothing to send still answers, as Node's writeCatchUp: a heartbeat at the client's seq after RUN_STARTED.
    beat = b": hb %d\n\n" % client.last_seq
    assert beat in response.content and response.content.index(b"RUN_STARTED") < response.content.index(beat)
    behind = {"X-AGUI-State-Seq": str(client.last_seq - 1), "X-AGUI-State-Epoch": client.epoch}
    response = await post(two, run_input("r3", client.state, {"lastSeq": 0, "epoch": "stale"}), behind)
    assert response.headers["x-agui-state-sync"] == "replay"  # the headers win over forwardedProps.stateSync
    wrong = {**here, "X-AGUI-Resync-Reason": "digest-mismatch"}
    assert (await post(two, run_input("r4", client.state), wrong)).headers["x-agui-state-sync"] == "snapshot"
    assert "x-agui-state-sync" not in (await post(two, run_input("r5", client.state))).headers  # nobody asked


async def test_the_middleware_answers_503_when_the_store_is_unreachable():
    response = await post(app_of(Down(), states_of(0, 1)), run_input("r1", state_sync={}))
    assert response.status_code == 503 and response.json()["code"] == "store-unavailable"
