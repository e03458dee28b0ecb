"""Approvals of an activity's content (docs/wire.md sections 7 and 11): the
receiver's guard views and approves a form rendered from an ACTIVITY_SNAPSHOT
by that activity's own line, and verify_approval / consume_approval judge the
approval against the agent's content of that activity, never its state."""

from __future__ import annotations

import pytest

from agui_state_sync import StateEmitter, SyncEngine, consume_approval, effect_key, memory_store, verify_approval

pytestmark = pytest.mark.anyio
FORM = {"payee": "ACME", "amount": 1200, "note": ""}


def pair():
    clock = {"t": 1000.0}
    emitter = StateEmitter(epoch="ep", initial_state={"payee": "ACME"})
    engine = SyncEngine(activities=True, now=lambda: clock["t"])
    events = [*emitter.snapshot(), *emitter.activities.snapshot("m1", "checkout", FORM)]
    engine.feed(b"".join(emitter.encode(e, id=False) for e in events))
    return emitter, engine, clock


def send(emitter, engine, events):
    engine.feed(b"".join(emitter.encode(e, id=False) for e in events))


def test_view_and_approve_an_activity_value():
    emitter, engine, clock = pair()
    view = engine.view("/payee", message_id="m1")
    assert view["ok"], view
    assert view["token"]["messageId"] == "m1" and view["token"]["seq"] == 0
    assert engine.view("/payee", message_id="m9") == {"ok": False, "reason": "missing"}
    send(emitter, engine, emitter.activities.patch("m1", "checkout", [{"op": "replace", "path": "/note", "value": "x"}]))
    approved = engine.approve(view["token"])
    assert approved["ok"], approved
    approval = approved["approval"]
    assert (approval["messageId"], approval["seq"], approval["viewedSeq"]) == ("m1", 1, 0)
    assert verify_approval(approval, emitter.state, activities=emitter.activities)
    assert verify_approval(approval, None, activities={"m1": {"payee": "ACME"}})
    assert not verify_approval(approval, {"payee": "ACME"}), "never judged against the state"
    send(emitter, engine, emitter.activities.patch("m1", "checkout", [{"op": "replace", "path": "/payee", "value": "M"}]))
    assert engine.approve(view["token"]) == {"ok": False, "reason": "changed"}
    assert not verify_approval(approval, emitter.state, activities=emitter.activities)
    clock["t"] += 60_000
    assert engine.approve({**view["token"], "digest": approval["digest"]})["reason"] == "stale"
    with pytest.raises(TypeError):
        engine.view("/payee", message_id=3)


async def test_consume_approval_of_an_activity():
    emitter, engine, _ = pair()
    approval = engine.approve(engine.view("/amount", message_id="m1")["token"])["approval"]
    store = memory_store()
    options = dict(store=store, thread_id="t1", interrupt_id="i1")
    assert (await consume_approval(approval, emitter.state, **options))["reason"] == "missing"
    changed = await consume_approval(approval, emitter.state, activities={"m1": {"amount": 1}}, **options)
    assert changed["reason"] == "changed"
    first = await consume_approval(approval, emitter.state, activities=emitter.activities, **options)
    assert first == {"ok": True, "decision": "approved", "replayed": False,
                     "effectKey": effect_key(approval, thread_id="t1", interrupt_id="i1")}
    as_state = {k: v for k, v in approval.items() if k != "messageId"}
    assert effect_key(as_state, thread_id="t1", interrupt_id="i1") != first["effectKey"], "the key names the activity"
    again = await consume_approval(approval, {}, activities={}, **options)
    assert again == {**first, "replayed": True}
