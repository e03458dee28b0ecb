"""Run logs in the Redis store: the Python twin of the Node proxy's
js/src/proxy/run-store.js (the I/O), stored-run-log.js (the holder's side)
and remote-run.js (a run another instance holds, followed here), with the
same Lua scripts (js/src/proxy/lua/, shipped in stores/run_lua/), the same
keys (_layout.py) and the same encodings, so that a Node proxy and a Python
StateSyncMiddleware on one Redis serve each other's runs
(docs/proxy.md#run-logs-in-the-store).

One run is three keys under one hash tag, ``<prefix>v2:{r:<stream key>}``:
meta (a hash: threadId, runId, fingerprint, owner, status live | finished |
lost, lastN, seq, bytes, startedN, startedText, trimmedSeq), log (a Stream,
entry ``<n>-0`` per event: q its seq, f its flags "s" "t" "r", t its framed
text) and lease (the holder's id, with a TTL it renews). The thread's running
run is named by ``<prefix>v2:{t:<threadId>}:live``, the live runs of a runId
by ``<prefix>v2:{i:<runId>}:runs``. Every write is one script and PUBLISHes
on the meta key's name.

What is written when is the core's decision (src/run/run_life.h, driven by
_run_holder.py): these classes only carry out its ``append``, ``ask-present``,
``ask-abort`` and ``stop-upstream`` actions, and feed it the store's answers
(``committed``, ``lost``, ``seed``, ``logged``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from .. import _core
from .._json import parse
from ..errors import sync_error
from ._layout import run_base, run_id_key, thread_base
from .lua import RUN_LUA_DIR
from .redis import RedisStore

log = logging.getLogger("agui_state_sync")
RETRY_S = 0.05  # between attempts at a write the store did not answer (stored-run-log.js RETRY_MS)
# The run-lost RUN_ERROR the store ends a run with, as the Node proxy writes it (run-store.js lose()):
# whichever instance gets there first writes it, the same bytes either way.
RUN_LOST_EVENT = json.dumps({"type": "RUN_ERROR", "message": "agui-state-sync proxy: the instance that held the run's "
                             "upstream connection is gone; the run cannot go on", "code": "run-lost"},
                            separators=(",", ":"), ensure_ascii=False)


def now_ms() -> float:
    return time.monotonic() * 1000.0


def fingerprint(credentials: Sequence[Optional[str]]) -> str:
    """Who started a run, as a stored run's meta records it in every language: the core's
    requester digest of the credential headers' values (None: absent), the one the access
    gate and an abort use (the Node proxy's client-request.js fingerprint()). An abort
    asked at any instance must come with the same one."""
    answer = parse(_core.requester_json(json.dumps(list(credentials))))
    if isinstance(answer, dict):  # a failure: credentials that are not header values
        raise sync_error(answer.get("code", "invalid-request"), answer.get("message", "credentials are header values"))
    return answer


def run_store_for(store: Any, **options: Any) -> Optional["RunStore"]:
    """The store's run logs, or None for a store that cannot keep them (memory_store(): one process;
    as Node's runStoreFor, only its Redis store runs the scripts)."""
    if not isinstance(store, RedisStore):
        return None
    return RunStore(store, **options)


def _pairs(flat: Sequence[Any]) -> Dict[str, Any]:
    return {flat[i]: flat[i + 1] for i in range(0, len(flat) - 1, 2)}


def _seq(text: Any) -> Optional[int]:
    return None if text is None or text == "" else int(text)


class RunStore:
    """The I/O of run logs (run-store.js): nothing here decides anything."""

    def __init__(self, store: Any, *, owner: str, lease_ms: int, keep_ms: int, ended_ms: int, max_events: int,
                 max_bytes: int) -> None:
        self.store = store
        self.owner = owner
        self.lease_ms = lease_ms
        self.keep_ms = keep_ms
        self.ended_ms = ended_ms
        self.max_events = max_events
        self.max_bytes = max_bytes

    def keys(self, key: str) -> List[str]:
        base = run_base(self.store.prefix, key)
        return [f"{base}:meta", f"{base}:log", f"{base}:lease"]

    def _present_key(self, key: str) -> str:
        return f"{run_base(self.store.prefix, key)}:present"

    def _live_key(self, thread_id: str) -> str:
        return f"{thread_base(self.store.prefix, thread_id)}:live"

    def _run_id_key(self, run_id: str) -> str:
        return run_id_key(self.store.prefix, run_id)

    async def _script(self, name: str, key: str, args: List[str]) -> Any:
        return await self.store._script(name, self.keys(key), args, RUN_LUA_DIR)

    async def open(self, key: str, thread_id: str, run_id: str, fingerprint: str) -> None:  # noqa: A002
        """Creates a held run's log and names it the thread's running run."""
        keep = str(self.keep_ms)
        await self._script("run-open", key, [thread_id, run_id, fingerprint, self.owner, str(self.lease_ms), keep])
        await self.store._command("SET", self._live_key(thread_id), key, "PX", keep)
        await self.store._command("SADD", self._run_id_key(run_id), key)
        await self.store._command("PEXPIRE", self._run_id_key(run_id), keep)

    async def append(self, key: str, entries: Sequence[Dict[str, Any]]) -> bool:
        """Appends the core's entries ({n, seq, flags, text}): False when the lease is lost or the run is over."""
        args = [self.owner, str(self.lease_ms), str(self.keep_ms), str(self.ended_ms), str(self.max_events),
                str(self.max_bytes)]
        for entry in entries:
            seq = entry.get("seq")
            args += [str(entry["n"]), "" if seq is None else str(seq), entry["flags"], entry["text"]]
        ok, _ = await self._script("run-append", key, args)
        return ok == 1

    async def renew(self, key: str, thread_id: str, run_id: str) -> str:
        """The holder's lease renewed: 'held', 'abort' (another instance asked for one) or 'lost'."""
        answer = await self._script("run-renew", key, [self.owner, str(self.lease_ms), str(self.keep_ms)])
        if answer != 0:
            await self.store._command("PEXPIRE", self._live_key(thread_id), str(self.keep_ms))
            await self.store._command("PEXPIRE", self._run_id_key(run_id), str(self.keep_ms))
        return "abort" if answer == 2 else "held" if answer == 1 else "lost"

    async def lose(self, key: str) -> bool:
        """Ends a live run whose lease expired with RUN_ERROR 'run-lost' (once, whoever comes first)."""
        return await self._script("run-lose", key, [key, RUN_LOST_EVENT, str(self.ended_ms)]) == 1

    async def read(self, key: str, after_n: int = 0) -> Optional[Dict[str, Any]]:
        """The run as stored: None, or {meta, leased, entries}: the entries after event
        ``after_n`` as the core takes them ({n, seq, flags, text})."""
        reply = await self._script("run-read", key, [str(after_n)])
        if reply is None:
            return None
        raw_meta, leased, raw_entries = reply
        m = _pairs(raw_meta)
        meta = {"key": key, "threadId": m.get("threadId"), "runId": m.get("runId"), "fingerprint": m.get("fingerprint"),
                "owner": m.get("owner"), "status": m.get("status"), "lastN": int(m.get("lastN") or 0),
                "seq": _seq(m.get("seq")), "startedN": int(m.get("startedN") or 0),
                "startedText": m.get("startedText") or "", "trimmedSeq": _seq(m.get("trimmedSeq"))}
        entries = []
        for entry_id, fields in raw_entries:
            f = _pairs(fields)
            entries.append({"n": int(entry_id.split("-")[0]), "seq": _seq(f.get("q")), "flags": f.get("f", ""),
                            "text": f.get("t", "")})
        return {"meta": meta, "leased": leased == 1, "entries": entries}

    async def live_run_key(self, thread_id: str) -> Optional[str]:
        """The stream key of the thread's running run (maybe over since), or None."""
        return await self.store._command("GET", self._live_key(thread_id))

    async def mark_present(self, key: str, ms: int) -> None:
        """This instance serves clients of ``key``, for ``ms`` (the holder's grace period waits for them)."""
        await self.store._command("SET", self._present_key(key), self.owner, "PX", str(ms))

    async def present(self, key: str) -> bool:
        return await self.store._command("EXISTS", self._present_key(key)) == 1

    async def request_abort(self, key: str, fingerprint: str) -> bool:  # noqa: A002
        """Asks the holder to abort (seen at its next renewal) if ``fingerprint`` is the starter's."""
        return await self._script("run-abort", key, [fingerprint]) == 1

    async def request_abort_of(self, run_id: str, fingerprint: str) -> int:  # noqa: A002
        """Asks the holders of every live run of ``run_id`` started with ``fingerprint``: how many were asked."""
        keys = await self.store._command("SMEMBERS", self._run_id_key(run_id))
        asked = 0
        for key in keys or ():
            if await self.request_abort(key, fingerprint):
                asked += 1
        return asked

    def watch(self, key: str, on_change: Callable[[], None], on_ready: Optional[Callable[[], None]] = None) -> Callable[[], None]:
        """on_change() after every write to the run's log by any instance; on_ready() once subscribed."""
        return self.store._watch_channel(self.keys(key)[0], on_change, on_ready)


class StoredRunLog:
    """A held run's log in the store, as its holder writes it (stored-run-log.js):
    opened when the run starts (the thread's running run is named), appended
    batch by batch before anything is published, its lease renewed every
    lease / 3. Another instance may ask for an abort there (seen at the next
    renewal). When the lease is lost (this instance stalled past it, the store
    refused, or stayed unreachable for the lease), the run is lost: the core
    stops the app and ends its clients' streams with the run-lost RUN_ERROR the
    store holds (or its own, when the store cannot be read). A store that
    cannot be reached when the run starts: the run goes on with its log here
    only, as without a store."""

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._run: Any = None  # the HeldRun
        self._opened: "Optional[asyncio.Future[bool]]" = None
        self._renewer: Optional[asyncio.Task] = None
        self._last_write = 0.0  # when the store last took a write or a renewal
        self._losing: "Optional[asyncio.Future[List[Dict[str, Any]]]]" = None

    def start(self, run: Any) -> None:
        """The run starts: its log is created in the store and its lease kept."""
        self._run = run
        self._last_write = now_ms()
        self._opened = asyncio.ensure_future(self._open())
        self._renewer = asyncio.ensure_future(self._renew_every(max(1, self._store.lease_ms // 3) / 1000.0))

    async def _open(self) -> bool:
        run = self._run
        try:
            await self._store.open(run.key, run.thread_id, run.run_id, run.fingerprint)
            return True
        except Exception as error:  # noqa: BLE001 - an unreachable store: the log stays here only
            log.warning("agui-state-sync: run %s keeps its log in memory only: the store cannot be reached (%s)",
                        run.key, error)
            return False

    def stop(self) -> None:
        """Stops renewing (the run is over, or lost)."""
        renewer, self._renewer = self._renewer, None
        if renewer is not None and renewer is not asyncio.current_task():
            renewer.cancel()

    def joined(self) -> None:
        """A client joined: nothing to say for the run's holder."""

    async def present(self) -> bool:
        """True when another instance serves clients of this run now (the grace period waits for them)."""
        return await self._store.present(self._run.key)

    async def request_abort(self) -> None:
        """Only a followed run asks its holder for an abort."""

    async def append(self, entries: List[Dict[str, Any]]) -> Optional[List[Dict[str, Any]]]:
        """Commits the core's batch: None once it landed (or the log is this instance's
        only); the entries the run ends with once the lease is lost."""
        if not await asyncio.shield(self._opened):  # type: ignore[arg-type]
            return None
        while True:
            if self._losing is not None:
                return await asyncio.shield(self._losing)
            try:
                if not await self._store.append(self._run.key, entries):
                    return await self._lose(None)
                self._last_write = now_ms()
                return None
            except Exception as error:  # noqa: BLE001 - unreachable: retried until the lease would have expired
                if now_ms() - self._last_write > self._store.lease_ms:
                    return await self._lose(error)
                await asyncio.sleep(RETRY_S)

    async def _renew_every(self, interval_s: float) -> None:
        run = self._run
        while True:
            await asyncio.sleep(interval_s)
            if self._renewer is None or self._losing is not None or not await asyncio.shield(self._opened):  # type: ignore[arg-type]
                return
            if run.info["finished"]:  # its terminal event releases the lease (Node stops renewing at finish())
                return
            try:
                answer = await self._store.renew(run.key, run.thread_id, run.run_id)
            except Exception:  # noqa: BLE001 - unreachable: the next write retries until the lease would have expired
                continue
            if self._renewer is None:
                return
            self._last_write = now_ms()
            if answer == "lost":
                await self._lose(None)
                return
            if answer == "abort":
                run.abort("client", run.credentials)

    def _lose(self, error: Optional[BaseException]) -> "asyncio.Future[List[Dict[str, Any]]]":
        """The run is lost to this instance (once): its tail as the store ends it, stepped into the core."""
        if self._losing is None:
            self._losing = asyncio.ensure_future(self._lost(error))
        return asyncio.shield(self._losing)

    async def _lost(self, error: Optional[BaseException]) -> List[Dict[str, Any]]:
        self.stop()
        run = self._run
        if error is not None:
            log.warning("agui-state-sync: run %s is lost: the store could not be written for %d ms (%s)", run.key,
                        self._store.lease_ms, error)
        tail: List[Dict[str, Any]] = []
        try:
            await self._store.lose(run.key)
            stored = await self._store.read(run.key, run.info["lastN"])
            tail = [] if stored is None else stored["entries"]
        except Exception as thrown:  # noqa: BLE001 - unreadable: the core ends the run with its own run-lost
            log.warning("agui-state-sync: run %s is lost and its store cannot be read (%s)", run.key, thrown)
        run.step({"on": "lost", "entries": tail})
        return tail


class FollowedRunLog:
    """A run another instance holds, followed here from its stored log
    (remote-run.js): read whole when a client first asks for it, then tailed
    on every notification of a write (store watch) and every lease / 2, a
    safety net that also checks the holder's lease: a live run whose lease
    expired (its holder died) is ended in the store with the run-lost
    RUN_ERROR, by whichever instance gets there first. While clients of it are
    attached here this instance says so in the store (every grace / 3, for
    grace), so the holder's grace period waits for them."""

    def __init__(self, store: RunStore, grace_ms: int) -> None:
        self._store = store
        self._grace_ms = grace_ms
        self._run: Any = None
        self.complete = False  # the run's terminal event was read: the copy is the whole run
        self._stopped = False
        self._unwatch: Optional[Callable[[], None]] = None
        self._tasks: List[asyncio.Task] = []
        self._pulling: Optional[asyncio.Task] = None
        self._again = False  # a notification came during a read: read once more
        self._spawned: "set[asyncio.Task]" = set()

    def seed(self, run: Any, stored: Dict[str, Any]) -> None:
        """The copy starts as the store holds the run ({meta, leased, entries}: read(key, 0))."""
        self._run = run
        meta, entries = stored["meta"], stored["entries"]
        first = entries[0] if entries else None
        run.step({"on": "seed", "afterN": first["n"] - 1 if first else meta["lastN"],
                  "seq": meta["trimmedSeq"] if first else meta["seq"], "startedN": meta["startedN"],
                  "startedText": meta["startedText"]})
        self._ingest(entries)

    def follow(self) -> None:
        """Starts tailing the stored log (unless the copy is complete already)."""
        if self._run.over.is_set():
            return
        self._unwatch = self._store.watch(self._run.key, self._pull, self._pull)
        self._tasks = [asyncio.ensure_future(self._every(max(1, self._store.lease_ms // 2) / 1000.0, lambda: self._pull(True))),
                       asyncio.ensure_future(self._every(max(1, self._grace_ms // 3) / 1000.0, self.joined))]

    def stop(self) -> None:
        """Stops following (the run ended, or the copy is dropped)."""
        self._stopped = True
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()
        self._tasks = []

    def joined(self) -> None:
        """Clients of the run are attached here: the holder's grace period waits for them."""
        run = self._run
        if self._stopped or run is None or run.over.is_set() or not run.clients:
            return
        self._later(self._store.mark_present(run.key, self._grace_ms))

    async def present(self) -> bool:
        return False  # the core never asks it of a followed run

    async def append(self, entries: List[Dict[str, Any]]) -> Optional[List[Dict[str, Any]]]:
        return None  # the core never appends to a followed run's log

    async def request_abort(self) -> None:
        """An abort asked here, by the starter: the holder is asked through the store."""
        try:
            await self._store.request_abort(self._run.key, self._run.fingerprint)
        except Exception as error:  # noqa: BLE001 - unreachable: the abort is not passed on
            log.warning("agui-state-sync: the abort of run %s could not be passed to its holder (%s)", self._run.key, error)

    async def _every(self, interval_s: float, fn: Callable[[], None]) -> None:
        while not self._stopped:
            await asyncio.sleep(interval_s)
            if not self._stopped:
                fn()

    def _later(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._spawned.add(task)
        task.add_done_callback(self._done_later)

    def _done_later(self, task: asyncio.Task) -> None:
        self._spawned.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("agui-state-sync: a run log write failed (%s)", task.exception())

    def _pull(self, check: bool = False) -> None:
        """Reads what the stored log holds after this copy's last event; ``check``: also
        end a live run whose holder's lease expired."""
        if self._stopped:
            return
        if self._pulling is not None:
            self._again = True
            return
        self._pulling = asyncio.ensure_future(self._read(check))
        self._pulling.add_done_callback(self._pulled)

    def _pulled(self, task: asyncio.Task) -> None:
        self._pulling = None
        if not task.cancelled() and task.exception() is not None:
            log.debug("agui-state-sync: reading run %s's log failed (%s)", self._run.key, task.exception())
        if self._again:
            self._again = False
            self._pull()

    async def _read(self, check: bool) -> None:
        run = self._run
        stored = await self._store.read(run.key, run.info["lastN"])
        if stored is None or self._stopped:
            return
        self._ingest(stored["entries"])
        if not check or self._stopped or stored["meta"]["status"] != "live" or stored["leased"]:
            return
        await self._store.lose(run.key)
        self._again = True  # read the run-lost event

    def _ingest(self, entries: List[Dict[str, Any]]) -> None:
        if not entries:
            return
        last = self._run.info["lastN"]
        for entry in entries:  # as the core takes them: in order, each once; a terminal one ends the copy
            if entry["n"] == last + 1:
                last += 1
                if "t" in entry["flags"]:
                    self.complete = True
                    break
        self._run.step({"on": "logged", "entries": entries})
