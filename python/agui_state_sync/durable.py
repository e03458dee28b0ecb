"""DurableStateEmitter: a StateEmitter bound to one key of a store, what
``await StateEmitter.open(store=..., key=...)`` returns (the twin of Node's
createStateEmitter({ store, key }), js/src/server/store/durable-emitter.js).

A local StateEmitter computes the events; each batch is committed to the
store (with the new seq, atomically, only if the key is still where this
emitter last saw it) before it is returned, so what a caller sends has
landed, and two instances (Node or Python) writing one key never fork its
seq: the loser re-reads the store's line, recomputes and retries. Same keys,
records and rules as Node: a Node emitter and a Python emitter can write one
key.

The store unreachable mid-write: the emitter goes on alone under a fresh
epoch of its own (a line no other instance can write), sending a snapshot
to start it; catch-ups get snapshots. Unlike Node there is no timer: the
store is tried again on the next write or catch-up, at most once a second,
or at once by refresh(); when it answers, this emitter's line becomes the
stored one (or, if another instance wrote meanwhile, the stored line goes on
with this emitter's state on top).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Mapping, Optional

from ._durable_line import (build_local, copy_argument, events_after, events_of, line_of, line_rules, log_records,
                            now_or_raise, snapshot_catch_up, with_events)
from . import _core
from ._fanout import Fanout
from ._json import json_bytes, parse, plain
from ._options import random_epoch
from .activities import ActivityEmitter, activity_options
from ._durable_activities import DurableActivities
from ._wire import wire_fields, with_wire_fields
from .emitter import StateEmitter
from .errors import AguiSyncError, failure_error, sync_error
from .resync import catch_up as _catch_up
from .stores.contract import check_key, check_store
from .types import AppliedEdits, CatchUp, ClientWrite, DurableEmitterStats, StateEvent, StateSnapshotEvent

_NEW_KEY_ONLY = ("epoch", "start_seq", "initial_state")
log = logging.getLogger("agui_state_sync")
_UNREAD = object()
Apply = Callable[[StateEmitter], Any]


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


class DurableStateEmitter:
    """Writes (update, patch, apply_edits, catch_up, snapshot, refresh) are
    coroutines, one at a time; ``seq``, ``epoch`` and ``state`` are those of
    the last committed event."""

    def __init__(self, store: Any, key: str, options: Dict[str, Any], local: StateEmitter,
                 stored: Mapping[str, Any], rules: Any) -> None:
        self._store, self._key, self._options, self._rules = store, key, options, rules
        self._local = local
        self._stored = {"epoch": stored["epoch"], "seq": stored["seq"]}  # the store's line as last seen
        self._lock = asyncio.Lock()
        self._in_flight = False  # the local is ahead of the store (a write under way)
        self._held: Any = _UNREAD  # the committed state as read while a write is under way
        self._reseed = False  # the core's committed state is unknown: seed it before the next write
        self._degraded: Optional[Dict[str, Any]] = None
        self._loop = _core.CommitLoopFacade()  # the write loop's decisions (src/emit/commit_loop.h)
        self._loop_answer: Optional[Dict[str, Any]] = None
        self._rebase_view: Optional[bytes] = None  # the state this writer last gave update(rebase=True)
        self._disposed = False
        self._carried: Dict[str, int] = {}  # stats of the local emitters replaced so far
        self._fanout = Fanout()  # subscribe(): every event of the key's line, once, in order
        self.counters = {"commits": 0, "stateWrites": 0, "conflicts": 0, "reloads": 0, "degradations": 0,
                         "recoveries": 0}
        self._activities: Optional[DurableActivities] = None  # the thread's, stored beside it

    @property
    def activities(self) -> DurableActivities:
        """The thread's activities, stored with the thread (docs/wire.md section 11):
        as StateEmitter.activities, with snapshot(), patch() and write() coroutines
        that return once the store holds them."""
        self._check()
        if self._activities is None:
            local = ActivityEmitter(activity_options(self._options, record=True))
            key = _core.activity_record_key(self._key)
            depth = (self._options.get("max_depth") or 128) + 2  # record > entry > content
            self._activities = DurableActivities(
                local, lambda: open_store_emitter(self._store, key, {"max_depth": depth}, internal=True))
        return self._activities

    def _activities_in_use(self) -> Optional[ActivityEmitter]:
        return None if self._activities is None else self._activities.local

    async def _sync_activities(self) -> None:
        """Before a catch-up: the thread's stored activities, as the record holds them."""
        try:
            if self._activities is None and await self._store.head(_core.activity_record_key(self._key)) is None:
                return
            await self.activities.sync()
        except Exception:  # unreachable or unreadable: the activities this process holds answer
            pass

    @property
    def key(self) -> str:
        return self._key

    @property
    def seq(self) -> int:
        self._check()
        return self._stored["seq"] if self._in_flight else self._local.seq

    @property
    def epoch(self) -> str:
        self._check()
        return self._stored["epoch"] if self._in_flight else self._local.epoch

    @property
    def state(self) -> Any:
        """The state at ``seq``. Treat it as read-only."""
        self._check()
        if not self._in_flight:
            return self._local.state
        if self._held is _UNREAD:  # the core keeps it (moved along each commit): parsed only when read
            self._held = parse(self._rules.committed_state_json())
        return self._held

    @property
    def degraded(self) -> bool:
        """True while the store is unreachable and this emitter goes on alone."""
        return self._degraded is not None

    # The writes copy their arguments when called, not when their turn comes:
    # the caller may change them meanwhile (a coroutine's body starts late).
    def update(self, new_state: Any, *, rebase: bool = False) -> Awaitable[List[StateEvent]]:
        """As StateEmitter.update(), once committed. The whole state is written (the last writer
        wins), unless ``rebase``: then only this writer's change goes on the line as it stands,
        whoever wrote meanwhile: the core's rebase diff from the state this writer last gave (its
        previous update(rebase=True), else the state when it first did) to new_state, fitted to the
        line member by member; the whole state only where the line holds no object where it wrote."""
        text = json_bytes(plain(new_state), "update() state") if rebase else None
        if rebase:
            return now_or_raise(lambda: self._rebased(text))
        return now_or_raise(lambda: self._update_json(json_bytes(plain(new_state), "update() state")))

    async def _commit_through(self, apply: Apply) -> List[Dict[str, Any]]:
        """A write another facade carries out on the local emitter (the run's cursor: apply(local)
        returns its events or raises its refusal), once committed; run again on the reloaded
        local emitter after a lost race."""
        async with self._turn():
            return await self._commit(apply)

    async def _rebased(self, text: bytes) -> List[StateEvent]:
        async with self._turn():
            base = self._rebase_view or self._local._state_text().encode("utf-8")
            # The core fits this writer's change to the line as it stands at each attempt (a lost race
            # moves it): EmitterFacade::updateRebased.
            out = await self._commit(lambda e: e._update_rebased_json(base, text))
            self._rebase_view = text  # the next change is measured from this writer's own view
            return out

    def patch(self, ops: Any) -> Awaitable[List[StateEvent]]:
        """As StateEmitter.patch(), once committed. After a lost race the ops go on the winner's state."""
        return now_or_raise(lambda: self._patch_json(json_bytes(ops, "patch() operations")))

    async def _update_json(self, text: bytes) -> List[StateEvent]:
        async with self._turn():
            return await self._commit(lambda e: e._update_json(text))

    async def _patch_json(self, text: bytes) -> List[StateEvent]:
        async with self._turn():
            return await self._commit(lambda e: e._patch_json(text))

    def apply_edits(self, edits: Any, policy: Optional[Mapping[str, Any]] = None, *,
                    epoch: Optional[str] = None) -> Awaitable[AppliedEdits]:
        """As StateEmitter.apply_edits(), once committed: {events, results}."""
        return self._apply_edits(copy_argument(edits), copy_argument(policy), epoch)

    async def _apply_edits(self, edits: Any, policy: Any, epoch: Optional[str]) -> AppliedEdits:
        async with self._turn():
            return await self._commit(lambda e: e.apply_edits(edits, policy, epoch=epoch))

    async def catch_up(self, request: Any) -> CatchUp:
        """The catch-up of docs/wire.md section 3, after catching up with what
        other instances wrote to the store; a snapshot while it is unreachable."""
        async with self._turn():
            await self._sync_activities()
            if self._degraded:
                await self._try_recover()
            if self._degraded:
                return snapshot_catch_up(self._local, request)
            try:
                await self._refresh(force=self._stale)
            except Exception:  # cannot tell what the store holds now
                return snapshot_catch_up(self._local, request)
            return _catch_up(self._local, request)

    def _store_catch_up(self, request: Any) -> Any:
        # catch_up(emitter, request) of agui_state_sync (resync.py) comes here.
        return self.catch_up(request)

    async def snapshot(self) -> StateSnapshotEvent:
        """A STATE_SNAPSHOT at ``seq``, after the writes queued before it."""
        async with self._turn():
            return self._local.snapshot()

    async def refresh(self) -> None:
        """Brings this emitter up to what other instances wrote (catch_up does it itself);
        while degraded, tries the store now."""
        async with self._turn():
            if self._degraded:
                await self._try_recover(force=True)
            else:
                await self._refresh(force=self._stale)

    def subscribe(self, listener: Callable[[List[StateEvent]], None], *, poll_ms: float = 100) -> Callable[[], None]:
        """listener(events) gets every event of the key's line, in order, once
        each: this emitter's own writes once committed, and those of other
        instances (Node's too) as it finds them: on the store's notification of
        a write (watch(): redis_store's pub/sub, memory_store's own), and by a
        poll every ``poll_ms`` (with notifications: at least every second, a
        safety net). An instance's fan-out to its clients. A gap (events the
        log trimmed before they were seen) shows to clients as a gap, which
        they heal by a catch-up. Needs a running event loop. Returns unsubscribe()."""
        self._check()

        async def poll() -> None:
            async with self._turn():
                await (self._try_recover() if self._degraded else self._refresh(force=self._stale))
        store_watch = getattr(self._store, "watch", None)
        watch = (lambda on_change: store_watch(self._key, on_change)) if callable(store_watch) else None
        return self._fanout.add(listener, poll_ms, poll, watch)

    def encode(self, event: Any, *, id: bool = True) -> bytes:  # noqa: A002 - the JS option's name
        self._check()
        return self._local.encode(event, id=id)

    def heartbeat(self) -> bytes:
        return b": hb %d\n\n" % self.seq

    def provenance(self) -> List[ClientWrite]:
        self._check()
        return self._local.provenance()

    def stats(self) -> DurableEmitterStats:
        """The local emitters' counters (summed over reloads), and ``store``."""
        self._check()
        stats: Any = self._local.stats()
        for name, value in self._carried.items():
            stats[name] = stats.get(name, 0) + value
        return {**stats, "store": {**self.counters, "degraded": self.degraded}}  # type: ignore[typeddict-item]

    def dispose(self) -> None:
        """Pending and later calls fail with 'disposed'; listeners are dropped. The store keeps the key."""
        self._disposed = True
        self._fanout.clear()
        if self._activities is not None:
            self._activities.dispose()

    def _check(self) -> None:
        if self._disposed:
            raise sync_error("disposed", "this DurableStateEmitter was disposed")

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """One write or catch-up at a time, in call order."""
        self._check()
        async with self._lock:
            self._check()
            yield

    async def _commit(self, apply: Apply) -> Any:
        """apply(local) computes the events; they are returned (and published) once the store holds them."""
        out = await self._commit_once(apply)
        self._fanout.publish(events_of(out))
        return out

    async def _commit_once(self, apply: Apply) -> Any:
        """The write loop: the core (CommitLoop, src/emit/commit_loop.h) decides each next step, this does it."""
        step = self._loop_step({"on": "begin", "now": _now_ms()})
        out: Any = None
        applied = False
        failure: Optional[BaseException] = None
        opening: List[Any] = []  # degraded before the write's events were computed: its line's snapshot leads
        while True:
            if step == "recover":
                result, mine = await self._try_reset()
                step = self._loop_step({"on": "recovered", "result": result})
                if result == "written-meanwhile":
                    await self._write_on_top(mine)
            elif step == "reread":
                try:
                    await self._reload()
                    step = self._loop_step({"on": "reread", "ok": True})
                except Exception as error:  # noqa: BLE001 - the store failed: go on alone from where the local stands
                    failure = error
                    step = self._loop_step({"on": "reread", "ok": False})
            elif step == "apply":
                self._hold()
                out = apply(self._local)  # a refusal raises here, and nothing changed
                applied = True
                step = self._loop_step({"on": "applied", "events": len(events_of(out))})
            elif step == "append":
                step = await self._append_step(events_of(out))
                if step == "degrade":
                    failure = self._append_failure
            elif step == "reload":
                try:
                    await self._reload()  # the line that won; then recompute on it
                    step = self._loop_step({"on": "reloaded", "ok": True, "random": random.random()})
                except asyncio.CancelledError:
                    self._loop_step({"on": "appended", "answer": "cancelled"})
                    raise
                except Exception as error:  # noqa: BLE001 - the store failed: go on alone
                    failure = error
                    step = self._loop_step({"on": "reloaded", "ok": False})
            elif step == "wait":
                await asyncio.sleep(self._loop_answer["waitMs"] / 1000)  # out of lockstep with the winner
                step = "apply"
            elif step == "degrade":
                snapshot = self._degrade(failure)
                if applied:
                    out = with_events(out, [snapshot])  # out's events never left: the new line's snapshot holds them
                else:
                    opening = [snapshot]
                step = self._loop_step({"on": "degraded"})
            elif step == "fail":
                raise sync_error("store-conflict", f"key {json.dumps(self._key)}: {self._loop_answer['message']}")
            else:  # "return"
                return with_events(out, opening + events_of(out)) if opening else out

    async def _append_step(self, events: List[Dict[str, Any]]) -> str:
        """Appends the write's events: the core's next step after the store's answer."""
        self._append_failure: Optional[BaseException] = None
        try:
            answer = "ok" if await self._append(events) else "conflict"
            if answer == "conflict":
                self.counters["conflicts"] += 1
        except asyncio.CancelledError:
            self._loop_step({"on": "appended", "answer": "cancelled"})  # whether it landed is unknown: re-read first
            raise
        except Exception as error:  # noqa: BLE001 - the store failed: go on alone
            self._append_failure = error
            answer = "error"
        return self._loop_step({"on": "appended", "answer": answer})

    def _loop_step(self, step: Dict[str, Any]) -> str:
        self._loop_answer = parse(self._loop.step(json_bytes(step, "a write loop step")))
        self._in_flight = self._loop_answer["inFlight"]
        return self._loop_answer["next"]

    @property
    def _stale(self) -> bool:
        """A write was cancelled mid-append: the store is re-read before the next one (the core's word)."""
        return bool(self._loop_answer and self._loop_answer.get("stale"))

    def _hold(self) -> None:
        """Before a write: ``state`` answers the committed state while it is under way."""
        self._held = _UNREAD
        if self._reseed:  # (a committed batch the core could not follow: never seen, but never wrong either)
            self._rules.seed(self._local._state_text().encode("utf-8"))
            self._reseed = False

    async def _append(self, events: List[Dict[str, Any]]) -> bool:
        """True when ``events`` (computed from the stored line) landed; False when another writer got there first."""
        records, size, snapshot = log_records(events)
        with_state = self._rules.needs_state(len(records), size, snapshot)
        write = {"baseSeq": self._stored["seq"], "epoch": self._stored["epoch"],
                 "state": self._local._state_text() if with_state else None, "events": records,
                 "maxEvents": self._rules.max_events(), "maxBytes": self._rules.max_bytes()}
        if not (await self._store.append(self._key, write)).get("ok"):
            return False
        self._stored = {"epoch": self._local.epoch, "seq": self._local.seq}
        self._rules.committed(with_state, len(records), size)
        self._reseed = not self._rules.advance(("[" + ",".join(r["text"] for r in records) + "]").encode("utf-8"))
        self.counters["commits"] += 1
        self.counters["stateWrites"] += 1 if with_state else 0
        return True

    async def _reload(self) -> None:
        """Continues the store's line (the key expired meanwhile: starts it again from ours)."""
        self.counters["reloads"] += 1
        stored = await self._store.load(self._key)
        if stored is None:
            ours = {**self._stored, "state": self._committed_text()}
            if (await self._store.init(self._key, ours)).get("ok"):
                stored = {**ours, "events": []}
        if stored is None:
            stored = await self._store.load(self._key)
        if stored is None:
            raise sync_error("store-unavailable", f"key {json.dumps(self._key)} vanished while it was being read")
        self._replace_local(build_local(self._rules, self._options, stored, self._key))
        seen, self._stored = self._stored, {"epoch": stored["epoch"], "seq": stored["seq"]}
        if self._stale:
            self._loop_step({"on": "reread", "ok": True})  # the line is known again
        self._hold()
        if self._fanout.active:  # what other instances wrote since (parsed only for listeners)
            self._fanout.publish(events_after([parse(text) for text in stored.get("events") or []], seen))

    async def _refresh(self, force: bool = False) -> None:
        """Reloads when the store's line moved past ours."""
        head = await self._store.head(self._key)
        if not force and head is not None and head == {"seq": self._stored["seq"], "epoch": self._stored["epoch"]}:
            return
        await self._reload()

    def _committed_text(self) -> str:
        text = self._rules.committed_state_json() if self._in_flight else ""
        return text or self._local._state_text()

    def _replace_local(self, local: StateEmitter) -> None:
        for name, value in self._local.stats().items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self._carried[name] = self._carried.get(name, 0) + value
        self._local = local

    def _degrade(self, error: Optional[BaseException]) -> StateSnapshotEvent:
        """The store failed mid-write: go on alone under a fresh epoch; returns the snapshot that starts its line."""
        old = self._local
        snapshot = old.snapshot()  # repeats the recent edit verdicts: they carry over
        epoch, text = random_epoch(), old._state_text()
        local = StateEmitter._with_state_text(text, **self._options, epoch=epoch, start_seq=old.seq)
        self._rules.seed(text.encode("utf-8"))
        local.adopt_history([{**snapshot, "metadata": with_wire_fields(snapshot["metadata"], {**(wire_fields(snapshot) or {}), "epoch": epoch})}])
        self._replace_local(local)
        self._degraded = {"since": time.time(), "reason": str(error)}
        self.counters["degradations"] += 1
        self._log("warning", f"store unreachable ({error}); going on alone at epoch {epoch}, seq {local.seq}: live "
                             "events flow, catch-ups get snapshots")
        return local.snapshot()

    async def _try_recover(self, force: bool = False) -> None:
        """Makes this emitter's own line the stored one, if the store answers and a try is due (the core's pace)."""
        if self._loop_step({"on": "tick", "now": _now_ms(), "force": force}) != "recover":
            return
        result, mine = await self._try_reset()
        self._loop_step({"on": "recovered", "result": result})
        if result == "written-meanwhile":
            await self._write_on_top(mine)

    async def _try_reset(self) -> Any:
        """store.reset: ('ok' | 'written-meanwhile' (reloaded; the stored line goes on) | 'unreachable', this line's state)."""
        line = line_of(self._local)
        try:
            result = await self._store.reset(self._key, dict(self._stored), line)
        except Exception:  # noqa: BLE001
            return "unreachable", None
        if result.get("ok"):
            self._stored = {"epoch": line["epoch"], "seq": line["seq"]}
            self._rules.restart()
            self._rules.seed(line["state"].encode("utf-8"))
            self._recovered(f"store reachable again; continuing at epoch {line['epoch']}, seq {line['seq']}")
            return "ok", None
        # Written meanwhile (another instance, or our timed-out write landed after all):
        # the stored line goes on, with this emitter's state on top (the last writer wins).
        mine = parse(line["state"])
        try:
            await self._reload()
        except Exception:  # noqa: BLE001
            return "unreachable", None
        self._recovered(f"store reachable again; the key was written meanwhile, continuing its epoch "
                        f"{self._stored['epoch']} from seq {self._stored['seq']} with this instance's state")
        return "written-meanwhile", mine

    async def _write_on_top(self, mine: Any) -> None:
        try:
            await self._commit(lambda e: e.update(mine))
        except AguiSyncError as error:
            self._log("warning", f"this instance's state could not be written on top ({error}); the stored state stands")

    def _recovered(self, message: str) -> None:
        self._degraded = None
        self.counters["recoveries"] += 1
        self._log("info", message)

    def _log(self, level: str, message: str) -> None:
        text = f"key {json.dumps(self._key)}: {message}"
        store_log = getattr(self._store, "log", None)
        if callable(store_log):
            store_log("warn" if level == "warning" else level, text)
        else:
            getattr(log, level)("agui-state-sync: %s", text, extra={"agui": {"event": "store", "key": self._key}})


async def open_store_emitter(store: Any, key: Any, options: Dict[str, Any], *,
                             internal: bool = False) -> DurableStateEmitter:
    """Loads the key's line (state, seq, epoch, log) and continues it, or
    starts it from the options. 'store-unavailable' when the store is unreachable.
    ``internal``: a key of the library's own (a thread's activity record)."""
    check_store(store, "StateEmitter.open() store")
    if not internal:
        check_key(key, "StateEmitter.open() key")
    local = StateEmitter(**options)  # a wrong option fails before any I/O
    base = {k: v for k, v in options.items() if k not in _NEW_KEY_ONLY}
    rules = line_rules(store, base)
    stored = await store.load(key)
    if stored is None:
        line = line_of(local)
        if (await store.init(key, line)).get("ok"):
            rules.seed(line["state"].encode("utf-8"))
            return DurableStateEmitter(store, key, base, local, line, rules)
        stored = await store.load(key)  # another instance created it first
        if stored is None:
            raise sync_error("store-unavailable", f"key {json.dumps(key)} vanished while it was being created")
    return DurableStateEmitter(store, key, base, build_local(rules, base, stored, key), stored, rules)
