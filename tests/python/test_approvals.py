"""consume_approval / effect_key (the records and keys of js/src/approvals.js)
and the once() guard, on memory_store()."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess

import pytest

from agui_state_sync import (AguiSyncError, StateEmitter, SyncEngine, consume_approval, effect_key, memory_store,
                             once)

pytestmark = pytest.mark.anyio
STATE = {"proposal": {"payee": "alice", "amount": 100}}


def approve(state, path="/proposal"):
    """An approval made the way a UI makes one: the guard of a synced receiver."""
    em = StateEmitter(epoch="ep", initial_state=state)
    engine = SyncEngine()
    engine.feed(em.encode(em.snapshot()))
    view = engine.view(path)
    assert view["ok"], view
    result = engine.approve(view["token"])
    assert result["ok"], result
    return result["approval"]


def test_effect_key_is_the_sha256_of_the_canonical_identity():
    approval = {"path": "/proposal", "seq": 4, "digest": "sha256:ab", "epoch": "ep", "viewedSeq": 3}
    identity = {"v": 1, "threadId": "t", "interruptId": "i", "path": "/proposal", "seq": 4, "digest": "sha256:ab",
                "epoch": "ep"}
    # Plain ASCII strings and small integers: sorted-key JSON is the RFC 8785 form.
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    assert effect_key(approval, thread_id="t", interrupt_id="i") == hashlib.sha256(canonical.encode()).hexdigest()
    if shutil.which("node"):  # and Node's own hash of Node's own JSON.stringify agrees
        script = ("const c=require('crypto');const o=JSON.parse(process.argv[1]);const s=JSON.stringify(Object.fromEntries("
                  "Object.keys(o).sort().map(k=>[k,o[k]])));process.stdout.write(c.createHash('sha256').update(s).digest('hex'))")
        node = subprocess.run(["node", "-e", script, json.dumps(identity)], capture_output=True, text=True, check=True)
        assert node.stdout == effect_key(approval, thread_id="t", interrupt_id="i")
    assert effect_key({**approval, "viewedSeq": 9}, thread_id="t", interrupt_id="i") == \
        effect_key(approval, thread_id="t", interrupt_id="i")
    for change in ({"seq": 5}, {"digest": "sha256:cd"}, {"epoch": "x"}, {"path": "/p"}):
        assert effect_key({**approval, **change}, thread_id="t", interrupt_id="i") != \
            effect_key(approval, thread_id="t", interrupt_id="i")
    with pytest.raises(TypeError):
        effect_key({"path": 1})


async def test_consume_approval_decides_once_and_replays_the_decision():
    store, approval = memory_store(), approve(STATE)
    options = dict(store=store, thread_id="t1", interrupt_id="int-1")
    first = await consume_approval(approval, STATE, **options)
    assert first == {"ok": True, "decision": "approved", "replayed": False,
                     "effectKey": effect_key(approval, thread_id="t1", interrupt_id="int-1")}
    # Re-sent, whatever the state is now: the first decision.
    again = await consume_approval(approval, {"proposal": {"payee": "mallory"}}, **options)
    assert again == {**first, "replayed": True}
    other = approve({"proposal": {"payee": "bob", "amount": 100}})
    refused = await consume_approval(other, {"proposal": {"payee": "bob", "amount": 100}}, **options)
    assert refused == {"ok": False, "decision": "refused", "replayed": False, "effectKey": None,
                       "reason": "already-consumed"}
    record = json.loads(await store.peek("t1", "int-1"))
    # The core's record (src/facade/approval_consume.h), byte for byte the JS package's.
    assert set(record) == {"decision", "effectKey", "at"} and isinstance(record["at"], int)
    assert (record["decision"], record["effectKey"]) == ("approved", first["effectKey"])


async def test_a_changed_state_is_refused_and_records_nothing():
    store, approval = memory_store(), approve(STATE)
    changed = {"proposal": {"payee": "mallory", "amount": 100}}
    assert (await consume_approval(approval, changed, store=store, thread_id="t"))["reason"] == "changed"
    assert (await consume_approval({"path": 3}, STATE, store=store, thread_id="t"))["reason"] == "invalid-token"
    assert (await consume_approval(approval, STATE, store=store, thread_id="t"))["replayed"] is False


async def test_concurrent_consumers_get_one_decision():
    store, approval = memory_store(), approve(STATE)
    answers = await asyncio.gather(*[consume_approval(approval, STATE, store=store, thread_id="t", interrupt_id="i")
                                     for _ in range(8)])
    assert sum(not a["replayed"] for a in answers) == 1 and all(a["ok"] for a in answers)


async def test_consume_approval_misuse():
    with pytest.raises(TypeError):
        await consume_approval({}, STATE, store=object(), thread_id="t")
    with pytest.raises(TypeError):
        await consume_approval({}, STATE, store=memory_store(), thread_id="")
    with pytest.raises(TypeError):
        await consume_approval({}, STATE, store=memory_store(), thread_id="t", interrupt_id=5)


async def test_once_runs_the_effect_once_and_hands_it_the_key():
    store, calls = memory_store(), []

    async def pay(key):
        calls.append(key)
        return {"receipt": f"r-{len(calls)}", "amount": (1, 2)}

    first = await once(store, "k1")(pay)
    replay = await once(store, "k1")(pay)
    assert calls == ["k1"] and first == replay == {"receipt": "r-1", "amount": [1, 2]}
    assert await once(store, "k2")(lambda key: key.upper()) == "K2"  # a plain function works too


async def test_once_a_concurrent_caller_does_not_run_the_effect():
    store, started, release = memory_store(), asyncio.Event(), asyncio.Event()
    runs = []

    async def slow(key):
        runs.append(key)
        started.set()
        await release.wait()
        return "done"

    first = asyncio.create_task(once(store, "k")(slow))
    await started.wait()
    with pytest.raises(AguiSyncError) as caught:
        await once(store, "k")(slow)
    assert caught.value.code == "run-active"
    release.set()
    assert await first == "done" and await once(store, "k")(slow) == "done" and runs == ["k"]


async def test_once_a_failed_effect_records_nothing_and_can_be_retried():
    store, attempts = memory_store(), []

    def flaky(key):
        attempts.append(key)
        if len(attempts) == 1:
            raise ConnectionError("the payment API is down")
        return "paid"

    with pytest.raises(ConnectionError):
        await once(store, "k")(flaky)
    assert await once(store, "k")(flaky) == "paid" and attempts == ["k", "k"]


async def test_once_a_result_json_cannot_hold_is_an_error_and_not_recorded():
    store = memory_store()
    with pytest.raises(TypeError):
        await once(store, "k")(lambda key: {1, 2})
    assert await once(store, "k").recorded() is None
