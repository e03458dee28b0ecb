"""One Redis thread key, written by a restarted Python emitter and by a Node
emitter and a Python emitter interleaved, against a real redis-server. The
Node emitter is tests/python/node_emitter_driver.mjs, driven over stdin and
stdout one JSON line at a time, so the test decides who writes when (and
which writes race). Invariants: the seq never forks (every seq once, each
delta on the one before), the stored log holds the very events sent (the same
bytes), both sides' states equal the log's replay, and a client at a recent
seq gets a replay from either side."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import random
import shutil
import subprocess
import uuid

import pytest

from agui_state_sync import AguiSyncError, StateEmitter, SyncEngine, redis_store
from agui_state_sync._json import json_text
from agui_state_sync.stores._layout import thread_base
from conftest import REPO
from redis_support import REDIS_SERVER, free_port, redis_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio
NODE = shutil.which("node")
DRIVER = REPO / "tests" / "python" / "node_emitter_driver.mjs"


class NodeEmitter:
    """The Node side: one command, one answer, in order."""

    def __init__(self, process: asyncio.subprocess.Process, ready: dict) -> None:
        self.process = process
        self.ready = ready

    driver = REPO / "tests" / "python" / "node_emitter_driver.mjs"

    @classmethod
    async def start(cls, url: str, prefix: str, key: str, options: dict) -> "NodeEmitter":
        process, ready = await start_node_driver(cls.driver, (".", "./server"), url, prefix, key, json.dumps(options))
        return cls(process, ready)

    async def send(self, op: str, **fields) -> dict:
        self.process.stdin.write((json.dumps({"op": op, **fields}) + "\n").encode())
        await self.process.stdin.drain()
        line = await self.process.stdout.readline()
        assert line, (await self.process.stderr.read()).decode()
        return json.loads(line)

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.stdin.write(b'{"op":"close"}\n')
            await self.process.stdin.drain()
            self.process.stdin.close()
            assert await self.process.wait() == 0, (await self.process.stderr.read()).decode()


def _default(export) -> str:
    return export["default"] if isinstance(export, dict) else export


async def start_node_driver(driver, entries, *args: str):
    """A Node driver process, given the URLs of the package's `entries` (its
    package.json exports) then `args`: (the process, its first line, parsed)."""
    exports = json.loads((REPO / "js" / "package.json").read_text())["exports"]
    urls = [(REPO / "js" / _default(exports[name])).as_uri() for name in entries]
    process = await asyncio.create_subprocess_exec(
        NODE, str(driver), *urls, *args, cwd=REPO, limit=1 << 26,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    line = await process.stdout.readline()
    if not line:
        why = (await process.stderr.read()).decode()
        await process.wait()
        pytest.fail(f"the Node driver {Path(driver).name} did not start: {why}")
    return process, json.loads(line)


def replayed(start: dict, events: list) -> SyncEngine:
    client = SyncEngine()
    client.feed(b"".join(StateEmitter().encode(e) for e in [start, *events]))
    return client


async def stored_log(store, key: str) -> list:
    client = await store.client()
    return [fields["e"] for _, fields in await client.xrange(f"{thread_base(store.prefix, key)}:log")]


async def test_a_restarted_python_emitter_continues_the_seq_and_epoch(redis_url):  # noqa: F811
    prefix, key = f"r{uuid.uuid4().hex[:6]}:", "thread-1"
    store = redis_store(redis_url, prefix=prefix)
    first = await StateEmitter.open(store=store, key=key, initial_state={"n": 0, "pad": "p" * 300},
                                    snapshot_ratio=100, replay_max_events=8)
    sent = []
    for i in range(1, 12):
        sent += await first.patch([{"op": "replace", "path": "/n", "value": i}])
    assert first.stats()["store"]["stateWrites"] < first.stats()["store"]["commits"]  # most writes carry events only
    await store.close()

    store = redis_store(redis_url, prefix=prefix)  # the process restarted
    try:
        again = await StateEmitter.open(store=store, key=key, initial_state={"other": True})
        assert (again.epoch, again.seq, again.state) == (first.epoch, 11, first.state)
        answer = await again.catch_up({"headers": {"X-AGUI-State-Seq": "9", "X-AGUI-State-Epoch": first.epoch}})
        assert answer["mode"] == "replay" and answer["events"] == sent[9:]
        more = await again.patch([{"op": "replace", "path": "/n", "value": 12}])
        assert more[0]["metadata"]["agui-state-sync"]["seq"] == 12 and more[0]["metadata"]["agui-state-sync"]["epoch"] == first.epoch
    finally:
        await store.close()


def random_write(rng: random.Random, view: dict, step: int) -> tuple:
    """A write computed from the writer's (maybe stale) view of the state."""
    roll = rng.random()
    if roll < 0.35:
        fields = dict(view["fields"])
        for _ in range(rng.randint(1, 3)):
            fields[f"f{rng.randrange(12)}"] = f"{step}-{rng.randrange(1000)}"
        return "update", {"state": {**view, "fields": fields, "n": step}}
    if roll < 0.75:
        return "patch", {"ops": [{"op": "add", "path": "/items/-", "value": {"step": step}},
                                 {"op": "replace", "path": "/n", "value": step}]}
    # Valid only on the state it was computed from: refused after a lost race.
    return "patch", {"ops": [{"op": "test", "path": "/n", "value": view["n"]},
                             {"op": "add", "path": f"/fields/t{step}", "value": step}]}


