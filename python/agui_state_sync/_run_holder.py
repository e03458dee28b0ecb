"""The runs StateSyncMiddleware holds
(docs/proxy.md#the-python-middleware-holds-its-runs-too; what a resume or an
attach gets on the wire: docs/wire.md section 8): the driver of the core's
run machine (_core.RunFacade, src/run/run_life.h), the one the Node proxy's
run follows too. The core decides what each client gets, when a run is
abandoned, who may abort it, and what a resume or an attach is sent; this file
does the I/O it asks for: the app's task, the clients' queues, the timer, and
(with a store that keeps run logs) the store's answers.

A held run reads the app's sequenced stream in a task of its own, not in the
request that started it: the app never sees its client go away, and a client
that comes back (Last-Event-ID, or the same runId posted again) gets the rest
byte for byte.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional

from . import _core
from ._json import json_bytes, parse
from .errors import AguiSyncError, sync_error
from .stores.run_log import fingerprint as credentials_fingerprint

DEFAULT_GRACE_MS = 30000
DEFAULT_MAX_RUN_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_RUN_EVENTS = 100000
DEFAULT_MAX_RUN_CLIENTS = 64
KEEP_FINISHED = 256  # finished runs kept for late resumes (each for the grace period)


def new_stream_key() -> str:
    """128 random bits, base64url: 22 characters, as the Node proxy's keys."""
    return secrets.token_urlsafe(16)


def now_ms() -> int:
    return int(time.monotonic() * 1000)


class ClientStream:
    """One connection of a held run: what the core addressed to it, in order,
    for the request's task to write (items: ('head', mode), ('data', bytes),
    ('close', None), ('refuse', (status, code, message)), ('void', None))."""

    def __init__(self, client_id: int, join: Dict[str, Any]) -> None:
        self.id = client_id
        self.join = join  # the core's join step for it (its catch-up added once asked)
        self.queue: "asyncio.Queue[Any]" = asyncio.Queue()


