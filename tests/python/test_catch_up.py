"""catch_up (docs/wire.md section 3) from the Python emitter: what a
(re)connecting client gets first, read from HTTP headers or from a
RunAgentInput's forwardedProps.stateSync, and a receiver healed by it."""

from __future__ import annotations

import pytest

from agui_state_sync import StateEmitter, SyncEngine, read_resync_request


def emitter_at(seq):
    em = StateEmitter(epoch="ep", initial_state={"todos": []}, snapshot_ratio=100)
    for i in range(seq):
        em.update({"todos": list(range(i + 1))})
    return em


def test_modes_from_headers():
    em = emitter_at(3)
    headers = lambda **h: {"headers": {k.replace("_", "-"): v for k, v in h.items()}}  # noqa: E731
    assert em.catch_up(headers(**{"X-AGUI-State-Seq": "3", "X-AGUI-State-Epoch": "ep"})) == {"mode": "current", "events": []}
    replay = em.catch_up(headers(**{"x-agui-state-seq": "1", "x-agui-state-epoch": "ep"}))
    assert replay["mode"] == "replay" and [e["metadata"]["agui-state-sync"]["seq"] for e in replay["events"]] == [2, 3]
    for request in (headers(), headers(**{"X-AGUI-State-Seq": "1", "X-AGUI-State-Epoch": "other"}),
                    headers(**{"X-AGUI-State-Seq": "1", "X-AGUI-State-Epoch": "ep", "X-AGUI-Resync-Reason": "digest-mismatch"}),
                    headers(**{"X-AGUI-State-Seq": "01", "X-AGUI-State-Epoch": "ep"})):
        answer = em.catch_up(request)
        assert answer["mode"] == "snapshot" and answer["events"][0]["metadata"]["agui-state-sync"]["seq"] == 3
    assert em.stats()["replaySnapshots"] == 4


def test_modes_from_a_run_agent_input():
    em = emitter_at(2)
    run_input = {"threadId": "t", "forwardedProps": {"stateSync": {"lastSeq": 1, "epoch": "ep", "held": [2, "x", 2]}}}
    assert read_resync_request(run_input) == {"lastSeq": 1, "epoch": "ep", "reason": None, "lastEventId": None,
                                              "held": [2], "activities": None}
    # The client holds seq 2 but a replay still sends the first missed delta.
    assert em.catch_up(run_input)["mode"] == "replay"
    core = pytest.importorskip("ag_ui.core")
    sdk_input = core.RunAgentInput(thread_id="t", run_id="r", state={}, messages=[], tools=[], context=[],
                                   forwarded_props={"stateSync": {"lastSeq": 2, "epoch": "ep"}})
    assert em.catch_up(sdk_input) == {"mode": "current", "events": []}


def test_a_receiver_that_lost_a_delta_is_healed_by_its_own_resync_request():
    em, engine = emitter_at(0), SyncEngine()
    engine.feed(em.encode(em.snapshot()))
    em.update({"todos": [1]})  # lost on the way
    for event in em.update({"todos": [1, 2]}):
        engine.feed(em.encode(event))
    engine.end()
    request = engine.resync_request()
    assert engine.status == "resyncing" and request["reason"] == "gap"
    engine.reset()
    answer = em.catch_up({"forwardedProps": {"stateSync": {**request, "epoch": engine.epoch}}})
    assert answer["mode"] == "replay"
    for event in answer["events"]:
        engine.feed(em.encode(event))
    assert engine.status == "synced" and engine.state == em.state == {"todos": [1, 2]}
