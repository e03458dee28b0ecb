"""The sender's activities in Python (emitter.activities: the C++
ActivityFacade, as in Node; docs/wire.md section 11): stamped activity events
the receiver verifies, an agent's events through write(), and catch-ups that
answer where a client's activities are."""

from __future__ import annotations

import asyncio
import random
import urllib.parse
import json

import pytest

from agui_state_sync import WIRE_KEY, AguiSyncError, StateEmitter, StateSync, catch_up, memory_store
from conftest import card_changes


def feed_all(sync, emitter, events):
    return sync.feed(b"".join(emitter.encode(e) for e in events))


def test_activities_are_stamped_verified_and_carry_no_sse_id():
    emitter = StateEmitter(epoch="e", digest_every=2, snapshot_ratio=100)
    sync = StateSync(activities=True)
    a = emitter.activities
    first = a.snapshot("m1", "checkout", {"total": 1, "items": []})
    assert (first[0]["type"], first[0]["metadata"][WIRE_KEY]["seq"]) == ("ACTIVITY_SNAPSHOT", 0)
    assert first[0]["metadata"][WIRE_KEY]["epoch"] == emitter.epoch
    nxt = a.patch("m1", "checkout", [{"op": "replace", "path": "/total", "value": 2}])
    assert nxt[0]["type"] == "ACTIVITY_DELTA"
    text = b"".join(emitter.encode(e) for e in [*first, *nxt])
    assert b"id:" not in text
    sync.feed(text)
    m1 = sync.activities["m1"]
    assert (m1["content"], m1["status"], m1["lastSeq"], m1["epoch"]) == (a.content("m1"), "synced", 1, a.epoch)
    with pytest.raises(AguiSyncError) as refused:
        a.patch("m1", "checkout", [{"op": "remove", "path": "/nope"}])
    assert (refused.value.code, refused.value.op_index) == ("patch-failed", 0)
    assert (a.seq("ghost"), a.content("ghost"), a.size) == (None, None, 1)


def test_write_keeps_the_agents_members_and_drops_deltas_after_one_that_does_not_apply():
    a = StateEmitter(snapshot_ratio=100).activities
    event = {"type": "ACTIVITY_SNAPSHOT", "messageId": "m1", "activityType": "form", "content": {"n": 0},
             "timestamp": 5, "metadata": {"trace": "x"}}
    out = a.write(event)
    assert (out["events"][0]["timestamp"], out["events"][0]["metadata"]["trace"]) == (5, "x")
    bad = a.write({"type": "ACTIVITY_DELTA", "messageId": "m1", "activityType": "form",
                   "patch": [{"op": "replace", "path": "/nope", "value": 1}]})
    assert (bad["events"], bad["dropped"], bad["error"].code) == ([], "patch-failed", "patch-failed")
    later = a.write({"type": "ACTIVITY_DELTA", "messageId": "m1", "activityType": "form",
                     "patch": [{"op": "replace", "path": "/n", "value": 1}]})
    assert (later["dropped"], later["error"]) == ("patch-failed", None)
    assert a.write({**event, "content": {"n": 2}})["events"][0]["type"] == "ACTIVITY_DELTA"
    assert a.write({"type": "RUN_STARTED"})["events"] == [{"type": "RUN_STARTED"}]


@pytest.mark.parametrize("seed", range(1, 11))
def test_catch_up_heals_each_activity_by_replay_or_snapshot(seed):
    rnd = random.Random(seed)
    emitter = StateEmitter(replay_max_events=8)
    sync = StateSync(activities=True)
    a = emitter.activities
    ids = ["m1", "m2", "m3"]
    changes, contents = card_changes(seed, 40, ids)
    for mid, content in changes:
        events = a.snapshot(mid, "card", content)
        if rnd.random() < 0.6:  # the rest lost
            feed_all(sync, emitter, events)
    positions = sync.activity_positions()
    answer = catch_up(emitter, {"forwardedProps": {"stateSync": {"lastSeq": None, "activities": positions}}})
    assert [x["messageId"] for x in answer["activities"]] == ids
    feed_all(sync, emitter, answer["events"])
    for mid in ids:
        assert sync.activities[mid]["status"] == "synced"
        assert sync.activities[mid]["content"] == contents[mid]
    header = urllib.parse.quote(json.dumps(sync.activity_positions()), safe="")
    again = catch_up(emitter, {"headers": {"X-AGUI-State-Activities": header}})
    assert [x["mode"] for x in again["activities"]] == ["current"] * 3


def test_a_store_bound_emitter_stores_its_activities_and_another_instance_continues_them():
    async def main():
        store = memory_store()
        emitter = await StateEmitter.open(store=store, key="t1")
        sync = StateSync(activities=True)
        await emitter.update({"n": 1})
        text = "a long note " * 20  # a delta is cheaper than the snapshot
        events = await emitter.activities.snapshot("m1", "card", {"v": 1, "text": text})
        feed_all(sync, emitter, events)
        await emitter.activities.snapshot("m1", "card", {"v": 2, "text": text})
        answer = await catch_up(emitter, {"forwardedProps": {"stateSync": {
            "lastSeq": None, "activities": sync.activity_positions()}}})
        feed_all(sync, emitter, answer["events"])
        assert sync.state == {"n": 1}
        assert (sync.activities["m1"]["content"], sync.activities["m1"]["status"]) == ({"v": 2, "text": text}, "synced")
        # Another instance (or this one restarted) never saw m1: it continues the stored line.
        other = await StateEmitter.open(store=store, key="t1")
        current = await catch_up(other, {"forwardedProps": {"stateSync": {
            "lastSeq": None, "activities": sync.activity_positions()}}})
        assert current["activities"] == [{"messageId": "m1", "mode": "current"}]
        nxt = await other.activities.patch("m1", "card", [{"op": "replace", "path": "/v", "value": 3}])
        assert nxt[0]["metadata"]["agui-state-sync"]["baseSeq"] == 1
        feed_all(sync, other, nxt)
        # The first instance lost that race: its write goes on top of the stored line, never forks it.
        after = await emitter.activities.patch("m1", "card", [{"op": "add", "path": "/note", "value": "a"}])
        assert after[0]["metadata"]["agui-state-sync"]["baseSeq"] == 2
        feed_all(sync, emitter, after)
        assert (sync.activities["m1"]["content"], sync.activities["m1"]["status"]) == ({"v": 3, "text": text, "note": "a"}, "synced")
    asyncio.run(main())


def test_a_client_that_keeps_no_activities_gets_nothing_about_them():
    emitter = StateEmitter()
    emitter.activities.snapshot("m1", "card", {"v": 1})
    answer = catch_up(emitter, {"forwardedProps": {"stateSync": {"lastSeq": None}}})
    assert [e["type"] for e in answer["events"]] == ["STATE_SNAPSHOT"]
    assert "activities" not in answer
    assert StateSync().activity_positions() is None