async def python_write(emitter, op: str, args: dict) -> list:
    try:
        return await (emitter.update(args["state"]) if op == "update" else emitter.patch(args["ops"]))
    except AguiSyncError as error:
        assert error.code == "precondition-failed", error
        return []


async def node_write(node: NodeEmitter, op: str, args: dict, views: dict) -> list:
    answer = await node.send(op, **args)
    if not answer["ok"]:
        assert answer["code"] == "precondition-failed", answer
        return []
    views["node"] = answer["state"]
    return answer["events"]


@pytest.mark.skipif(NODE is None, reason="node not installed")
async def test_a_node_and_a_python_emitter_write_one_redis_key_interleaved(redis_url):  # noqa: F811
    rng = random.Random(2323)
    prefix, key = f"x{uuid.uuid4().hex[:6]}:", "shared-thread"
    store = redis_store(redis_url, prefix=prefix)
    initial = {"n": 0, "fields": {f"f{i}": "-" * 40 for i in range(12)}, "items": []}
    py = await StateEmitter.open(store=store, key=key, initial_state=initial, snapshot_ratio=100,
                                 replay_max_events=4096)
    start = await py.snapshot()
    node = await NodeEmitter.start(redis_url, prefix, key, {"snapshotRatio": 100, "replayMaxEvents": 4096})
    try:
        assert (node.ready["epoch"], node.ready["seq"]) == (py.epoch, 0)
        views, sent = {"node": initial}, []
        for step in range(1, 161):
            who = rng.random()
            if who < 0.4:
                sent += await python_write(py, *random_write(rng, py.state, step))
            elif who < 0.8:
                sent += await node_write(node, *random_write(rng, views["node"], step), views)
            else:  # both at once: their appends race in Redis
                a, b = random_write(rng, py.state, step), random_write(rng, views["node"], step)
                for events in await asyncio.gather(python_write(py, *a), node_write(node, *b, views)):
                    sent += events
        sent.sort(key=lambda e: e["metadata"]["agui-state-sync"]["seq"])
        seqs = [e["metadata"]["agui-state-sync"]["seq"] for e in sent]
        assert seqs == list(range(1, len(sent) + 1)) and len(sent) > 120  # every seq once, none lost
        assert all(e["metadata"]["agui-state-sync"]["epoch"] == py.epoch for e in sent)
        assert all(e["metadata"]["agui-state-sync"].get("baseSeq", s - 1) == s - 1 for e, s in zip(sent, seqs))
        assert await stored_log(store, key) == [json_text(e, "an event") for e in sent]  # the events sent, byte for byte
        truth = replayed(start, sent)
        assert truth.status == "synced"
        await py.refresh()
        node_now = await node.send("refresh")
        assert py.state == node_now["state"] == truth.state and py.seq == node_now["seq"] == len(sent)
        recent = {"headers": {"X-AGUI-State-Seq": str(len(sent) - 5), "X-AGUI-State-Epoch": py.epoch}}
        python_answer = await py.catch_up(recent)
        node_answer = (await node.send("catchUp", request=recent))["catchUp"]
        assert python_answer["mode"] == node_answer["mode"] == "replay"
        assert python_answer["events"] == node_answer["events"] == sent[-5:]
        conflicts = py.stats()["store"]["conflicts"] + node_now["stats"]["conflicts"]
        assert conflicts > 20  # the two really wrote over each other's heads
    finally:
        await node.close()
        await store.close()


