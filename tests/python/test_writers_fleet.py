"""A seeded fleet of writers of both languages and every writer kind on one
real redis-server (issue 40): many threads per run, each written at once by
  s  a Python StateSequencer (sequence_state) in front of a snapshot-only agent,
  p  a Python emitter calling update(view, rebase=True),
  n  a Node emitter calling update(view, {rebase: true}) (node_emitter_driver.mjs),
  q  a Node sequenceState({ store }) in front of a snapshot-only agent, and
  x  a Node createStateSyncProxy({ upstream, store }) in front of a stateful
     snapshot-only HTTP upstream, one run per write (q and x: node_writers_driver.mjs,
     one child process for every thread of a run),
interleaved by a seeded schedule, one at a time or racing in the store. Each
writer owns its own field and list, and its view is stale about the others':
the agents' and the upstream's views only ever hold their own writes, and
every client sends the thread's INITIAL state. After all writes, for each
thread: every writer's last value of its own field and every one of its list
entries are there (no committed change lost); the committed history, put
together from what every writer's output carried, has every seq, one delta
per seq whoever saw it, and each seq is exactly one write of one writer (none
takes any writer's field back; a failure names the seed, thread, seq and the
history up to it); the seq counts exactly one committed event per write; the
stored log is one epoch, its seqs consecutive (the seq never forks)."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import random

import pytest

from agui_state_sync import StateEmitter, StateSequencer, redis_store
from conftest import REPO
from redis_support import redis_url  # noqa: F401 - the module's redis-server
from test_store_shared import NodeEmitter, start_node_driver, stored_log

pytestmark = pytest.mark.anyio
THREADS = 8
STEPS = 8  # writes per writer per thread
FIELDS = ("s", "p", "n", "q", "x")  # the writers above, each by the field it owns
INITIAL = {k: v for f in FIELDS for k, v in ((f, 0), (f"{f}List", []))}
DEADLINE = 10  # seconds for one write to be answered: turns a hang into a failure, never decides a pass


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


class NodeWriters:
    """node_writers_driver.mjs: the sequenceState() and proxy writers of every
    thread, one process; commands carry an id and run at once, answers come by id."""

    driver = REPO / "tests" / "python" / "node_writers_driver.mjs"

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = itertools.count(1)
        self.waiting: "dict[int, asyncio.Future]" = {}
        self.stderr = asyncio.ensure_future(process.stderr.read())  # drained as it comes: a full pipe would block Node
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, url: str, prefix: str) -> "NodeWriters":
        process, _ = await start_node_driver(cls.driver, ("./ag-ui", "./proxy", "./server"), url, prefix,
                                             json.dumps(INITIAL))
        return cls(process)

    async def _read(self) -> None:
        while line := await self.process.stdout.readline():
            answer = json.loads(line)
            future = self.waiting.pop(answer["id"], None)
            if future is not None and not future.done():
                future.set_result(answer)
        # The process ended: whoever still waits hears why.
        why = (await self.stderr).decode()
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(AssertionError(f"the Node writers' driver exited: {why}"))

    async def call(self, op: str, **fields) -> dict:
        """One command's answer (its events); fails on a refusal or past the deadline."""
        id_ = next(self.ids)
        future = self.waiting[id_] = asyncio.get_running_loop().create_future()
        self.process.stdin.write((json.dumps({"id": id_, "op": op, **fields}) + "\n").encode())
        await self.process.stdin.drain()
        answer = await asyncio.wait_for(future, DEADLINE)
        assert answer["ok"], f"{fields.get('thread')}: {op} failed: {answer['message']}"
        return answer

    async def close(self) -> None:
        """Frees the driver's writers; one that does not exit in time is killed (by its pid) and fails the test."""
        if self.process.returncode is None:
            self.process.stdin.write(b'{"op":"close"}\n')
            await self.process.stdin.drain()
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), DEADLINE)
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()
                raise AssertionError("the Node writers' driver did not exit when closed") from None
        await self.reader
        assert self.process.returncode == 0, (await self.stderr).decode()


def state_events(events: list) -> list:
    """The state events of a writer's output (the rest: run lifecycle)."""
    return [e for e in events if str(e.get("type")) in ("STATE_SNAPSHOT", "STATE_DELTA")]


