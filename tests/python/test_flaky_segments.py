"""StateSyncMiddleware's flaky_segments option (issue 26, item 4; the tax
study's policy 5, decided in the core: src/emit/segment_tax.h), as the Node
proxy's flakySegments (tests/js/proxy-flaky-segments.test.mjs). A window of 4
updates and a break-even of 0.2: a '2g' client whose streams are cut, so that
it comes back behind at its next run, puts '2g' on a snapshot per update at a
window's end, and back on deltas once a window passes with nothing missed; a
'4g' client that never misses keeps deltas. Every client ends synced on the
agent's state, and /metrics says what happened. Each run is over before the
next starts, so the windows fall where the test says (no timing)."""

from __future__ import annotations

import json
import random

import pytest

from agui_state_sync import AguiSyncTypeError, StateSyncMiddleware, SyncEngine, memory_store
from agui_state_sync.operate import ops_app

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
prom_parser = pytest.importorskip("prometheus_client.parser")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

DOC = "d" * 2000  # the snapshot is far bigger than a delta: deltas pay off where nothing is missed
STATE_TYPES = ("STATE_SNAPSHOT", "STATE_DELTA")


def agent_app(states):
    """An unchanged AG-UI endpoint keeping one state per thread: a run "<name>-<k>"
    sends its state as a snapshot, then k deltas (each bumps /n and adds a line)."""
    async def agent(request: Request):
        body = await request.json()
        thread, run = body["threadId"], body["runId"]
        state = states.setdefault(thread, {"doc": DOC, "n": 0, "lines": []})

        def data(event):
            return f"data: {json.dumps(event)}\n\n".encode()

        async def stream():
            yield data({"type": "RUN_STARTED", "threadId": thread, "runId": run})
            yield data({"type": "STATE_SNAPSHOT", "snapshot": json.loads(json.dumps(state))})
            for _ in range(int(run.rsplit("-", 1)[1])):
                state["n"] += 1
                state["lines"].append(f"line {state['n']}")
                yield data({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": state["n"]},
                                                             {"op": "add", "path": "/lines/-",
                                                              "value": state["lines"][-1]}]})
            yield data({"type": "RUN_FINISHED", "threadId": thread, "runId": run})
        return StreamingResponse(stream(), media_type="text/event-stream")
    return starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])


def blocks(content):
    return [b + b"\n\n" for b in content.split(b"\n\n") if b.strip()]


def type_of(block):
    for line in block.split(b"\n"):
        if line.startswith(b"data: "):
            return json.loads(line[6:])["type"]
    return None


def seq_of(block):
    for line in block.split(b"\n"):  # the wire seq, from the event (its id names the run's stream)
        if line.startswith(b"data: "):
            return json.loads(line[6:]).get("metadata", {}).get("agui-state-sync", {}).get("seq")
    return None


class Client:
    """One client of ``connection`` on ``thread``: a SyncEngine fed what it read.
    run(run_id, cut_after): a run from its position; with cut_after, its stream
    is cut after that many state events (what came later is lost, as on a
    dropped link), so it comes back behind at its next run. Returns the types
    of the run's updates: its state events past the thread's seq before it
    (a catch-up stands at or before that seq)."""

    def __init__(self, http, middleware, thread, connection):
        self.http, self.middleware, self.thread, self.connection = http, middleware, thread, connection
        self.sync = SyncEngine()

    async def run(self, run_id, cut_after=None):
        position = {} if self.sync.last_seq is None else {"lastSeq": self.sync.last_seq, "epoch": self.sync.epoch}
        body = {"threadId": self.thread, "runId": run_id, "state": None, "messages": [], "tools": [], "context": [],
                "forwardedProps": {"stateSync": {"connection": self.connection, **position}}}
        emitter = self.middleware.sequencer.emitter_for(self.thread)
        before = 0 if emitter is None else emitter.seq  # a new thread's catch-up is at seq 0
        response = await self.http.post("/agent", json=body)
        assert response.status_code == 200
        received = blocks(response.content)
        kept, states = [], 0
        for block in received:
            if cut_after is not None and states == cut_after:
                break
            kept.append(block)
            states += type_of(block) in STATE_TYPES
        self.sync.reset()
        self.sync.feed(b"".join(kept))
        return [type_of(b) for b in received if type_of(b) in STATE_TYPES and seq_of(b) > before]


def metrics(text):
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in prom_parser.text_string_to_metric_families(text) for s in family.samples}


async def scrape(ops):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ops), base_url="http://ops") as client:
        return metrics((await client.get("/metrics")).text)


def mode_of(seen, connection):
    return seen.get(("agui_middleware_segment_snapshot_mode", frozenset({("connection", connection)})))


def switches_of(seen, connection):
    return seen.get(("agui_middleware_segment_switches_total", frozenset({("connection", connection)})))


def all_of(n, kind):
    return [kind] * n


