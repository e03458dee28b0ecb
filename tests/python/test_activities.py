"""Activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; docs/wire.md
section 11) through the Python receiver: the engine keeps each messageId as a
sequenced document beside the state (the rules are the core's; this checks
that Python reaches them)."""

from __future__ import annotations

import json

from agui_state_sync import WIRE_KEY, StateSync


def frame(event):
    return ("data: " + json.dumps(event) + "\n\n").encode("utf-8")


def snapshot(message_id, content, seq):
    return {"type": "ACTIVITY_SNAPSHOT", "messageId": message_id, "activityType": "form", "content": content,
            "metadata": {WIRE_KEY: {"seq": seq}}}


def delta(message_id, patch, seq):
    return {"type": "ACTIVITY_DELTA", "messageId": message_id, "activityType": "form", "patch": patch,
            "metadata": {WIRE_KEY: {"seq": seq, "baseSeq": seq - 1}}}


def test_an_activity_is_kept_and_a_failed_patch_resyncs_it():
    sync = StateSync(activities=True)
    [applied] = sync.feed(frame(snapshot("m1", {"total": 1, "city": "Lisbon"}, 0)))
    assert (applied["kind"], applied["type"], applied["messageId"]) == ("applied", "ACTIVITY_SNAPSHOT", "m1")
    sync.feed(frame(delta("m1", [{"op": "replace", "path": "/total", "value": 2}], 1)))
    m1 = sync.activities["m1"]
    assert (m1["content"], m1["status"], m1["lastSeq"]) == ({"total": 2, "city": "Lisbon"}, "synced", 1)
    out = sync.feed(frame(delta("m1", [{"op": "replace", "path": "/total", "value": 3},
                                       {"op": "test", "path": "/city", "value": "Porto"}], 2)))
    assert [(o["kind"], o["reason"], o["messageId"]) for o in out] == [("resync", "precondition-failed", "m1")]
    assert sync.activities["m1"]["content"] == {"total": 2, "city": "Lisbon"}
    assert sync.activities["m1"]["status"] == "resyncing"
    assert sync.status != "resyncing"  # the state's line is its own


def test_without_the_option_activity_events_pass_through():
    sync = StateSync()
    out = sync.feed(frame(delta("ghost", [{"op": "add", "path": "/x", "value": 1}], 1)))
    assert [o["kind"] for o in out] == ["event"]
    assert sync.activities == {}
