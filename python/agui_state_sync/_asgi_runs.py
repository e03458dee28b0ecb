"""StateSyncMiddleware's held runs, as a client reaches them (docs/wire.md
section 8, as the Node proxy serves them):

- a POST with a Last-Event-ID of ours ("<key>:<n>") resumes that run's stream
  after event n; the same runId posted again on its thread (a client cut
  before it got any id) resumes it from the start. The app is not called again;
- GET with X-AGUI-Attach: <threadId> joins the thread's running run (its
  RUN_STARTED, the client's own catch-up, the rest so far, then live), or,
  when none runs, answers a complete run of its own that only catches the
  client up ('idle');
- GET with a Last-Event-ID of ours resumes that stream, as an EventSource does.

Each request is judged by the access gate first (SECURITY.md): a requester
the backend has not accepted for the thread gets 403 and nothing of it.
"""

from __future__ import annotations

import inspect
import re
import uuid
from typing import Any, Dict, List, Optional, Tuple

from ._access import Refused, Unjudged, credentials_of
from ._asgi_clients import SSE_HEADERS, refuse, resume_start, serve_client
from ._json import json_bytes, plain
from ._run_holder import HeldRun
from .resync import HEADER_CATCH_UP, catch_up, read_resync_request

_ID = re.compile(r"^([A-Za-z0-9_-]{22}):(0|[1-9][0-9]{0,15})$")
_ATTACH = "x-agui-attach"
_POSITION_KEYS = ("lastSeq", "epoch", "reason", "held", "activities")
MAX_THREAD_ID = 1024


def event_id_of(value: Optional[str]) -> Optional[Tuple[str, int]]:
    """A Last-Event-ID of ours -> (stream key, n); None for anything else (the agent's own ids)."""
    match = _ID.match(value) if isinstance(value, str) and len(value) <= 39 else None
    return None if match is None else (match.group(1), int(match.group(2)))


def _headers(scope: Dict[str, Any]) -> Dict[str, str]:
    headers: Dict[str, str] = {}
    for name, value in scope.get("headers", []):
        headers.setdefault(bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1"))
    return headers


def _position(where: Dict[str, Any]) -> Dict[str, Any]:
    return {k: where.get(k) for k in _POSITION_KEYS}


class RunRoutes:
    def __init__(self, middleware: Any) -> None:
        self.mw = middleware

    def hold(self, thread_id: str, run_id: str, credentials: List[Optional[str]], *, keep: bool) -> HeldRun:
        """A new held run of the thread (its starter joins it next)."""
        mw = self.mw
        run = HeldRun(mw.runs, thread_id=thread_id, run_id=run_id, credentials=credentials, keep=keep,
                      catch_up=lambda position: self._catch_up(thread_id, position),
                      epoch=lambda: getattr(mw.sequencer.emitter_for(thread_id), "epoch", None),
                      heartbeat_s=mw.heartbeat_s)
        mw.runs.add(run)
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
        return False

    def target(self, run_input: Optional[Dict[str, Any]], event_id: Optional[Tuple[str, int]]) -> Any:
        """The run a request resumes, (run, n); None for a new run; a (status, message) refusal."""
        book = self.mw.runs
        if event_id is not None:
            run = book.lookup(event_id[0])
            if run is not None and (run_input is None or (run_input.get("threadId") == run.thread_id and (
                    run_input.get("runId") == run.run_id or not run.over.is_set()))):
                return run, event_id[1]
            if run_input is None:
                return 410, "the run of this Last-Event-ID is over and no longer held"
        if run_input is None:
            return None
        run = book.of_run_id(str(run_input.get("threadId")), str(run_input.get("runId")))
        return None if run is None else (run, 0)

    async def serve_resume(self, scope: Dict[str, Any], receive: Any, send: Any, run_input: Dict[str, Any],
                           headers: Dict[str, str]) -> bool:
        """A POST that resumes a held run: True when answered here."""
        found = self.target(run_input, event_id_of(headers.get("last-event-id")))
        if found is None:
            return False
        if isinstance(found[0], int):
            await refuse(send, found[0], "invalid-request", found[1])
            return True
        run, n = found
        if await self._admitted(send, "resume", run.thread_id, headers):
            await self.resume(run, n, _position(read_resync_request(run_input)), send, receive, attach=False)
        return True

    async def resume(self, run: HeldRun, n: int, position: Dict[str, Any], send: Any, receive: Any, *, attach: bool) -> None:
        client = run.join({"afterN": n, "attach": attach, "position": position})
        await serve_client(run, client, send, receive, head=lambda: resume_start("exact", attach))

    async def serve_get(self, scope: Dict[str, Any], receive: Any, send: Any) -> bool:
        """GET with X-AGUI-Attach, or with a Last-Event-ID of ours: True when answered here."""
        if scope.get("method") != "GET":
            return False
        headers = _headers(scope)
        event_id = event_id_of(headers.get("last-event-id"))
        thread_id = headers.get(_ATTACH)
        if thread_id is None and event_id is None:
            return False
        position = _position(read_resync_request({"headers": headers}))
        if thread_id is None:  # an EventSource's reconnect
            found = self.target(None, event_id)
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
        held = self.mw.runs.lookup(event_id[0]) if event_id is not None else None
        if held is not None and held.thread_id == thread_id and event_id[1] <= held.info["lastN"]:
            await self.resume(held, event_id[1], position, send, receive, attach=True)
            return True
        live = self.mw.runs.live_on(thread_id)
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
