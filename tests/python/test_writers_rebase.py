"""Two writers on one thread, each through its own StateSequencer on one store
(two instances), each sending whole-state snapshots of its own view (issue
40; tests/js/writers-rebase.test.mjs is the same for sequenceState()):
writer A owns ``a`` and ``aList``, B owns ``b`` and ``bList``, and each view
is stale about the other's fields. Seeded schedules interleave their
snapshots, one at a time or both at once (racing in the store). Whatever the
schedule: no committed change is lost, no stale view writes the other's field,
and the seq never forks."""

from __future__ import annotations

import asyncio
import copy
import json
import random

import pytest

from agui_state_sync import StateSequencer, memory_store, redis_store
from redis_support import redis_url  # noqa: F401 - the module's redis-server

pytestmark = pytest.mark.anyio
STEPS = 12
INITIAL = {"a": 0, "aList": [], "b": 0, "bList": []}


class Writer:
    """An agent whose snapshots the test releases one by one."""

    def __init__(self, field: str) -> None:
        self.field, self.view, self.n = field, copy.deepcopy(INITIAL), 0
        self.queue: "asyncio.Queue[object]" = asyncio.Queue()

    def next(self) -> None:
        self.n += 1
        self.view[self.field] = self.n
        self.view[f"{self.field}List"].append(self.n)
        self.queue.put_nowait({"type": "STATE_SNAPSHOT", "snapshot": copy.deepcopy(self.view)})

    def finish(self) -> None:
        self.queue.put_nowait(None)

    async def run(self, run_input):
        yield {"type": "RUN_STARTED", "threadId": run_input["threadId"], "runId": run_input["runId"]}
        while (event := await self.queue.get()) is not None:
            yield event
        yield {"type": "RUN_FINISHED", "threadId": run_input["threadId"], "runId": run_input["runId"]}


class Run:
    """One writer's run through its sequencer: its events, and a wait for its k-th state event."""

    def __init__(self, sequencer: StateSequencer, writer: Writer, run_input) -> None:
        self.events, self.changed = [], asyncio.Event()
        self.task = asyncio.ensure_future(self._read(sequencer, writer, run_input))

    async def _read(self, sequencer, writer, run_input) -> None:
        async for event in sequencer.run(writer.run, run_input):
            self.events.append(event)
            self.changed.set()

    def states(self):
        return [e for e in self.events if str(e.get("type")).startswith("STATE_")]

    async def wait_for(self, count: int) -> None:
        async def reached() -> None:
            while len(self.states()) < count:
                self.changed.clear()
                if self.task.done():
                    self.task.result()
                    raise AssertionError(f"the run ended with {len(self.states())} state events, not {count}")
                await self.changed.wait()
        await asyncio.wait_for(reached(), 10)


def run_input(thread_id: str, run_id: str):
    return {"threadId": thread_id, "runId": run_id, "state": INITIAL, "messages": [], "tools": [], "context": [],
            "forwardedProps": {"stateSync": {"lastSeq": None, "epoch": None}}}


@pytest.fixture(params=["memory", "redis"])
def stores(request, redis_url):  # noqa: F811
    if request.param == "memory":
        shared = memory_store()
        return lambda: shared
    return lambda: redis_store(redis_url, prefix="rebase:")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
async def test_two_snapshot_writers_lose_nothing(stores, seed):
    rng = random.Random(seed)
    thread_id = f"W-{seed}-{rng.random()}"
    sa, sb = StateSequencer(store=stores()), StateSequencer(store=stores())
    wa, wb = Writer("a"), Writer("b")
    ra = Run(sa, wa, run_input(thread_id, "ra"))
    await ra.wait_for(1)  # A's run put the thread at its input state
    rb = Run(sb, wb, run_input(thread_id, "rb"))
    await rb.wait_for(1)
    na = nb = 0
    while na < STEPS or nb < STEPS:
        roll = rng.random()
        both = roll < 0.3 and na < STEPS and nb < STEPS
        pick_a = both or nb >= STEPS or (na < STEPS and roll < 0.65)
        waits = []
        if pick_a:
            wa.next()
            na += 1
            waits.append(ra.wait_for(1 + na))
        if both or not pick_a:
            wb.next()
            nb += 1
            waits.append(rb.wait_for(1 + nb))
        await asyncio.gather(*waits)  # both at once: their commits race in the store
    wa.finish()
    wb.finish()
    await asyncio.gather(ra.task, rb.task)
    emitter = sb.emitter_for(thread_id)
    await emitter.refresh()
    expected = list(range(1, STEPS + 1))
    assert emitter.state == {"a": STEPS, "aList": expected, "b": STEPS, "bList": expected}, f"seed {seed}"
    committed = {}
    for owner, run in (("a", ra), ("b", rb)):
        other = "b" if owner == "a" else "a"
        for event in run.states():
            seq = event["metadata"]["agui-state-sync"]["seq"]
            body = json.dumps(event.get("delta", event.get("snapshot")), sort_keys=True)
            assert committed.setdefault(seq, body) == body, f"seq {seq} committed twice with different content (a fork)"
            if event["type"] == "STATE_DELTA":
                for op in event["delta"]:
                    assert not op["path"].startswith(f"/{other}"), f"seq {seq}: writer {owner} wrote {op}"


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
async def test_two_rebasing_emitters_lose_nothing(stores, seed):
    """The same two writers as emitters calling update(view, rebase=True) with their stale views."""
    from agui_state_sync import StateEmitter
    rng = random.Random(seed)
    key = f"E-{seed}-{rng.random()}"
    a = await StateEmitter.open(store=stores(), key=key, initial_state=INITIAL)
    b = await StateEmitter.open(store=stores(), key=key, initial_state=INITIAL)
    views = {"a": copy.deepcopy(INITIAL), "b": copy.deepcopy(INITIAL)}

    async def step(emitter, field):
        view = views[field]
        view[field] += 1
        view[f"{field}List"].append(view[field])
        await emitter.update(copy.deepcopy(view), rebase=True)
    for _ in range(STEPS):
        roll = rng.random()
        if roll < 0.4:
            await asyncio.gather(step(a, "a"), step(b, "b"))  # racing in the store
        elif roll < 0.7:
            await step(a, "a")
            await step(b, "b")
        else:
            await step(b, "b")
            await step(a, "a")
    await a.refresh()
    expected = list(range(1, STEPS + 1))
    assert a.state == {"a": STEPS, "aList": expected, "b": STEPS, "bList": expected}


async def test_plain_update_stays_last_writer_wins(stores):
    from agui_state_sync import StateEmitter
    key = f"E-plain-{random.random()}"
    a = await StateEmitter.open(store=stores(), key=key, initial_state=INITIAL)
    b = await StateEmitter.open(store=stores(), key=key, initial_state=INITIAL)
    await a.update({**INITIAL, "a": 1})
    await b.update({**INITIAL, "b": 1})  # b never saw a's write: its whole state wins
    await a.refresh()
    assert a.state["a"] == 0