async def until(condition, what: str) -> None:
    """Waits for ``condition()`` (checked between short yields), never for a time."""
    for _ in range(20000):
        if condition():
            return
        await asyncio.sleep(0.005)
    pytest.fail(f"never happened: {what}")


@pytest.mark.skipif(NODE is None, reason="node not installed")
async def test_a_subscribed_python_emitter_hears_node_writes_over_pub_sub(redis_url):  # noqa: F811
    prefix, key = f"w{uuid.uuid4().hex[:6]}:", "watched-thread"
    store = redis_store(redis_url, prefix=prefix)
    py = await StateEmitter.open(store=store, key=key, initial_state={"n": 0}, snapshot_ratio=100)
    heard, done = [], asyncio.Event()

    def listener(events):
        heard.extend(events)
        if heard[-1]["metadata"]["agui-state-sync"]["seq"] == 6:
            done.set()
    # No poll to speak of: only Redis's notification can bring Node's writes.
    unsubscribe = py.subscribe(listener, poll_ms=600_000)
    await until(lambda: store.watching(key), "the subscription")
    node = await NodeEmitter.start(redis_url, prefix, key, {"snapshotRatio": 100})
    try:
        sent = []
        for n in range(1, 6):
            sent += (await node.send("update", state={"n": n}))["events"]
        sent += await py.update({"n": 6})  # its own write, published once committed
        await asyncio.wait_for(done.wait(), 60)  # a hang guard, not a pace
        assert heard == sent and py.state == {"n": 6}
    finally:
        unsubscribe()
        await node.close()
        await store.close()


async def test_a_subscribed_emitter_hears_another_python_instance_over_pub_sub(redis_url):  # noqa: F811
    prefix, key = f"v{uuid.uuid4().hex[:6]}:", "watched"
    ours, theirs = redis_store(redis_url, prefix=prefix), redis_store(redis_url, prefix=prefix)
    try:
        a = await StateEmitter.open(store=ours, key=key, initial_state={"n": 0}, snapshot_ratio=100)
        b = await StateEmitter.open(store=theirs, key=key, snapshot_ratio=100)
        heard, done = [], asyncio.Event()

        def listener(events):
            heard.extend(events)
            if heard[-1]["metadata"]["agui-state-sync"]["seq"] == 3:
                done.set()
        unsubscribe = a.subscribe(listener, poll_ms=600_000)  # only the notification can bring b's writes
        await until(lambda: ours.watching(key), "the subscription")
        sent = []
        for n in range(1, 4):
            sent += await b.update({"n": n})
        await asyncio.wait_for(done.wait(), 60)  # a hang guard, not a pace
        assert heard == sent and a.state == {"n": 3}
        unsubscribe()
        await until(lambda: not ours.watching(key), "the unsubscription")
    finally:
        await ours.close()
        await theirs.close()


