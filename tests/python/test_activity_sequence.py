"""sequence_state() with an agent's AG-UI activities (docs/wire.md section
11): stamped on the thread's activities (the core's ActivityFacade, as Node's
sequenceState()), repeated snapshots sent as deltas, a delta that does not
apply dropped with the activity's later ones until its next snapshot, a
client's activity positions caught up, and a plain client's first event of an
activity its snapshot."""

from __future__ import annotations

import json

import pytest

from agui_state_sync import WIRE_KEY, StateSequencer, SyncEngine
from conftest import card_changes

pytestmark = pytest.mark.anyio


def card_run(thread, run, contents, extra=()):
    async def agent(run_input):
        yield {"type": "RUN_STARTED", "threadId": thread, "runId": run}
        for message_id, content in contents:
            yield {"type": "ACTIVITY_SNAPSHOT", "messageId": message_id, "activityType": "card", "content": content}
        for event in extra:
            yield event
        yield {"type": "RUN_FINISHED", "threadId": thread, "runId": run}
    return agent


def cards(seed, n):
    return card_changes(seed, n, start={"note": "x" * 200, "n": 0, "items": []})


def run_input(run="r", state_sync=None):
    return {"threadId": "t", "runId": run, "state": {}, "messages": [], "tools": [], "context": [],
            "forwardedProps": {} if state_sync is None else {"stateSync": state_sync}}


async def collect(sequencer, agent, given):
    return [event async for event in sequencer.run(agent, given)]


def activity_events(events):
    return [e for e in events if e["type"] in ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA")]


def feed(client, events):
    client.feed(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))


async def test_activities_are_stamped_caught_up_and_verified():
    sequencer, client = StateSequencer(), SyncEngine(activities=True)
    contents, held = cards(1, 30)
    first = await collect(sequencer, card_run("t", "r1", contents), run_input("r1", {"activities": []}))
    stamped = activity_events(first)
    assert all(isinstance(e["metadata"][WIRE_KEY]["seq"], int) for e in stamped)
    assert sum(e["type"] == "ACTIVITY_DELTA" for e in stamped) == len(stamped) - 2  # one snapshot of each card
    feed(client, first)
    assert {k: v["content"] for k, v in client.activities.items()} == held

    more, held = cards(2, 10)
    await collect(sequencer, card_run("t", "r2", more), run_input("r2"))  # the client missed this run
    third = await collect(sequencer, card_run("t", "r3", []),
                          run_input("r3", {"lastSeq": client.last_seq, "epoch": client.epoch,
                                           "activities": client.activity_positions()}))
    feed(client, third)
    assert {k: (v["content"], v["status"]) for k, v in client.activities.items()} == {
        k: (v, "synced") for k, v in held.items()}


async def test_a_plain_clients_first_event_of_an_activity_is_its_snapshot():
    sequencer = StateSequencer()
    contents, _ = cards(3, 6)
    await collect(sequencer, card_run("t", "r1", contents), run_input("r1"))
    later, _ = cards(4, 6)
    out = activity_events(await collect(sequencer, card_run("t", "r2", later), run_input("r2")))
    first = {}
    for e in out:
        first.setdefault(e["messageId"], e["type"])
    assert set(first.values()) == {"ACTIVITY_SNAPSHOT"}


async def test_a_delta_that_does_not_apply_drops_that_activitys_deltas_until_its_next_snapshot():
    reports = []
    sequencer = StateSequencer(on_inconsistent=reports.append, emitter={"snapshot_ratio": 100})

    def delta(path, value):
        return {"type": "ACTIVITY_DELTA", "messageId": "m1", "activityType": "form",
                "patch": [{"op": "replace", "path": path, "value": value}]}
    extra = [delta("/missing/x", 1), delta("/a", 2),
             {"type": "ACTIVITY_SNAPSHOT", "messageId": "m1", "activityType": "form",
              "content": {"a": 3, "note": "keep"}, "timestamp": 4},
             delta("/a", 5)]
    out = activity_events(await collect(sequencer, card_run("t", "r", [("m1", {"a": 1, "note": "keep"})], extra),
                                        run_input()))
    assert [(e["type"], e["metadata"][WIRE_KEY]["seq"]) for e in out] == [
        ("ACTIVITY_SNAPSHOT", 0), ("ACTIVITY_DELTA", 1), ("ACTIVITY_DELTA", 2)]
    assert out[1]["timestamp"] == 4
    assert sequencer.emitter_for("t").activities.content("m1") == {"a": 5, "note": "keep"}
    assert [(r["reason"], getattr(r["error"], "code", None)) for r in reports] == [
        ("refused", "patch-failed"), ("suspended", None)]
