"""A seeded fleet of writers of both languages on one real redis-server
(issue 40, Deliver 3): many threads per run, each written at once by a Python
StateSequencer (an agent sending whole-state snapshots of its own stale view),
a Python emitter calling update(view, rebase=True) and a Node emitter calling
update(view, {rebase: true}) (tests/python/node_emitter_driver.mjs, a child
process), interleaved by a seeded schedule, one at a time or racing in the
store. Each writer owns its own field and list, and its view is stale about
the others'. After all writes, for each thread: every writer's last value of
its own field and every one of its list entries are there (no committed
change lost), and the stored line is one epoch whose seq counts exactly one
committed event per write, its log consecutive (the seq never forks).
Not covered here yet: the proxy CLI and sequenceState() as fleet writers
(tests/js/writers-rebase.test.mjs and the proxy repro in issue 40's report)."""

from __future__ import annotations

import asyncio
import copy
import json
import random

import pytest

from agui_state_sync import StateEmitter, StateSequencer, redis_store
from redis_support import redis_url  # noqa: F401 - the module's redis-server
from test_store_shared import NodeEmitter, stored_log

pytestmark = pytest.mark.anyio
THREADS = 8
STEPS = 8  # writes per writer per thread
FIELDS = ("s", "p", "n")  # sequencer, Python rebasing emitter, Node rebasing emitter
INITIAL = {k: v for f in FIELDS for k, v in ((f, 0), (f"{f}List", []))}


class Agent:
    """A snapshot-only agent whose snapshots the test releases one by one (its view stale about the others)."""

    def __init__(self, field: str) -> None:
        self.field, self.view = field, copy.deepcopy(INITIAL)
        self.queue: "asyncio.Queue[object]" = asyncio.Queue()

    def next(self, n: int) -> None:
        self.view[self.field] = n
        self.view[f"{self.field}List"].append(n)
        self.queue.put_nowait({"type": "STATE_SNAPSHOT", "snapshot": copy.deepcopy(self.view)})

    async def run(self, run_input):
        yield {"type": "RUN_STARTED", "threadId": run_input["threadId"], "runId": run_input["runId"]}
        while (event := await self.queue.get()) is not None:
            yield event
        yield {"type": "RUN_FINISHED", "threadId": run_input["threadId"], "runId": run_input["runId"]}


async def one_thread(url: str, prefix: str, seed: int, index: int) -> None:
    rng = random.Random(seed * 1000 + index)
    key = f"F-{seed}-{index}"
    store = redis_store(url, prefix=prefix)
    # The thread starts at INITIAL (one committed event), then every writer opens it.
    opener = await StateEmitter.open(store=store, key=key, initial_state=INITIAL)
    await opener.update(copy.deepcopy(INITIAL))
    start_seq = opener.seq
    py = await StateEmitter.open(store=redis_store(url, prefix=prefix), key=key)
    node = await NodeEmitter.start(url, prefix, key, {"replayMaxEvents": 4096})
    sequencer = StateSequencer(store=redis_store(url, prefix=prefix))
    agent = Agent("s")
    run_input = {"threadId": key, "runId": "s", "state": INITIAL, "messages": [], "tools": [], "context": [],
                 "forwardedProps": {"stateSync": {"lastSeq": None, "epoch": None}}}
    seen, changed = [], asyncio.Event()

    async def read() -> None:
        async for event in sequencer.run(agent.run, run_input):
            if str(event.get("type")).startswith("STATE_"):
                seen.append(event)
                changed.set()
    reader = asyncio.ensure_future(read())

    async def states(count: int) -> None:
        async def reached() -> None:
            while len(seen) < count:
                changed.clear()
                if reader.done():
                    reader.result()
                    raise AssertionError(f"{key}: the sequencer's run ended with {len(seen)} state events")
                await changed.wait()
        await asyncio.wait_for(reached(), 10)

    await states(1)  # the run's catch-up: the sequencer is on the thread
    views = {f: copy.deepcopy(INITIAL) for f in ("p", "n")}
    counts = dict.fromkeys(FIELDS, 0)
    base = len(seen)

    async def write(field: str) -> None:
        counts[field] += 1
        n = counts[field]
        if field == "s":
            agent.next(n)
            await states(base + n)
            return
        view = views[field]
        view[field] = n
        view[f"{field}List"].append(n)
        if field == "p":
            await py.update(copy.deepcopy(view), rebase=True)
        else:
            answer = await node.send("update", state=view, rebase=True)
            assert answer["ok"], answer

    try:
        while any(counts[f] < STEPS for f in FIELDS):
            left = [f for f in FIELDS if counts[f] < STEPS]
            rng.shuffle(left)
            batch = left[: rng.choice((1, 1, 2, 3))]
            await asyncio.gather(*(write(f) for f in batch))  # more than one: racing in the store
        agent.queue.put_nowait(None)
        await reader
    finally:
        await node.close()
    await opener.refresh()
    expected = list(range(1, STEPS + 1))
    assert opener.state == {k: v for f in FIELDS for k, v in ((f, STEPS), (f"{f}List", expected))}, \
        f"{key}: a committed change was lost"
    # One committed event per write, one epoch, consecutive: nothing forked, nothing written twice.
    assert opener.seq == start_seq + len(FIELDS) * STEPS, f"{key}: seq {opener.seq} after {len(FIELDS) * STEPS} writes"
    log = [json.loads(e) if isinstance(e, (str, bytes)) else e for e in await stored_log(store, key)]
    metas = [e["metadata"]["agui-state-sync"] for e in log]
    assert len({m["epoch"] for m in metas}) <= 1, f"{key}: more than one epoch in the log"
    seqs = [m["seq"] for m in metas]
    consecutive = list(range(seqs[0], seqs[0] + len(seqs))) if seqs else []
    assert seqs == consecutive, f"{key}: the log's seqs {seqs}"


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_fleet_of_writers_loses_nothing_and_never_forks(redis_url, seed):  # noqa: F811
    prefix = f"fleet{seed}:"
    await asyncio.gather(*(one_thread(redis_url, prefix, seed, i) for i in range(THREADS)))