def start_redis(port: int):
    """A redis-server of this test's own (the outage test stops it), ready when it says so."""
    server = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in server.stdout:
        if "Ready to accept connections" in line:
            return server
    pytest.fail(f"redis-server exited with {server.wait()}")


async def test_open_on_an_unreachable_redis_is_store_unavailable():
    store = redis_store("redis://127.0.0.1:1", timeout_ms=200)
    with pytest.raises(AguiSyncError) as caught:
        await StateEmitter.open(store=store, key="t")
    assert caught.value.code == "store-unavailable"
    await store.close()


async def test_a_redis_outage_degrades_writes_and_a_restarted_redis_takes_the_emitters_line():
    if REDIS_SERVER is None:
        pytest.skip("redis-server not installed")
    port = free_port()
    server = start_redis(port)
    store = redis_store(f"redis://127.0.0.1:{port}", timeout_ms=500)
    try:
        a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
        await a.update({"n": 1})
        old_epoch = a.epoch
        server.kill()
        server.wait()
        events = await a.update({"n": 2})  # Redis is gone: the emitter goes on alone
        assert a.degraded and a.epoch != old_epoch and events[0]["type"] == "STATE_SNAPSHOT"
        answer = await a.catch_up({"headers": {"X-AGUI-State-Seq": "1", "X-AGUI-State-Epoch": old_epoch}})
        assert answer["mode"] == "snapshot"
        server = start_redis(port)  # back, and empty (no persistence)
        for _ in range(5):  # the first command may meet the connection Redis dropped
            await a.refresh()
            if not a.degraded:
                break
        assert not a.degraded
        b = await StateEmitter.open(store=store, key="t")
        assert (b.epoch, b.seq, b.state) == (a.epoch, a.seq, {"n": 2})
    finally:
        await store.close()
        server.kill()
        server.wait()


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_node_and_a_python_rebasing_writer_lose_nothing(redis_url, seed):  # noqa: F811
    """Issue 40: a Node emitter and a Python emitter on one Redis key, each writing
    update(view, rebase) with a view that is stale about the other's fields, one
    after the other or racing: no committed change is lost, no seq forked."""
    rng = random.Random(seed)
    prefix, key = f"rebase-{uuid.uuid4().hex[:8]}:", "k"
    initial = {"a": 0, "aList": [], "b": 0, "bList": []}
    py = await StateEmitter.open(store=redis_store(redis_url, prefix=prefix), key=key, initial_state=initial)
    node = await NodeEmitter.start(redis_url, prefix, key, {"initialState": initial})
    views = {"a": json.loads(json.dumps(initial)), "b": json.loads(json.dumps(initial))}
    seqs = []

    def next_view(field):
        view = views[field]
        view[field] += 1
        view[f"{field}List"].append(view[field])
        return json.loads(json.dumps(view))

    async def node_step():
        answer = await node.send("update", state=next_view("a"), rebase=True)
        assert answer["ok"], answer
        seqs.extend(e["metadata"]["agui-state-sync"]["seq"] for e in answer["events"])

    async def py_step():
        events = await py.update(next_view("b"), rebase=True)
        seqs.extend(e["metadata"]["agui-state-sync"]["seq"] for e in events)
    try:
        for _ in range(10):
            roll = rng.random()
            if roll < 0.4:
                await asyncio.gather(node_step(), py_step())  # racing in Redis
            elif roll < 0.7:
                await node_step()
                await py_step()
            else:
                await py_step()
                await node_step()
        await py.refresh()
        expected = list(range(1, 11))
        assert py.state == {"a": 10, "aList": expected, "b": 10, "bList": expected}
        assert sorted(seqs) == list(range(1, len(seqs) + 1)), f"every seq once: {sorted(seqs)}"
        answer = await node.send("refresh")
        assert answer["state"] == py.state
    finally:
        await node.close()
