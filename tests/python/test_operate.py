"""ops_app over StateSyncMiddleware (operate.py): liveness, readiness with the
store and the server's shutdown, and Prometheus counters checked against what
the clients really received, over seeded runs."""

from __future__ import annotations

import asyncio
import random

import pytest

from agui_state_sync import StateSyncMiddleware, SyncEngine, memory_store
from agui_state_sync.operate import ops_app

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
prom_parser = pytest.importorskip("prometheus_client.parser")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

core = pytest.importorskip("ag_ui.core")
EventEncoder = pytest.importorskip("ag_ui.encoder").EventEncoder


def agent_app(runs, sent=None):
    """An unchanged AG-UI endpoint: each run streams the states its test gave for its runId
    (``sent``: {"bytes": n, type: n} of what it wrote, when given)."""
    async def agent(request: Request):
        run_input = core.RunAgentInput.model_validate(await request.json())
        encoder = EventEncoder()

        def encoded(event):
            text = encoder.encode(event)
            if sent is not None:
                sent["bytes"] = sent.get("bytes", 0) + len(text.encode())
                sent[event.type.value] = sent.get(event.type.value, 0) + 1
            return text

        async def stream():
            yield encoded(core.RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
            for state in runs[run_input.run_id]:
                yield encoded(core.StateSnapshotEvent(snapshot=state))
            yield encoded(core.RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
        return StreamingResponse(stream(), media_type="text/event-stream")
    return starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])


def run_body(thread, run, state_sync):
    return {"threadId": thread, "runId": run, "state": {}, "messages": [], "tools": [], "context": [],
            "forwardedProps": {"stateSync": state_sync}}


async def get(app, path):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://ops") as client:
        return await client.get(path)


