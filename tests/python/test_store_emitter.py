"""The store-bound emitter (StateEmitter.open) on memory_store and on stores
that fail on cue: it continues a key's line, commits before it returns,
recomputes after a lost race (update: the whole state; patch: the ops on the
winner's state), gives up with 'store-conflict' after 16, writes the state
only now and then, and goes on alone under a fresh epoch while the store is
unreachable. Nothing here waits for a time."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from agui_state_sync import AguiSyncError, StateEmitter, SyncEngine, catch_up, memory_store
from agui_state_sync.durable import DurableStateEmitter

pytestmark = pytest.mark.anyio


class Switchable:
    """memory_store() whose thread methods fail with store-unavailable while ``down``."""

    incremental_state = True

    def __init__(self) -> None:
        self.inner = memory_store()
        self.down = False
        self.refuse_appends = False  # every append loses (another writer always wins)
        self.appends = []

    def __getattr__(self, name):
        method = getattr(self.inner, name)

        async def call(*args):
            if self.down:
                raise AguiSyncError("store-unavailable", "the store is down (test)")
            if name == "append":
                self.appends.append(args[1])
                if self.refuse_appends:
                    return {"ok": False}
            return await method(*args)
        return call


def client_of(snapshot, events):
    client = SyncEngine()
    client.feed(b"".join(StateEmitter().encode(e) for e in [snapshot, *events]))
    return client


async def test_a_second_emitter_continues_the_key_and_a_lost_race_recomputes():
    store = memory_store()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0, "tags": []}, snapshot_ratio=100)
    b = await StateEmitter.open(store=store, key="t", initial_state={"ignored": True})
    assert isinstance(b, DurableStateEmitter) and (b.epoch, b.seq, b.state) == (a.epoch, 0, {"n": 0, "tags": []})
    start = await a.snapshot()
    first = await a.update({"n": 1, "tags": []})
    second = await b.patch([{"op": "add", "path": "/tags/-", "value": "x"}])  # b is behind: re-read, ops on a's state
    third = await a.update({"n": 2, "tags": []})  # a is behind: its whole state wins
    assert [e["metadata"]["agui-state-sync"]["seq"] for e in first + second + third] == [1, 2, 3]
    assert b.stats()["store"]["conflicts"] == 1 and a.stats()["store"]["conflicts"] == 1
    assert a.state == {"n": 2, "tags": []}
    await b.refresh()
    assert b.state == a.state and b.seq == 3
    client = client_of(start, first + second + third)
    assert client.status == "synced" and client.state == a.state


async def test_a_patch_the_winners_state_refuses_is_refused_and_nothing_is_sent():
    store = memory_store()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
    b = await StateEmitter.open(store=store, key="t")
    await a.patch([{"op": "replace", "path": "/n", "value": 5}])
    with pytest.raises(AguiSyncError) as refused:
        await b.patch([{"op": "test", "path": "/n", "value": 0}, {"op": "replace", "path": "/n", "value": 1}])
    assert refused.value.code == "precondition-failed"
    assert (b.seq, b.state) == (1, {"n": 5}) and (await store.head("t"))["seq"] == 1


async def test_sixteen_lost_races_in_a_row_are_store_conflict():
    store = Switchable()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
    store.refuse_appends = True
    with pytest.raises(AguiSyncError) as caught:
        await a.update({"n": 1})
    assert caught.value.code == "store-conflict" and len(store.appends) == 16
    assert a.seq == 0 and a.state == {"n": 0}


async def test_the_state_is_written_with_snapshots_and_before_half_the_log_caps():
    store = Switchable()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0, "pad": "p" * 200},
                                snapshot_ratio=100, replay_max_events=8)
    for i in range(1, 21):
        await a.patch([{"op": "replace", "path": "/n", "value": i}])
    with_state = [w["state"] is not None for w in store.appends]
    # 4 events may follow the stored state (half of 8); the 5th carries it.
    assert with_state == [False, False, False, False, True] * 4
    assert a.stats()["store"] == {**a.stats()["store"], "commits": 20, "stateWrites": 4}
    loaded = await store.load("t")
    assert loaded["stateSeq"] == 20 and len(loaded["events"]) <= 8
    await a.patch([{"op": "replace", "path": "/n", "value": 21}])
    b = await StateEmitter.open(store=store, key="t")  # the stored state (seq 20) with the log after it applied
    assert b.state == a.state and b.seq == 21


async def test_arguments_are_copied_when_the_write_is_called():
    store = memory_store()
    a = await StateEmitter.open(store=store, key="t", initial_state={})
    edits = [{"editId": "e1", "baseSeq": 0, "ops": [{"op": "add", "path": "/x", "value": 1}]}]
    pending = a.apply_edits(edits)
    edits[0]["ops"][0]["value"] = 2
    assert (await pending)["results"][0]["status"] == "applied" and a.state == {"x": 1}


async def test_an_unreachable_store_degrades_writes_and_recovers_on_refresh():
    store = Switchable()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
    await a.update({"n": 1})
    old_epoch = a.epoch
    store.down = True
    events = await a.update({"n": 2})
    assert a.degraded and a.epoch != old_epoch
    assert [e["type"] for e in events] == ["STATE_SNAPSHOT"] and events[0]["metadata"]["agui-state-sync"]["epoch"] == a.epoch
    assert events[0]["snapshot"] == {"n": 2} and events[0]["metadata"]["agui-state-sync"]["seq"] == a.seq == 2
    answer = await a.catch_up({"headers": {"X-AGUI-State-Seq": "1", "X-AGUI-State-Epoch": old_epoch}})
    assert answer["mode"] == "snapshot"
    assert (await catch_up(a, {"headers": {"X-AGUI-State-Seq": "2", "X-AGUI-State-Epoch": a.epoch}}))["mode"] == "current"
    store.down = False
    await a.refresh()
    assert not a.degraded and a.stats()["store"]["recoveries"] == 1
    assert await store.inner.head("t") == {"epoch": a.epoch, "seq": 2}
    await a.update({"n": 3})
    b = await StateEmitter.open(store=store, key="t")
    assert (b.epoch, b.seq, b.state) == (a.epoch, 3, {"n": 3})


async def test_a_degraded_emitter_recovering_on_a_key_written_meanwhile_writes_its_state_on_top():
    store = Switchable()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0, "mine": False})
    b = await StateEmitter.open(store=store.inner, key="t")
    store.down = True
    await a.update({"n": 0, "mine": True})  # alone: its own epoch
    await b.update({"n": 7, "mine": False})  # b still reaches the store
    store.down = False
    await a.refresh()
    assert not a.degraded and a.epoch == b.epoch and a.state == {"n": 0, "mine": True} and a.seq == 2
    await b.refresh()
    assert b.state == a.state


async def test_opening_on_an_unreachable_store_is_store_unavailable():
    store = Switchable()
    store.down = True
    with pytest.raises(AguiSyncError) as caught:
        await StateEmitter.open(store=store, key="t")
    assert caught.value.code == "store-unavailable"
    with pytest.raises(TypeError):
        await StateEmitter.open(store=object(), key="t")
    with pytest.raises(TypeError):
        await StateEmitter.open(store=memory_store(), key="")


async def test_seeded_writers_on_one_key_never_fork_the_seq():
    rng = random.Random(23)
    store = memory_store()
    writers = [await StateEmitter.open(store=store, key="t", initial_state={"n": 0, "log": []}, snapshot_ratio=100)
               for _ in range(3)]
    start = await writers[0].snapshot()
    sent = []
    for step in range(200):
        w = rng.choice(writers)
        if rng.random() < 0.5:
            sent += await w.patch([{"op": "add", "path": "/log/-", "value": step}])
        else:
            sent += await w.update({**w.state, "n": step + 1})
    assert [e["metadata"]["agui-state-sync"]["seq"] for e in sent] == list(range(1, 201))
    assert all(e["metadata"]["agui-state-sync"].get("baseSeq", e["metadata"]["agui-state-sync"]["seq"] - 1) == e["metadata"]["agui-state-sync"]["seq"] - 1 for e in sent)
    client = client_of(start, sent)
    for w in writers:
        await w.refresh()
        assert w.state == client.state and w.seq == 200


class Gate(Switchable):
    """Appends wait until the test opens the gate (no clock: the test decides)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    def __getattr__(self, name):
        call = super().__getattr__(name)
        if name != "append":
            return call

        async def held(*args):
            self.entered.set()
            await self.gate.wait()
            return await call(*args)
        return held


