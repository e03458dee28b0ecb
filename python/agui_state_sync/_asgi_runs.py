"""StateSyncMiddleware's held runs, as a client reaches them (docs/wire.md
section 8, as the Node proxy serves them):

- a POST with a Last-Event-ID of ours ("<key>:<n>") resumes that run's stream
  after event n; the same runId posted again on its thread (a client cut
  before it got any id) resumes it from the start. The app is not called again;
- GET with X-AGUI-Attach: <threadId> joins the thread's running run (its
  RUN_STARTED, the client's own catch-up, the rest so far, then live), or,
  when none runs, answers a complete run of its own that only catches the
  client up ('idle');
- GET with a Last-Event-ID of ours resumes that stream, as an EventSource does;
- POST with X-AGUI-Abort: <runId> aborts that run's live runs started with the
  same credentials (202; 404 when there is none), wherever they are held.

With a store that keeps run logs (redis_store(): stores/run_log.py), a run
another instance holds, Node's or Python's, is served here as well: by a
Last-Event-ID's stream key, or as the thread's running run (an attach, a POST
of its runId), from its stored log (a followed copy, one per run here), and
an abort of a run held elsewhere is asked of its holder through the store
(create-proxy.js resumeTarget / answerAbort, attach.js, remote-runs.js).

Each request is judged by the access gate first (SECURITY.md): a requester
the backend has not accepted for the thread gets 403 and nothing of it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import uuid
from typing import Any, Dict, List, Optional, Tuple

from ._access import Refused, Unjudged, credentials_of
from ._asgi_io import request_headers
from ._asgi_clients import SSE_HEADERS, refuse, resume_start, serve_client
from ._json import json_bytes, plain
from ._run_holder import HeldRun
from .errors import AguiSyncError
from .resync import HEADER_CATCH_UP, catch_up, read_resync_request
from .stores.run_log import FollowedRunLog, RunStore, StoredRunLog, fingerprint

_ID = re.compile(r"^([A-Za-z0-9_-]{22}):(0|[1-9][0-9]{0,15})$")
_ATTACH = "x-agui-attach"
ABORT = "x-agui-abort"
MAX_THREAD_ID = 1024


def event_id_of(value: Optional[str]) -> Optional[Tuple[str, int]]:
    """A Last-Event-ID of ours -> (stream key, n); None for anything else (the agent's own ids)."""
    match = _ID.match(value) if isinstance(value, str) and len(value) <= 39 else None
    return None if match is None else (match.group(1), int(match.group(2)))


def client_position(request: Any) -> Dict[str, Any]:
    """Where a client says its state is (its X-AGUI-State-* headers, or forwardedProps.stateSync), as the core reads it."""
    return read_resync_request(request)


class StoreAway(Exception):
    """The run store could not be reached to find a run: 503 store-unavailable."""


class RunRoutes:
    def __init__(self, middleware: Any) -> None:
        self.mw = middleware
        self.remote = None if middleware.run_store is None else RemoteRuns(self, middleware.run_store)

    def hold(self, thread_id: str, run_id: str, credentials: List[Optional[str]], *, keep: bool) -> HeldRun:
        """A new held run of the thread (its starter joins it next); with a run store, its log is kept there."""
        mw = self.mw
        log = None if mw.run_store is None else StoredRunLog(mw.run_store)
        run = HeldRun(mw.runs, thread_id=thread_id, run_id=run_id, credentials=credentials, keep=keep, log=log,
                      catch_up=lambda position: self._catch_up(thread_id, position),
                      thread=lambda: mw.sequencer.emitter_for(thread_id),
                      heartbeat_s=mw.heartbeat_s)
        mw.runs.add(run)
        if log is not None:
            log.start(run)
        return run

    def follow(self, stored: Dict[str, Any], release: Any) -> HeldRun:
        """A copy here of a run another instance holds ({meta, leased, entries}: its stored log,
        read whole), tailed from the store. release(): lets the thread's emitter go once it is over."""
        mw = self.mw
        meta = stored["meta"]
        thread_id = meta["threadId"]
        log = FollowedRunLog(mw.run_store, mw.runs.grace_ms)
        # The core compares an abort's requester with the starter's, the stored fingerprint.
        run = HeldRun(mw.runs, thread_id=thread_id, run_id=meta["runId"], credentials=[],
                      fingerprint=meta["fingerprint"], log=log, key=meta["key"], followed=True,
                      catch_up=lambda position: self._catch_up(thread_id, position),
                      thread=lambda: mw.sequencer.emitter_for(thread_id),
                      heartbeat_s=mw.heartbeat_s)
        run.on_over.append(release)
        mw.runs.add(run)
        log.seed(run, stored)
        log.follow()
        return run

    async def _catch_up(self, thread_id: str, position: Dict[str, Any]) -> List[str]:
        """The thread's catch-up for a client at `position`, as event JSON texts (the core frames them)."""
        return (await self._catch_up_answer(thread_id, position))[1]

    async def _catch_up_answer(self, thread_id: str, position: Dict[str, Any]) -> Tuple[str, List[str]]:
        emitter = self.mw.sequencer.emitter_for(thread_id)
        if emitter is None:
            return "current", []
        answer = catch_up(emitter, {"forwardedProps": {"stateSync": position}})
        if inspect.isawaitable(answer):
            answer = await answer
        texts = [json_bytes(plain(event, event=True), "a catch-up event").decode("utf-8") for event in answer["events"]]
        return answer["mode"], texts

    async def _admitted(self, send: Any, kind: str, thread_id: str, headers: Dict[str, str]) -> bool:
        """The access gate's word on this requester for the thread; a refusal is answered here."""
        request = {"kind": kind, "threadId": thread_id, "credentials": credentials_of(headers), "resume": None,
                   "headers": headers}
        try:
            await self.mw.access.admit(request)
            return True
        except Refused:
            await refuse(send, 403, "not-authorized", "the backend has not accepted this requester for this thread")
        except Unjudged as error:
            await refuse(send, 400, error.code, f"the request cannot be judged: {error}")
        except AguiSyncError as error:  # the grants' store is unreachable
            await refuse(send, 503 if error.code == "store-unavailable" else 400, error.code, str(error))
        return False

    async def by_key(self, key: str) -> Optional[HeldRun]:
        """The run of stream key ``key``: held or followed here, else another instance's from the store."""
        run = self.mw.runs.lookup(key)
        if run is None and self.remote is not None:
            run = await self._remote(self.remote.by_key(key))
        return run

    async def running_on(self, thread_id: str) -> Optional[HeldRun]:
        """The thread's running run: held here, else another instance's (named in the store)."""
        run = self.mw.runs.live_on(thread_id)
        if run is None and self.remote is not None:
            run = await self._remote(self.remote.running_on(thread_id))
        return run

    @staticmethod
    async def _remote(lookup: Any) -> Any:
        try:
            return await lookup
        except AguiSyncError as error:
            if error.code == "store-unavailable":
                raise StoreAway() from error
            raise

    async def target(self, run_input: Optional[Dict[str, Any]], event_id: Optional[Tuple[str, int]]) -> Any:
        """The run a request resumes, (run, n); None for a new run; a (status, message) refusal."""
        book = self.mw.runs
        if event_id is not None:
            run = await self.by_key(event_id[0])
            if run is not None and (run_input is None or (run_input.get("threadId") == run.thread_id and (
                    run_input.get("runId") == run.run_id or not run.over.is_set()))):
                return run, event_id[1]
            if run_input is None:
                return 410, "the run of this Last-Event-ID is over and no longer held"
        if run_input is None:
            return None
        thread_id, run_id = str(run_input.get("threadId")), str(run_input.get("runId"))
        run = book.of_run_id(thread_id, run_id)
        if run is None and self.remote is not None:  # the same runId live at another instance: it is joined
            elsewhere = await self._remote(self.remote.running_on(thread_id))
            run = elsewhere if elsewhere is not None and elsewhere.run_id == run_id else None
        return None if run is None else (run, 0)

    async def serve_resume(self, scope: Dict[str, Any], receive: Any, send: Any, run_input: Dict[str, Any],
                           headers: Dict[str, str]) -> bool:
        """A POST that resumes a held run: True when answered here."""
        try:
            found = await self.target(run_input, event_id_of(headers.get("last-event-id")))
        except StoreAway:
            await refuse(send, 503, "store-unavailable", "the run store cannot be reached")
            return True
        if found is None:
            return False
        if isinstance(found[0], int):
            await refuse(send, found[0], "invalid-request", found[1])
            return True
        run, n = found
        if await self._admitted(send, "resume", run.thread_id, headers):
            await self.resume(run, n, client_position(run_input), send, receive, attach=False)
        return True

    async def resume(self, run: HeldRun, n: int, position: Dict[str, Any], send: Any, receive: Any, *, attach: bool) -> None:
        client = run.join({"afterN": n, "attach": attach, "position": position})
        await serve_client(run, client, send, receive, head=lambda: resume_start("exact", attach))

    async def serve_get(self, scope: Dict[str, Any], receive: Any, send: Any) -> bool:
        """GET with X-AGUI-Attach, or with a Last-Event-ID of ours: True when answered here."""
        if scope.get("method") != "GET":
            return False
        try:
            return await self._serve_get(scope, receive, send)
        except StoreAway:
            await refuse(send, 503, "store-unavailable", "the run store cannot be reached")
            return True

    async def _serve_get(self, scope: Dict[str, Any], receive: Any, send: Any) -> bool:
        headers = request_headers(scope)
        event_id = event_id_of(headers.get("last-event-id"))
        thread_id = headers.get(_ATTACH)
        if thread_id is None and event_id is None:
            return False
        position = client_position({"headers": headers})
        if thread_id is None:  # an EventSource's reconnect
            found = await self.target(None, event_id)
            if found is None or isinstance(found[0], int):
                await refuse(send, 410, "invalid-request", "the run of this Last-Event-ID is over and no longer held")
            elif await self._admitted(send, "resume", found[0].thread_id, headers):
                await self.resume(found[0], found[1], position, send, receive, attach=False)
            return True
        if not thread_id or len(thread_id) > MAX_THREAD_ID:
            await refuse(send, 400, "invalid-request", "X-AGUI-Attach names a thread: 1 to 1024 characters")
            return True
        if not await self._admitted(send, "attach", thread_id, headers):
            return True
        held = await self.by_key(event_id[0]) if event_id is not None else None
        if held is not None and held.thread_id == thread_id and event_id[1] <= held.info["lastN"]:
            await self.resume(held, event_id[1], position, send, receive, attach=True)
            return True
        live = await self.running_on(thread_id)
        if live is not None:
            await self.resume(live, 0, position, send, receive, attach=True)
        else:
            await self._idle(thread_id, position, send)
        return True

    async def _idle(self, thread_id: str, position: Dict[str, Any], send: Any) -> None:
        """No run is going on: the client's catch-up, framed as a complete run of its own (no ids)."""
        emitter = self.mw.sequencer.emitter_for(thread_id)
        mode, events = await self._catch_up_answer(thread_id, position)
        ids = {"threadId": thread_id, "runId": str(uuid.uuid4())}
        parts = [b"data: " + json_bytes({"type": "RUN_STARTED", **ids}, "RUN_STARTED") + b"\n\n"]
        parts += [b"data: " + event.encode("utf-8") + b"\n\n" for event in events]
        parts.append(emitter.heartbeat() if emitter is not None else b": hb\n\n")
        parts.append(b"data: " + json_bytes({"type": "RUN_FINISHED", **ids}, "RUN_FINISHED") + b"\n\n")
        await send({"type": "http.response.start", "status": 200,
                    "headers": [*SSE_HEADERS, (b"x-agui-attach", b"idle"), (HEADER_CATCH_UP.lower().encode(), mode.encode())]})
        await send({"type": "http.response.body", "body": b"".join(parts), "more_body": False})

    async def serve_abort(self, send: Any, headers: Dict[str, str], run_id: str) -> None:
        """POST with X-AGUI-Abort: <runId> (create-proxy.js answerAbort): the live runs of that runId
        started with the requester's credentials are aborted, here or, through the store, at their
        holder, whether or not this instance serves any of their clients."""
        credentials = credentials_of(headers)
        asker = fingerprint(credentials)
        runs = [run for run in self.mw.runs.live_of(run_id) if run.fingerprint == asker and not run.info["finished"]]
        aborted = 0
        for run in runs:  # the core judges it again (a copy asks its holder, through the store)
            if run.abort("client", credentials):
                aborted += 1
        if not runs and self.mw.run_store is not None:
            try:
                aborted = await self.mw.run_store.request_abort_of(run_id, asker)
            except AguiSyncError:
                await refuse(send, 503, "store-unavailable", "the run store cannot be reached")
                return
        found = bool(runs) or aborted > 0
        body = json.dumps({"aborted": found}).encode("utf-8")
        await send({"type": "http.response.start", "status": 202 if found else 404,
                    "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


class RemoteRuns:
    """Runs other instances hold, found through the store and served here as
    followed copies (remote-runs.js): by a Last-Event-ID's stream key, or as a
    thread's running run. One copy per run per instance; it is registered like
    a run this instance holds, so resumes, attaches and aborts find it the same way."""

    def __init__(self, routes: RunRoutes, store: RunStore) -> None:
        self._routes = routes
        self._store = store
        self._opening: Dict[str, "asyncio.Future[Optional[HeldRun]]"] = {}

    async def by_key(self, key: str) -> Optional[HeldRun]:
        """The run ``key`` (held or followed here, or a new copy of another instance's); None when the store has none."""
        known = self._routes.mw.runs.lookup(key)
        if known is not None:
            return known
        pending = self._opening.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._open(key))
            self._opening[key] = pending
            pending.add_done_callback(lambda _: self._opening.pop(key, None))
        return await asyncio.shield(pending)

    async def running_on(self, thread_id: str) -> Optional[HeldRun]:
        """The thread's running run at another instance (a copy here), or None."""
        key = await self._store.live_run_key(thread_id)
        if key is None:
            return None
        run = await self.by_key(key)
        return run if run is not None and not run.over.is_set() and run.thread_id == thread_id else None

    async def _open(self, key: str) -> Optional[HeldRun]:
        stored = await self._store.read(key, 0)
        if stored is None:
            return None
        # The thread's emitter is kept here while the copy is: its clients' catch-ups and epoch are read there.
        release = await self._routes.mw.sequencer.pin(stored["meta"]["threadId"])
        try:
            return self._routes.follow(stored, release)
        except BaseException:
            release()
            raise