def by_seq(key: str, epoch: str, seen: list) -> dict:
    """What the writers' outputs carried ((writer, event) pairs), by seq: one
    delta per seq whoever saw it (no fork), one snapshot per seq, one epoch."""
    out: dict = {}
    for who, event in seen:
        meta = event["metadata"]["agui-state-sync"]
        assert meta["epoch"] == epoch, f"{key}: {who} saw seq {meta['seq']} on another epoch"
        entry = out.setdefault(meta["seq"], {"delta": None, "snapshot": None, "who": []})
        entry["who"].append(who)
        part, body = ("snapshot", event["snapshot"]) if event["type"] == "STATE_SNAPSHOT" else ("delta", event["delta"])
        assert entry[part] in (None, body), f"{key}: two different {part}s at seq {meta['seq']} (a fork)"
        entry[part] = body
    return out


def moved(before: dict, after: dict) -> list:
    """The writers' fields one seq changed."""
    return [f for f in FIELDS if (before[f], before[f"{f}List"]) != (after[f], after[f"{f}List"])]


def one_write(before: dict, after: dict, f: str) -> bool:
    """`after` is `before` with one more write of `f`: f + 1, appended to its list."""
    n = before[f] + 1
    return after[f] == n and after[f"{f}List"] == [*before[f"{f}List"], n]


def went_back(before: dict, after: dict, f: str) -> bool:
    """`after` lost some of `before`'s writes of `f`: a lower value, or a list that no longer starts with `before`'s."""
    was = before[f"{f}List"]
    return after[f] < before[f] or after[f"{f}List"][: len(was)] != was


def check_history(key: str, seed: int, start: int, end: int, epoch: str, seen: list) -> dict:
    """The committed history from INITIAL at `start` to `end`, replayed with the
    package's own patch: every seq seen by some writer, every snapshot the
    state its seq holds, and each seq exactly one write of one writer (so
    none takes another's field back, none is empty, none carries two).
    Fails naming the seed, the thread, the seq, the field it moved wrongly and
    the history up to it. Returns the state at `end`."""
    seqs = by_seq(key, epoch, seen)
    if start in seqs and seqs[start]["snapshot"] is not None:
        assert seqs[start]["snapshot"] == INITIAL, f"{key}: the thread did not start at INITIAL"
    state, history = copy.deepcopy(INITIAL), []
    for seq in range(start + 1, end + 1):
        assert seq in seqs, f"{key}: no writer saw seq {seq} (of {start + 1}..{end})"
        entry, before = seqs[seq], state
        state = _applied(before, entry)
        if entry["snapshot"] is not None:
            assert entry["snapshot"] == state, f"{key}: the snapshot at seq {seq} is not the state its history made"
        fields = moved(before, state)
        changes = ", ".join(f"{f} {before[f]} {before[f + 'List']} -> {state[f]} {state[f + 'List']}" for f in fields)
        history.append(f"seq {seq} (seen by {', '.join(entry['who'])}): {changes}")
        fault = what_is_wrong(before, state, fields)
        assert fault is None, f"seed {seed}, {key}: seq {seq} {fault}; committed history:\n  " + "\n  ".join(history)
    return state


def what_is_wrong(before: dict, after: dict, fields: list) -> "str | None":
    """None when one seq is one write of one writer; else what it did instead."""
    for f in fields:
        if went_back(before, after, f):
            return f"took {f} back"
        if not one_write(before, after, f):
            return f"moved {f} by more than one write"
    return None if len(fields) == 1 else f"carried {len(fields)} writes"


def _applied(before: dict, entry: dict) -> dict:
    """The state after one committed event: its delta on `before` (the package's patch), else its snapshot."""
    if entry["delta"] is None:
        return copy.deepcopy(entry["snapshot"])
    replay = StateEmitter(initial_state=before)
    replay.patch(entry["delta"])
    return replay.state