async def test_while_a_write_is_under_way_seq_and_state_are_the_committed_ones():
    store = Gate()
    store.gate.set()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
    await a.update({"n": 1})
    store.gate.clear()
    store.entered.clear()
    write = asyncio.ensure_future(a.update({"n": 2}))
    await store.entered.wait()
    assert (a.seq, a.state) == (1, {"n": 1})  # not yet landed: not yet what clients may hold
    store.gate.set()
    await write
    assert (a.seq, a.state) == (2, {"n": 2})


async def test_a_write_cancelled_mid_append_is_settled_by_the_next_one():
    store = Gate()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
    write = asyncio.ensure_future(a.update({"n": 1}))
    await store.entered.wait()
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    store.gate.set()
    # Whether it landed is unknown to the emitter: it re-reads the store first.
    events = await a.update({"n": 2})
    head = await store.inner.head("t")
    assert events[-1]["metadata"]["agui-state-sync"]["seq"] == head["seq"] == a.seq and a.state == {"n": 2}
    b = await StateEmitter.open(store=store, key="t")
    assert (b.seq, b.state) == (a.seq, {"n": 2})


async def test_subscribers_hear_every_event_of_the_key_once_in_order():
    store = memory_store()
    # Deltas (snapshot_ratio): a snapshot empties the log, and a subscriber that
    # had not seen the events before it would get a gap instead.
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0}, snapshot_ratio=100)
    b = await StateEmitter.open(store=store, key="t", snapshot_ratio=100)
    heard, done = [], asyncio.Event()

    def listener(events):
        heard.extend(events)
        if heard[-1]["metadata"]["agui-state-sync"]["seq"] == 4:
            done.set()
    unsubscribe = b.subscribe(listener, poll_ms=600_000)  # memory_store notifies: no poll needed
    sent = await a.update({"n": 1}) + await a.update({"n": 2})
    sent += await b.update({"n": 3})  # b catches up with a's two first (a lost race), then its own
    sent += await a.update({"n": 4})
    await asyncio.wait_for(done.wait(), 60)  # a hang guard, not a pace
    assert heard == sent
    unsubscribe()
    with pytest.raises(TypeError):
        b.subscribe(listener, poll_ms=0)


