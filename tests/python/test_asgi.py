"""StateSyncMiddleware on a Starlette app whose AG-UI endpoint is unchanged:
an SSE stream from the SDK's EventEncoder comes out sequenced and heals a
Python SyncEngine; edits are judged before the endpoint runs; everything
else passes through; heartbeats while the agent is quiet."""

from __future__ import annotations

import asyncio
import json

import pytest

from agui_state_sync import StateSequencer, StateSyncMiddleware, SyncEngine

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

core = pytest.importorskip("ag_ui.core")
EventEncoder = pytest.importorskip("ag_ui.encoder").EventEncoder


def make_app(states, seen):
    async def agent(request: Request):
        run_input = core.RunAgentInput.model_validate(await request.json())
        seen.append(run_input)
        encoder = EventEncoder()

        async def stream():
            yield encoder.encode(core.RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
            for state in states:
                yield encoder.encode(core.StateSnapshotEvent(snapshot=state))
            yield encoder.encode(core.RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
        return StreamingResponse(stream(), media_type="text/event-stream")

    async def invalid(request: Request):
        return JSONResponse({"detail": "nope"}, status_code=422)

    app = starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"]),
                                           Route("/other", agent, methods=["POST"]),
                                           Route("/invalid", invalid, methods=["POST"])])
    sequencer = StateSequencer(edits={"ownership": {"/plan": "agent"}})
    app.add_middleware(StateSyncMiddleware, paths=["/agent", "/invalid"], sequencer=sequencer)
    return app, sequencer


def body(run_id="r1", state=None, state_sync=None):
    forwarded = {} if state_sync is None else {"stateSync": state_sync}
    return {"threadId": "t", "runId": run_id, "state": state or {}, "messages": [], "tools": [], "context": [],
            "forwardedProps": forwarded}


async def post(app, path, payload):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        return await client.post(path, json=payload)


async def test_the_endpoint_stream_comes_out_sequenced():
    states = [{"plan": "p", "step": i, "notes": "n" * 300} for i in range(20)]
    app, sequencer = make_app(states, [])
    response = await post(app, "/agent", body(state_sync={}))
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    client = SyncEngine()
    client.feed(response.content)
    assert client.status == "synced" and client.state == states[-1]
    assert response.content.count(b"\nid: ") + response.content.startswith(b"id: ") >= 20
    assert b"RUN_FINISHED" in response.content and sequencer.emitter_for("t").seq == client.last_seq


async def test_edits_are_judged_before_the_endpoint_runs():
    seen = []
    app, _ = make_app([{"plan": "p", "limit": 1}], seen)
    client = SyncEngine()
    client.feed((await post(app, "/agent", body(state_sync={}))).content)
    assert client.edit([{"op": "replace", "path": "/limit", "value": 5}])["ok"]
    assert client.edit([{"op": "replace", "path": "/plan", "value": "mine"}])["ok"]
    given = client.run_input()
    state_sync = {**given["forwardedProps"]["stateSync"], "lastSeq": client.last_seq, "epoch": client.epoch}
    seen.clear()
    # The same app (the same thread's emitter): the endpoint runs on the judged state.
    response = await post(app, "/agent", body("r2", given["state"], state_sync))
    assert seen[0].state == {"plan": "p", "limit": 5} and "edits" not in seen[0].forwarded_props["stateSync"]
    client.feed(response.content)
    assert client.pending_edits() == [] and client.status == "synced"  # acknowledged in the catch-up


async def test_other_paths_and_other_responses_pass_through():
    app, sequencer = make_app([{"a": 1}], [])
    plain = await post(app, "/other", body())
    assert b"id: " not in plain.content and b'"snapshot":{"a":1}' in plain.content
    invalid = await post(app, "/invalid", body())
    assert invalid.status_code == 422 and invalid.json() == {"detail": "nope"}
    not_json = await post(app, "/invalid", [1, 2])
    assert not_json.status_code == 422
    assert sequencer.emitter_for("t") is None  # the app refused /invalid (422): no thread is made (SECURITY.md)


async def test_hostile_edits_are_a_400_with_the_code():
    app, _ = make_app([{"a": 1}], [])
    response = await post(app, "/agent", body(state_sync={"edits": "not a list"}))
    assert response.status_code == 400 and response.json()["code"] == "invalid-request"


async def test_heartbeats_while_the_agent_is_quiet():
    heard = asyncio.Event()

    async def quiet_agent(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "more_body": True,
                    "body": b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'})
        await heard.wait()  # quiet until the client has heard a heartbeat
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    middleware = StateSyncMiddleware(quiet_agent, paths=["/agent"], heartbeat_s=0.001)
    out = []

    async def send(message):
        out.append(message)
        if message.get("body", b"").startswith(b": hb "):
            heard.set()
    payload = json.dumps(body(state_sync={})).encode()
    messages = iter([{"type": "http.request", "body": payload, "more_body": False}])

    async def receive():  # the client stays until its stream ends
        message = next(messages, None)
        if message is not None:
            return message
        await asyncio.Event().wait()
    await middleware({"type": "http", "method": "POST", "path": "/agent", "headers": []}, receive, send)
    chunks = [m.get("body", b"") for m in out if m["type"] == "http.response.body"]
    # A heartbeat may come first (1 ms is short on a busy machine): the first event is still RUN_STARTED.
    events = [c for c in chunks if not c.startswith(b": hb") and c]
    assert events[0].startswith(b"id: ") and b"\ndata: {" in events[0] and b"RUN_STARTED" in events[0]
    assert any(c.startswith(b": hb") for c in chunks) and out[-1] == {"type": "http.response.body", "body": b"",
                                                                      "more_body": False}
