"""A thread's activities kept by a fleet of two languages (issue 40, docs/wire.md
section 11): a Python store-bound emitter (StateEmitter.open(store=redis_store(...)))
and a Node one (tests/python/node_activity_driver.mjs, driven one JSON line at
a time, so the test decides who writes when and which writes race) write the
activities of one thread on one real redis-server. Seeded. Invariants:
 - no write lost: each writer's changes to the activity both write (each its
   own list in it), in the order it made them, are all in the stored record;
 - no line forks: every activity's committed events carry each seq once, in
   one epoch, each delta on the seq before it, and applied in order on one
   receiver they leave every activity synced on the stored record's content;
 - a catch-up on either side starts each activity with its snapshot (a client
   holding none) or its exact replay (a client holding a recent seq);
 - a restart: a fresh Python emitter on the key holds what Node wrote."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import urllib.parse
import uuid

import pytest

from agui_state_sync import WIRE_KEY, StateEmitter, StateSync, catch_up, redis_store
from conftest import REPO
from redis_support import redis_url  # noqa: F401 - the fixture
from test_store_shared import NodeEmitter

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")]
NODE = shutil.which("node")
DRIVER = REPO / "tests" / "python" / "node_activity_driver.mjs"
SHARED, PY_CARD, NODE_CARD = "shared", "py-card", "node-card"


class NodeActivities(NodeEmitter):
    """The Node side (node_activity_driver.mjs): one command, one answer, in order; each answer ok."""

    driver = DRIVER

    @classmethod
    async def start(cls, url: str, prefix: str, key: str, options: dict = None) -> "NodeActivities":
        return await super().start(url, prefix, key, options or {"snapshotRatio": 100})

    async def send(self, op: str, **fields) -> dict:
        answer = await super().send(op, **fields)
        assert answer["ok"], answer
        return answer


def stamp(event: dict) -> dict:
    return event["metadata"][WIRE_KEY]


def positions_header(positions) -> dict:
    """A GET reconnect's headers saying where the client's activities are (encodeURIComponent's alphabet)."""
    return {"X-AGUI-State-Activities": urllib.parse.quote(json.dumps(positions), safe="-_.!~*'()")}


def receive(events: list, sync: StateSync = None) -> StateSync:
    """A receiver (or `sync`) fed `events` in order."""
    sync = sync or StateSync(activities=True)
    encoder = StateEmitter()
    sync.feed(b"".join(encoder.encode(e) for e in events))
    return sync


def assert_synced_on(sync: StateSync, record: dict, what: str) -> None:
    activities = sync.activities
    for message_id, content in record.items():
        assert message_id in activities, f"{what}: {message_id} missing (has {sorted(activities)})"
        mirror = activities[message_id]
        assert mirror["status"] == "synced", f"{what}: {message_id} is {mirror['status']} ({mirror.get('resync')})"
        assert mirror["content"] == content, f"{what}: {message_id} is not the stored record's content"


def assert_each_starts_right(events: list, positions: dict, what: str) -> dict:
    """Each activity's first event in a catch-up: its snapshot, or (for a client
    at `positions[id]`) a delta on exactly that seq. Returns {id: first type}."""
    first = {}
    for event in events:
        if event["type"] not in ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA") or event["messageId"] in first:
            continue
        first[event["messageId"]] = event["type"]
        if event["type"] == "ACTIVITY_DELTA":
            assert event["messageId"] in positions, f"{what}: {event['messageId']} starts with a delta for a client holding none"
            assert stamp(event)["baseSeq"] == positions[event["messageId"]], f"{what}: {event['messageId']}'s replay starts on its seq"
    return first


async def stored_record(url: str, prefix: str, key: str) -> dict:
    """The record as a fresh process reads it: a new store, a new emitter, its activities synced."""
    store = redis_store(url, prefix=prefix)
    try:
        fresh = await StateEmitter.open(store=store, key=key)
        await fresh.activities.sync()
        ids = [i for i in (SHARED, PY_CARD, NODE_CARD) if fresh.activities.content(i) is not None]
        record = {i: fresh.activities.content(i) for i in ids}
        fresh.dispose()
        return record
    finally:
        await store.close()


async def test_a_node_and_a_python_emitter_write_one_threads_activities_racing(redis_url):  # noqa: F811
    rng = random.Random(4040)
    prefix, key = f"acts{uuid.uuid4().hex[:6]}:", "thread-acts"
    store = redis_store(redis_url, prefix=prefix)
    py = await StateEmitter.open(store=store, key=key, initial_state={"n": 0}, snapshot_ratio=100)
    node = await NodeActivities.start(redis_url, prefix, key)
    committed: list = []
    mine = {"py": [], "node": []}  # each writer's changes to SHARED, in the order it made them
    try:
        committed += await py.activities.snapshot(SHARED, "board", {"py": [], "node": [], "title": "board"})
        committed += await py.activities.snapshot(PY_CARD, "card", {"counter": 0})
        committed += (await node.send("snapshot", messageId=NODE_CARD, activityType="card", content={"counter": 0}))["events"]
        await node.send("sync")  # Node learns SHARED (written by Python): it can patch it

        async def py_write(step: int) -> list:
            if rng.random() < 0.7:
                mine["py"].append(step)
                return await py.activities.patch(SHARED, "board", [{"op": "add", "path": "/py/-", "value": step}])
            return await py.activities.patch(PY_CARD, "card", [{"op": "replace", "path": "/counter", "value": step}])

        async def node_write(step: int) -> list:
            if rng.random() < 0.7:
                mine["node"].append(step)
                ops = [{"op": "add", "path": "/node/-", "value": step}]
                return (await node.send("patch", messageId=SHARED, activityType="board", ops=ops))["events"]
            ops = [{"op": "replace", "path": "/counter", "value": step}]
            return (await node.send("patch", messageId=NODE_CARD, activityType="card", ops=ops))["events"]

        races = 0
        for step in range(1, 121):
            roll = rng.random()
            if roll < 0.3:
                committed += await py_write(step)
            elif roll < 0.6:
                committed += await node_write(step)
            else:  # both at once: their record writes race in Redis
                races += 1
                for events in await asyncio.gather(py_write(step), node_write(step)):
                    committed += events

        record = await stored_record(redis_url, prefix, key)
        assert sorted(record) == sorted([SHARED, PY_CARD, NODE_CARD])
        assert record[SHARED]["py"] == mine["py"] and record[SHARED]["node"] == mine["node"], "no write lost, each in order"
        assert len(mine["py"]) > 30 and len(mine["node"]) > 30 and races > 30
        lost = py.activities._record.stats()["store"]["conflicts"]  # the record line's: Python's lost races, adopted and written again
        assert lost > 10, f"the writers really raced ({lost} lost races on the Python side)"

        # No line forks: each seq once, one epoch, each delta on the seq before it.
        by_id: dict = {}
        for event in committed:
            by_id.setdefault(event["messageId"], []).append(event)
        for message_id, events in by_id.items():
            events.sort(key=lambda e: stamp(e)["seq"])
            assert [stamp(e)["seq"] for e in events] == list(range(len(events))), f"{message_id}: every seq once"
            assert len({stamp(e)["epoch"] for e in events}) == 1, f"{message_id}: one epoch"
            for event in events:
                if event["type"] == "ACTIVITY_DELTA":
                    assert stamp(event)["baseSeq"] == stamp(event)["seq"] - 1
        ordered = [e for message_id in sorted(by_id) for e in by_id[message_id]]
        truth = receive(ordered)
        assert_synced_on(truth, record, "every committed event, in order, on one receiver")
        kinds = [e["type"] for e in ordered]

        # Catch-ups on either side: a client holding none gets each activity's snapshot.
        py_fresh = await catch_up(py, {"headers": positions_header([])})
        node_fresh = (await node.send("catchUp", request={"headers": positions_header([])}))["catchUp"]
        for name, answer in (("python", py_fresh), ("node", node_fresh)):
            first = assert_each_starts_right(answer["events"], {}, f"{name} catch-up of a fresh client")
            assert first == {SHARED: "ACTIVITY_SNAPSHOT", PY_CARD: "ACTIVITY_SNAPSHOT", NODE_CARD: "ACTIVITY_SNAPSHOT"}, name
            assert_synced_on(receive(answer["events"]), record, f"a fresh client caught up by {name}")

        # A client a few events behind on each activity: its snapshot or its exact replay.
        modes = {}
        for name in ("python", "node"):
            behind = receive([e for events in by_id.values() for e in events[:max(1, len(events) - 3)]])
            positions = behind.activity_positions()
            held = {p["messageId"]: p["lastSeq"] for p in positions}
            request = {"headers": positions_header(positions)}
            answer = await catch_up(py, request) if name == "python" else (await node.send("catchUp", request=request))["catchUp"]
            modes[name] = assert_each_starts_right(answer["events"], held, f"{name} catch-up of a client behind")
            assert_synced_on(receive(answer["events"], behind), record, f"a client behind, caught up by {name}")
        print(f"# fleet activities: {len(committed)} committed ({kinds.count('ACTIVITY_DELTA')} deltas), {races} races, "
              f"{lost} lost on the Python side; a client behind: {modes}")
    finally:
        await node.close()
        await store.close()


async def test_a_restarted_python_emitter_gets_the_activities_node_wrote(redis_url):  # noqa: F811
    prefix, key = f"rest{uuid.uuid4().hex[:6]}:", "thread-restart"
    node = await NodeActivities.start(redis_url, prefix, key)
    try:
        await node.send("snapshot", messageId=NODE_CARD, activityType="card", content={"counter": 0, "items": []})
        await node.send("snapshot", messageId=SHARED, activityType="board", content={"py": [], "node": []})
        for i in range(1, 8):
            await node.send("patch", messageId=NODE_CARD, activityType="card",
                            ops=[{"op": "replace", "path": "/counter", "value": i}, {"op": "add", "path": "/items/-", "value": i}])
        last = await node.send("patch", messageId=SHARED, activityType="board", ops=[{"op": "add", "path": "/node/-", "value": 1}])
    finally:
        await node.close()  # Node is gone
    wrote = {i: last["activities"][i]["content"] for i in (NODE_CARD, SHARED)}
    seqs = {i: last["activities"][i]["seq"] for i in (NODE_CARD, SHARED)}
    assert wrote[NODE_CARD] == {"counter": 7, "items": list(range(1, 8))}

    store = redis_store(redis_url, prefix=prefix)
    try:
        fresh = await StateEmitter.open(store=store, key=key)
        answer = await catch_up(fresh, {"headers": positions_header([])})
        first = assert_each_starts_right(answer["events"], {}, "a restarted Python emitter's catch-up")
        assert first == {NODE_CARD: "ACTIVITY_SNAPSHOT", SHARED: "ACTIVITY_SNAPSHOT"}
        assert {i: stamp(e)["seq"] for e in answer["events"] if e["type"] == "ACTIVITY_SNAPSHOT" for i in [e["messageId"]]} == seqs
        assert_synced_on(receive(answer["events"]), wrote, "a client of the restarted Python emitter")
        assert (fresh.activities.content(NODE_CARD), fresh.activities.seq(NODE_CARD)) == (wrote[NODE_CARD], seqs[NODE_CARD])
        more = await fresh.activities.patch(SHARED, "board", [{"op": "add", "path": "/py/-", "value": 2}])
        assert stamp(more[0])["seq"] == seqs[SHARED] + 1, "Python continues Node's line"
        assert fresh.activities.content(SHARED) == {"py": [2], "node": [1]}
        fresh.dispose()
    finally:
        await store.close()