def metrics(text):
    """{(name, frozenset(labels)): value} of a Prometheus text page."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in prom_parser.text_string_to_metric_families(text) for s in family.samples}


@pytest.mark.parametrize("seed", range(5))
async def test_counters_match_what_the_clients_received(seed):
    rnd = random.Random(seed)
    runs, upstream = {}, {}
    middleware = StateSyncMiddleware(agent_app(runs, upstream), paths=["/agent"], store=memory_store(), heartbeat_s=None)
    ops = ops_app(middleware)
    received, reasons, connections = b"", {}, {}
    clients = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=middleware), base_url="http://agent") as http:
        for n in range(rnd.randrange(3, 8)):
            thread = f"t{rnd.randrange(2)}"
            state = {"step": 0, "notes": "x" * rnd.randrange(10, 400)}
            runs[f"r{n}"] = [state := {**state, "step": i} for i in range(rnd.randrange(1, 6))]
            client = clients.setdefault(thread, SyncEngine())
            state_sync = {"lastSeq": client.last_seq, "epoch": client.epoch}
            said = rnd.choice(["3g", "4g", "warp-9", None])  # what a browser reports, or a made-up value
            connection = said if said in ("3g", "4g") else "unknown"
            if said is not None:
                state_sync["connection"] = said
            connections[connection] = connections.get(connection, 0) + 1
            if rnd.random() < 0.4:
                reason = rnd.choice(["gap", "digest-mismatch", "made-up"])
                state_sync["reason"] = reason
                key = (reason if reason != "made-up" else "other", connection)
                reasons[key] = reasons.get(key, 0) + 1
            response = await http.post("/agent", json=run_body(thread, f"r{n}", state_sync))
            client.feed(response.content)
            assert client.status == "synced" and client.state == runs[f"r{n}"][-1]
            received += response.content
    page = await get(ops, "/metrics")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    seen = metrics(page.text)
    assert seen[("agui_middleware_runs_started_total", frozenset())] == len(runs)
    assert seen[("agui_middleware_client_bytes_total", frozenset())] == len(received)
    assert seen[("agui_middleware_upstream_bytes_total", frozenset())] == upstream.pop("bytes")
    for kind, count in upstream.items():  # what the agent wrote, event by event
        assert seen[("agui_middleware_events_received_total", frozenset({("type", kind)}))] == count, kind
    for kind in ("STATE_SNAPSHOT", "STATE_DELTA", "RUN_STARTED", "RUN_FINISHED"):
        sent = seen.get(("agui_middleware_events_sent_total", frozenset({("type", kind)})), 0)
        assert sent == received.count(f'"type":"{kind}"'.encode()), kind
    modes = {dict(labels)["mode"]: v for (name, labels), v in seen.items() if name == "agui_middleware_catch_ups_total"}
    assert sum(modes.values()) == len(runs)
    for (reason, connection), count in reasons.items():
        labels = frozenset({("reason", reason), ("connection", connection)})
        assert seen[("agui_middleware_resyncs_total", labels)] == count
    for connection, count in connections.items():
        assert seen[("agui_middleware_runs_by_connection_total", frozenset({("connection", connection)}))] == count
    assert "warp-9" not in page.text and "made-up" not in page.text  # a client cannot mint labels
    assert seen[("agui_middleware_threads", frozenset())] == len(clients)
    assert seen[("agui_middleware_live_runs", frozenset())] == 0


async def test_liveness_readiness_and_draining():
    middleware = StateSyncMiddleware(agent_app({}), paths=["/agent"], store=memory_store())
    ops = ops_app(middleware)
    assert (await get(ops, "/healthz")).json() == {"status": "ok"}
    assert (await get(ops, "/readyz")).json() == {"status": "ready"}
    # The server says it shuts down (ASGI lifespan): not ready, still alive.
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]

    async def receive():
        return messages.pop(0)

    async def send(message):
        pass
    await middleware({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert middleware.draining
    ready = await get(ops, "/readyz")
    assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
    assert (await get(ops, "/healthz")).status_code == 200
    assert (await get(ops, "/nope")).status_code == 404


async def test_a_store_that_does_not_answer_is_not_ready():
    class Silent:  # a store whose reads never come back (a partitioned Redis)
        async def peek(self, *_):
            await asyncio.Event().wait()

    class Broken:
        async def peek(self, *_):
            raise ConnectionError("refused")

    for store in (Silent(), Broken()):
        ops = ops_app(StateSyncMiddleware(agent_app({}), paths=["/agent"]), store=store, store_timeout_s=0.05)
        ready = await get(ops, "/readyz")
        assert (ready.status_code, ready.json()) == (503, {"status": "store-unavailable"})
        probes = metrics((await get(ops, "/metrics")).text)
        assert probes[("agui_middleware_store_latency_seconds_count", frozenset())] == 1


async def test_logs_are_one_json_object_per_line_with_the_packages_fields():
    import json
    import logging
    from agui_state_sync import JsonLogFormatter, StateSequencer

    lines = []

    class Capture(logging.Handler):
        def emit(self, record):
            lines.append(self.format(record))
    handler = Capture()
    handler.setFormatter(JsonLogFormatter())
    logger = logging.getLogger("agui_state_sync")
    logger.addHandler(handler)
    try:
        async def agent(_):
            yield {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
            yield {"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}
            yield {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/missing", "value": 2}]}
        async for _ in StateSequencer().run(agent, {"threadId": "t", "runId": "r", "state": {}}):
            pass
    finally:
        logger.removeHandler(handler)
    [line] = lines
    entry = json.loads(line)
    assert entry["level"] == "warning" and entry["logger"] == "agui_state_sync" and entry["time"].endswith("Z")
    assert {k: entry[k] for k in ("event", "threadId", "runId", "type", "reason", "code")} == {
        "event": "upstream-inconsistent", "threadId": "t", "runId": "r", "type": "STATE_DELTA", "reason": "refused",
        "code": "patch-failed"}
    assert "does not apply" in entry["message"]