@pytest.mark.parametrize("with_store", [False, True], ids=["emitter", "store"])
async def test_a_2g_segment_coming_back_behind_gets_snapshots_4g_keeps_deltas(with_store):
    states = {}
    middleware = StateSyncMiddleware(agent_app(states), paths=["/agent"], heartbeat_s=None,
                                     store=memory_store() if with_store else None,
                                     flaky_segments={"window": 4, "break_even": 0.2})
    ops = ops_app(middleware)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=middleware), base_url="http://agent") as http:
        slow, fast = Client(http, middleware, "T2", "2g"), Client(http, middleware, "T4", "4g")
        # Window 1 of 2g: the agent's first state (a snapshot: the thread had none) and 3 deltas;
        # nothing missed yet: the client cut here comes back at r2.
        assert await slow.run("r1-3", cut_after=2) == ["STATE_SNAPSHOT", *all_of(3, "STATE_DELTA")]
        assert await fast.run("f1-3") == ["STATE_SNAPSHOT", *all_of(3, "STATE_DELTA")]
        # Window 2: r2's client came back 3 seqs behind (1 catch-up in 4 updates > 0.2): snapshots from its end on.
        assert await slow.run("r2-4", cut_after=2) == all_of(4, "STATE_DELTA")
        assert middleware.stats()["flakySegments"]["snapshotMode"] == {"2g": 1}
        # Windows 3 and 4: snapshot mode; r3 and r4 come back 5 and 7 seqs behind (>= 0.1 per update): it stays.
        assert await slow.run("r3-4", cut_after=2) == all_of(4, "STATE_SNAPSHOT")
        assert await fast.run("f2-4") == all_of(4, "STATE_DELTA")
        assert await slow.run("r4-4") == all_of(4, "STATE_SNAPSHOT")
        seen = await scrape(ops)
        assert (mode_of(seen, "2g"), mode_of(seen, "4g")) == (1, None)
        assert switches_of(seen, "2g") == 1
        # Window 5 (r5) misses nothing: still snapshots, then back to deltas at its end (hysteresis).
        assert await slow.run("r5-4") == all_of(4, "STATE_SNAPSHOT")
        assert await slow.run("r6-4") == all_of(4, "STATE_DELTA")
        assert await fast.run("f3-4") == all_of(4, "STATE_DELTA")
        seen = await scrape(ops)
        assert (mode_of(seen, "2g"), switches_of(seen, "2g"), switches_of(seen, "4g")) == (0, 2, None)
        assert middleware.stats()["flakySegments"] == {"snapshotMode": {"2g": 0}, "switches": {"2g": 2}}
        for client in (slow, fast):
            assert client.sync.status == "synced"
            assert client.sync.state == states[client.thread]


@pytest.mark.parametrize("seed", range(6))
async def test_seeded_schedules_end_synced_and_switch_only_at_window_ends(seed):
    """Random runs, cuts and connection types, with and without a store: whatever
    mode each segment is in, every client ends on the agent's state; a segment
    changes between deltas and snapshots only where one of its windows ends; a
    segment none of whose clients was ever cut never leaves deltas."""
    rnd = random.Random(seed)
    window = rnd.randrange(1, 6)
    states = {}
    middleware = StateSyncMiddleware(agent_app(states), paths=["/agent"], heartbeat_s=None,
                                     store=memory_store() if seed % 2 else None,
                                     flaky_segments={"window": window, "break_even": rnd.choice([0.1, 0.3])})
    counted, last_kind, cut_segments = {}, {}, set()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=middleware), base_url="http://agent") as http:
        clients = [Client(http, middleware, f"T{k}", rnd.choice(["2g", "3g", "4g"])) for k in range(4)]
        for n in range(rnd.randrange(10, 24)):
            client = rnd.choice(clients)
            fresh = client.thread not in states
            cut = rnd.choice([None, None, 1, 2, 3]) if client.connection != "4g" else None
            if cut is not None:
                cut_segments.add(client.connection)
            types = await client.run(f"r{n}-{rnd.randrange(1, 5)}", cut_after=cut)
            segment = client.connection
            for index, kind in enumerate(types):
                at = counted.get(segment, 0)
                counted[segment] = at + 1
                if fresh and index == 0:
                    continue  # a new thread's first state is a snapshot in either mode
                if last_kind.get(segment, "STATE_DELTA") != kind:
                    assert at % window == 0, (segment, at, window)
                last_kind[segment] = kind
        for client in clients:  # a last whole run each: whatever was missed is caught up
            await client.run(f"last-{client.thread}-1")
            assert client.sync.status == "synced"
            assert client.sync.state == states[client.thread]
    switched = set(middleware.stats()["flakySegments"]["switches"])
    assert switched <= cut_segments and "4g" not in switched


async def test_the_option_is_checked_when_the_middleware_is_made():
    for bad in ({"window": 0}, {"break_even": 0}, {"break_even": 2}, {"window": True}, {"other": 1}, "yes", 1):
        with pytest.raises(AguiSyncTypeError) as caught:
            StateSyncMiddleware(agent_app({}), paths=["/agent"], flaky_segments=bad)
        assert caught.value.code == "invalid-options"
    assert StateSyncMiddleware(agent_app({}), paths=["/agent"], flaky_segments=True).flaky is not None
    off = StateSyncMiddleware(agent_app({}), paths=["/agent"], flaky_segments=False)
    assert off.flaky is None and off.stats()["flakySegments"] == {"snapshotMode": {}, "switches": {}}