async def one_thread(url: str, prefix: str, seed: int, index: int, node_writers: NodeWriters) -> None:
    rng = random.Random(seed * 1000 + index)
    key = f"F-{seed}-{index}"
    store = redis_store(url, prefix=prefix)
    # The thread starts at INITIAL, then every writer opens it.
    opener = await StateEmitter.open(store=store, key=key, initial_state=INITIAL)
    await opener.update(copy.deepcopy(INITIAL))
    start_seq, epoch = opener.seq, opener.epoch
    py = await StateEmitter.open(store=redis_store(url, prefix=prefix), key=key)
    node = await NodeEmitter.start(url, prefix, key, {"replayMaxEvents": 4096})
    sequencer = StateSequencer(store=redis_store(url, prefix=prefix))
    agent = Agent("s")
    run_input = {"threadId": key, "runId": "s", "state": INITIAL, "messages": [], "tools": [], "context": [],
                 "forwardedProps": {"stateSync": {"lastSeq": None, "epoch": None}}}
    seen, changed = [], asyncio.Event()
    committed: list = []  # (writer, state event) as each writer's output carried it

    async def read() -> None:
        async for event in sequencer.run(agent.run, run_input):
            if str(event.get("type")).startswith("STATE_"):
                seen.append(event)
                committed.append(("sequence_state" if len(seen) > 1 else "sequence_state (catch-up)", event))
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
        await asyncio.wait_for(reached(), DEADLINE)

    def carried(who: str, events: list, catch_up: int = 0) -> None:
        """Keeps what a writer's output carried; its first `catch_up` state events are its client's catch-up."""
        committed.extend((who if i >= catch_up else f"{who} (catch-up)", e) for i, e in enumerate(state_events(events)))

    await states(1)  # the run's catch-up: the sequencer is on the thread
    opened = await node_writers.call("open", thread=key)
    carried("sequenceState()", opened["events"], catch_up=len(state_events(opened["events"])))
    views = {f: copy.deepcopy(INITIAL) for f in ("p", "n")}
    counts = dict.fromkeys(FIELDS, 0)
    base = len(seen)

    async def write(field: str) -> None:
        counts[field] += 1
        n = counts[field]
        if field == "s":
            agent.next(n)
            await states(base + n)
        elif field == "q":
            carried("sequenceState()", (await node_writers.call("sequence", thread=key, n=n))["events"])
        elif field == "x":
            # The proxy's client gets the thread's snapshot first (it sent lastSeq null), then the upstream's write.
            carried(f"proxy run {n}", (await node_writers.call("proxy", thread=key))["events"], catch_up=1)
        else:
            view = views[field]
            view[field] = n
            view[f"{field}List"].append(n)
            if field == "p":
                carried("Python emitter", await py.update(copy.deepcopy(view), rebase=True))
            else:
                answer = await node.send("update", state=view, rebase=True)
                assert answer["ok"], answer
                carried("Node emitter", answer["events"])

    try:
        while any(counts[f] < STEPS for f in FIELDS):
            left = [f for f in FIELDS if counts[f] < STEPS]
            rng.shuffle(left)
            batch = left[: rng.choice((1, 1, 2, 3))]
            await asyncio.gather(*(write(f) for f in batch))  # more than one: racing in the store
        agent.queue.put_nowait(None)
        await reader
        carried("sequenceState()", (await node_writers.call("finish", thread=key))["events"])
    finally:
        await node.close()
    await opener.refresh()
    replayed = check_history(key, seed, start_seq, opener.seq, epoch, committed)  # first: it names the seq at fault
    expected = list(range(1, STEPS + 1))
    assert opener.state == {k: v for f in FIELDS for k, v in ((f, STEPS), (f"{f}List", expected))}, \
        f"{key}: a committed change was lost: {opener.state}"
    assert replayed == opener.state, f"{key}: the committed history does not make the thread's state"
    # Every writer commits exactly one event per write: the emitters one update each; the
    # sequencers one rebased change per agent snapshot (a store-bound one never writes its
    # client's INITIAL, and its catch-up commits nothing); the proxy one per run (its client's
    # catch-up commits nothing, nor does its INITIAL, which it does not write to the thread).
    writes = len(FIELDS) * STEPS
    assert opener.seq == start_seq + writes, f"{key}: seq {opener.seq - start_seq} after {writes} writes"
    # The stored log: one epoch, consecutive, ending at the thread's seq (nothing forked, nothing written twice).
    log = [json.loads(e) if isinstance(e, (str, bytes)) else e for e in await stored_log(store, key)]
    metas = [e["metadata"]["agui-state-sync"] for e in log]
    assert {m["epoch"] for m in metas} <= {epoch}, f"{key}: another epoch in the log"
    seqs = [m["seq"] for m in metas]
    assert seqs == list(range(opener.seq - len(seqs) + 1, opener.seq + 1)), f"{key}: the log's seqs {seqs}"


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_fleet_of_writers_loses_nothing_and_never_forks(redis_url, seed):  # noqa: F811
    prefix = f"fleet{seed}:"
    node_writers = await NodeWriters.start(redis_url, prefix)
    threads = [asyncio.ensure_future(one_thread(redis_url, prefix, seed, i, node_writers)) for i in range(THREADS)]
    try:
        await asyncio.gather(*threads)
    finally:
        # One thread's failure ends the others (their Node emitters closed) before the driver goes.
        for thread in threads:
            thread.cancel()
        await asyncio.gather(*threads, return_exceptions=True)
        await node_writers.close()