class HeldRun:
    def __init__(self, book: "RunBook", *, thread_id: str, run_id: str, credentials: List[Optional[str]],
                 keep: bool = False, log: Any = None, catch_up: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 thread: Callable[[], Any] = lambda: None, heartbeat_s: Optional[float] = None,
                 key: Optional[str] = None, followed: bool = False, fingerprint: Optional[str] = None) -> None:
        self.book = book
        self.key = key or new_stream_key()
        self.thread_id = thread_id
        self.run_id = run_id
        self.followed = followed
        self.log = log  # a StoredRunLog / FollowedRunLog (stores/run_log.py), or None: the log lives here only
        self.credentials = credentials  # the starter's (none for a followed run: its stored fingerprint says who)
        # Who started it: the core's requester digest, as a stored log records it. An abort must come from them.
        self.fingerprint = fingerprint if fingerprint is not None else credentials_fingerprint(credentials)
        self._catch_up = catch_up  # position -> [event JSON text]: the thread's catch-up for a client
        self._thread = thread  # the thread's emitter here (None: none yet): where the thread is now
        options = {"key": self.key, "requester": self.fingerprint, "keep": keep, "stored": log is not None and not followed,
                   "followed": followed, "graceMs": book.grace_ms, "maxBytes": book.max_run_bytes,
                   "maxEvents": book.max_run_events, "maxClients": book.max_run_clients}
        self.core = _core.RunFacade(json_bytes(options, "the run's options").decode())
        init = parse(self.core.init_result())
        if not init.get("ok"):
            raise sync_error(init["code"], init["message"])
        self.clients: Dict[int, ClientStream] = {}
        self.started = asyncio.Event()
        self.over = asyncio.Event()
        self.head: Optional[Dict[str, Any]] = None  # the app's SSE response start, for its starter
        self.upstream: Optional[asyncio.Task] = None  # cancelled on stop-upstream
        self.stop_app: Callable[[], None] = lambda: None  # cancels the app's task too
        self.on_over: List[Callable[[], Any]] = []
        self._timer: Optional[asyncio.TimerHandle] = None
        self._beats: Optional[asyncio.TimerHandle] = None
        self._heartbeat_s = heartbeat_s
        self._tasks: "set[asyncio.Task]" = set()
        self._next_client = 1

    # -- what happened -------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        """The app's sequenced SSE bytes."""
        self._carry(self.core.feed(chunk))

    def ended(self, failure: Optional[str]) -> None:
        self.step({"on": "ended", "failure": failure})

    def join(self, join: Dict[str, Any]) -> ClientStream:
        """A client joins (its starter, a resume, an attach): its stream, fed as the core says."""
        client = ClientStream(self._next_client, {**join, "on": "join", "client": self._next_client})
        self._next_client += 1
        self.clients[client.id] = client
        self._join(client)
        if self.log is not None:
            self.log.joined()
        return client

    def left(self, client: ClientStream) -> None:
        if self.clients.pop(client.id, None) is not None:
            self.step({"on": "left", "client": client.id, "now": now_ms()})

    def abort(self, reason: str, credentials: List[Optional[str]]) -> bool:
        """X-AGUI-Abort ('client', with the requester's credentials) or shutdown ('closed'): True when it ended the run."""
        answer = parse(self.core.step(json_bytes({"on": "abort", "reason": reason, "credentials": credentials}, "abort")))
        refused = any(a["do"] == "refuse" for a in answer.get("actions", []))
        self._carry_actions(answer)
        return answer.get("ok", False) and not refused

    def step(self, input: Dict[str, Any]) -> None:  # noqa: A002
        self._carry(self.core.step(json_bytes(input, "a run step")))

    @property
    def info(self) -> Dict[str, Any]:
        return parse(self.core.info_json())

    # -- what to do ----------------------------------------------------------

    def _join(self, client: ClientStream) -> None:
        join = dict(client.join)
        # Where the thread is now: an ended run's exact resume holds only if it is still where the run left it.
        emitter = self._thread()
        join["epoch"], join["seq"] = getattr(emitter, "epoch", None), getattr(emitter, "seq", None)
        self.step(join)

    def _carry(self, answer_text: str) -> None:
        self._carry_actions(parse(answer_text))

    def _carry_actions(self, answer: Dict[str, Any]) -> None:
        if not answer.get("ok"):  # a bug in this driver: the core refused its own step
            raise sync_error(answer.get("code", "engine-failed"), answer.get("message", "the run's step failed"))
        for action in answer["actions"]:
            getattr(self, "_do_" + action["do"].replace("-", "_"))(action)

    def _each(self, action: Dict[str, Any]) -> List[ClientStream]:
        return [self.clients[c] for c in action.get("to", []) if c in self.clients]

    def _do_send(self, action: Dict[str, Any]) -> None:
        data = action["text"].encode("utf-8")
        self.book.client_bytes += len(data) * len(action["to"])
        for client in self._each(action):
            client.queue.put_nowait(("data", data))

    def _do_head(self, action: Dict[str, Any]) -> None:
        for client in self._each(action):
            client.queue.put_nowait(("head", action["mode"]))

    def _do_close(self, action: Dict[str, Any]) -> None:
        for client in self._each(action):
            client.queue.put_nowait(("close", None))
            self.clients.pop(client.id, None)

    def _do_refuse(self, action: Dict[str, Any]) -> None:
        for client in self._each(action):
            client.queue.put_nowait(("refuse", (action["status"], action["code"], action["message"])))
            self.clients.pop(client.id, None)

    def _do_catch_up(self, action: Dict[str, Any]) -> None:
        for client in self._each(action):
            self._spawn(self._caught_up(client))

    async def _caught_up(self, client: ClientStream) -> None:
        events = await self._catch_up(client.join.get("position") or {}) if self._catch_up else []
        if client.id in self.clients:
            client.join["catchUp"] = events
            self._join(client)

    def _do_rejoin(self, action: Dict[str, Any]) -> None:
        for client in self._each(action):
            self._join(client)

    def _do_arm(self, action: Dict[str, Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, (action["at"] - now_ms()) / 1000)
        self._timer = asyncio.get_running_loop().call_later(delay, lambda: self.step({"on": "timer", "now": now_ms()}))

    def _do_disarm(self, _: Dict[str, Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _do_ask_present(self, _: Dict[str, Any]) -> None:
        async def ask() -> None:
            try:
                elsewhere = await self.log.present()
            except Exception:  # noqa: BLE001 - an unreachable store: nobody is known to be there
                elsewhere = False
            self.step({"on": "present", "elsewhere": elsewhere, "now": now_ms()})
        self._spawn(ask())

    def _do_stop_upstream(self, _: Dict[str, Any]) -> None:
        if self.upstream is not None and not self.upstream.done():
            self.upstream.cancel()
        self.stop_app()
        if self.log is not None:
            self.log.stop()

    def _do_ask_abort(self, _: Dict[str, Any]) -> None:
        self._spawn(self.log.request_abort())

    def _do_append(self, action: Dict[str, Any]) -> None:
        entries = action["entries"]

        async def append() -> None:
            tail = await self.log.append(entries)
            if tail is None:
                self.step({"on": "committed", "n": entries[-1]["n"]})
            else:  # the lease is lost: the run ends with the store's run-lost event
                self.step({"on": "lost", "entries": tail})
        self._spawn(append())

    def _do_defer(self, _: Dict[str, Any]) -> None:
        pass  # the sequencer wrote the run's catch-up for its first position already: the client catches up from there

    def _do_started(self, _: Dict[str, Any]) -> None:
        self.started.set()
        if self._heartbeat_s is not None:
            self._beat()

    def _do_done(self, _: Dict[str, Any]) -> None:
        self._do_disarm({})
        if self._beats is not None:
            self._beats.cancel()
        if self.log is not None:
            self.log.stop()
        self.over.set()
        for fn in self.on_over:
            fn()
        if self.followed and not getattr(self.log, "complete", False):
            self.book.forget(self)  # a copy dropped while the run goes on at its holder: a later client reads it afresh
        else:
            self.book.finished(self)

    def _beat(self) -> None:
        if self.over.is_set():
            return
        self._carry(self.core.step(b'{"on":"heartbeat"}'))
        self._beats = asyncio.get_running_loop().call_later(self._heartbeat_s, self._beat)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the app's side ------------------------------------------------------

    def pump(self, stream: Any, on_first: Callable[[], None]) -> asyncio.Task:
        """Reads the app's sequenced stream to its end in a task of its own."""
        async def run() -> None:
            failure: Optional[str] = None
            first = True
            try:
                async for chunk in stream:
                    if first:
                        first = False
                        on_first()
                    self.feed(chunk)
            except asyncio.CancelledError:
                pass  # stopped by the core (an abort): it finished the run already
            except AguiSyncError as error:
                failure = str(error)
                if first:
                    self.void(("error", error))
                    return
            except Exception as error:  # noqa: BLE001 - the app failed: its clients get RUN_ERROR
                failure = f"the agent failed: {type(error).__name__}: {error}"
            if first and not self.over.is_set():
                self.void(("nothing", None))  # the app answered something else than a stream (passed through)
                return
            self.ended(failure)
        self.upstream = asyncio.ensure_future(run())
        return self.upstream

    def void(self, why: Any) -> None:
        """The app never streamed: nothing of the run was sent; its clients get `why`."""
        for client in list(self.clients.values()):
            client.queue.put_nowait(("void", why))
        self.clients.clear()
        self.over.set()
        for fn in self.on_over:
            fn()
        self.book.forget(self)


class RunBook:
    """The middleware's runs: held ones by stream key, the live one of each
    thread, and finished ones kept for late resumes (a client cut right after
    RUN_FINISHED learns the run ended)."""

    def __init__(self, grace_ms: int = DEFAULT_GRACE_MS, max_run_bytes: int = DEFAULT_MAX_RUN_BYTES,
                 max_run_events: int = DEFAULT_MAX_RUN_EVENTS, max_run_clients: int = DEFAULT_MAX_RUN_CLIENTS) -> None:
        self.grace_ms = grace_ms
        self.max_run_bytes = max_run_bytes
        self.max_run_events = max_run_events
        self.max_run_clients = max_run_clients
        self.client_bytes = 0
        self._runs: Dict[str, HeldRun] = {}
        self._finished: "OrderedDict[str, float]" = OrderedDict()

    def add(self, run: HeldRun) -> None:
        self._runs[run.key] = run

    def lookup(self, key: str) -> Optional[HeldRun]:
        self._expire()
        return self._runs.get(key)

    def live_on(self, thread_id: str) -> Optional[HeldRun]:
        """The thread's run still streaming, the one started last."""
        found = None
        for run in self._runs.values():
            if run.thread_id == thread_id and not run.over.is_set() and not run.followed:
                found = run
        return found

    def live_of(self, run_id: str) -> List[HeldRun]:
        """The runs of that runId still going, held here or followed: what an X-AGUI-Abort names."""
        return [run for run in self._runs.values() if run.run_id == run_id and not run.over.is_set()]

    def of_run_id(self, thread_id: str, run_id: str) -> Optional[HeldRun]:
        """The run of that runId on the thread (live, or finished and still kept)."""
        self._expire()
        found = None
        for run in self._runs.values():
            if run.thread_id == thread_id and run.run_id == run_id:
                found = run
        return found

    @property
    def live(self) -> int:
        return sum(1 for run in self._runs.values() if not run.over.is_set())

    def finished(self, run: HeldRun) -> None:
        self._finished[run.key] = time.monotonic() + self.grace_ms / 1000
        while len(self._finished) > KEEP_FINISHED:
            key, _ = self._finished.popitem(last=False)
            self._runs.pop(key, None)

    def forget(self, run: HeldRun) -> None:
        self._runs.pop(run.key, None)
        self._finished.pop(run.key, None)

    def _expire(self) -> None:
        now = time.monotonic()
        while self._finished:
            key, until = next(iter(self._finished.items()))
            if until > now:
                return
            self._finished.popitem(last=False)
            self._runs.pop(key, None)

    def close(self) -> None:
        """Shutdown: every live run ends with RUN_ERROR run-aborted ('closed')."""
        for run in list(self._runs.values()):
            if not run.over.is_set():
                run.abort("closed", [])

    async def shutdown(self, timeout_s: float) -> None:
        """The server stops: the runs held here end ('closed': RUN_ERROR run-aborted, committed to the
        store first), so that another instance sees them over rather than waiting for their lease;
        copies of other instances' runs end their streams only (their clients resume elsewhere)."""
        live = [run for run in self._runs.values() if not run.over.is_set()]
        self.close()
        if live:
            await asyncio.wait([asyncio.ensure_future(run.over.wait()) for run in live], timeout=timeout_s)