async def test_a_cancelled_write_and_then_an_unreachable_store_start_a_line_of_its_own_with_a_snapshot():
    store = Gate()
    a = await StateEmitter.open(store=store, key="t", initial_state={"n": 0})
    write = asyncio.ensure_future(a.update({"n": 1}))
    await store.entered.wait()
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    old_epoch, store.down = a.epoch, True
    store.gate.set()
    events = await a.update({"n": 2})
    assert a.degraded and a.epoch != old_epoch and events[0]["type"] == "STATE_SNAPSHOT"
    assert all(e["metadata"]["agui-state-sync"]["epoch"] == a.epoch for e in events) and a.state == {"n": 2}


WRITES = st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["update", "add", "guarded", "edit"]),
                            st.integers(0, 5)), min_size=1, max_size=40)


async def _writers_on_one_key(plan):
    """Three emitters on one key run ``plan`` (writer, kind, value); what each
    sent, in seq order, must be one unforked line that replays to every
    writer's state."""
    store = memory_store()
    writers = [await StateEmitter.open(store=store, key="t", initial_state={"n": 0, "m": {}, "l": []},
                                       snapshot_ratio=100, replay_max_events=8) for _ in range(3)]
    start, sent = await writers[0].snapshot(), []
    for step, (who, kind, value) in enumerate(plan):
        w = writers[who]
        try:
            if kind == "update":
                sent += await w.update({**w.state, "n": step + 1, "v": value})
            elif kind == "add":
                sent += await w.patch([{"op": "add", "path": f"/m/k{value}", "value": step}])
            elif kind == "guarded":  # computed on a view that may be stale: refused after a lost race
                sent += await w.patch([{"op": "test", "path": "/n", "value": w.state["n"]},
                                       {"op": "add", "path": "/l/-", "value": step}])
            else:
                edit = {"editId": f"e{step}", "baseSeq": w.seq, "ops": [{"op": "add", "path": f"/m/u{value}", "value": step}]}
                sent += (await w.apply_edits([edit]))["events"]
        except AguiSyncError as error:
            assert error.code == "precondition-failed"
    sent.sort(key=lambda e: e["metadata"]["agui-state-sync"]["seq"])
    assert [e["metadata"]["agui-state-sync"]["seq"] for e in sent] == list(range(1, len(sent) + 1))
    client = client_of(start, sent)
    assert client.status == "synced"
    for w in writers:
        await w.refresh()
        assert (w.seq, w.state) == (len(sent), client.state)
    again = await StateEmitter.open(store=store, key="t")  # the stored state and the log after it
    assert again.state == client.state


@seed(23)
@settings(max_examples=60, deadline=None)
@given(WRITES)
def test_any_plan_of_three_writers_leaves_one_unforked_line(plan):
    asyncio.run(_writers_on_one_key(plan))
