"""StateSyncMiddleware: one line on a Starlette/FastAPI (any ASGI) app, and
the SSE responses of the AG-UI endpoints it is told about are sequenced:

    app.add_middleware(StateSyncMiddleware, paths=["/agent"])

The endpoint is not changed (add_langgraph_fastapi_endpoint(...), a route
returning AGUIAdapter.dispatch_request(...)). For a POST to one of ``paths``
whose response is text/event-stream, the middleware reads the RunAgentInput,
judges the client's edits (the app gets the accepted state and no edits),
reads the app's stream with the core's SSE framer, sequences it per threadId
(sequence_state), answers the client's catch-up after RUN_STARTED, and writes
heartbeats while the agent is quiet. Anything else passes through untouched.

Not here (the Node proxy's job): resuming the whole stream (chat text
included) after a cut; a reconnecting client gets the state, not the text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Iterable, Optional

from ._asgi_io import ResponseTap, read_body, replay, sse_start, with_heartbeats, with_length
from .errors import AguiSyncError, sync_type_error
from .sequence import StateSequencer

DEFAULT_HEARTBEAT_S = 15.0


class StateSyncMiddleware:
    def __init__(self, app: Any, *, paths: Iterable[str], sequencer: Optional[StateSequencer] = None,
                 heartbeat_s: Optional[float] = DEFAULT_HEARTBEAT_S) -> None:
        paths = [paths] if isinstance(paths, str) else list(paths)
        if not paths or not all(isinstance(p, str) and p.startswith("/") for p in paths):
            raise sync_type_error("invalid-options", "StateSyncMiddleware paths must be a list of URL paths ('/agent')")
        if heartbeat_s is not None and (not isinstance(heartbeat_s, (int, float)) or heartbeat_s <= 0):
            raise sync_type_error("invalid-options", "StateSyncMiddleware heartbeat_s must be a positive number or None")
        self.app = app
        self.paths = frozenset(paths)
        self.sequencer = sequencer or StateSequencer()
        self.heartbeat_s = heartbeat_s

    async def __call__(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") not in self.paths:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        try:
            run_input = json.loads(body)
        except ValueError:
            run_input = None
        if not isinstance(run_input, dict):  # not a RunAgentInput: the endpoint answers it
            await self.app(scope, replay(body, receive), send)
            return
        await self._sequenced(scope, receive, send, run_input)

    async def _sequenced(self, scope: Dict[str, Any], receive: Any, send: Any, run_input: Dict[str, Any]) -> None:
        tap = ResponseTap(send)
        app_task: Optional[asyncio.Task] = None

        def start_agent(prepared: Dict[str, Any]) -> Any:
            nonlocal app_task
            rewritten = json.dumps(prepared).encode("utf-8")
            app_task = asyncio.ensure_future(self.app(with_length(scope, len(rewritten)), replay(rewritten, receive), tap))
            app_task.add_done_callback(lambda _: tap.finish())
            return tap.chunks()

        thread_id = str(run_input.get("threadId") or "")
        stream = self.sequencer.run(start_agent, run_input, sse=True)
        started = False
        try:
            async for chunk in with_heartbeats(stream, lambda: self._heartbeat(thread_id), self.heartbeat_s):
                if not started:
                    started = True
                    await send(sse_start(tap.start or {"type": "http.response.start", "status": 200}))
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except AguiSyncError as error:
            _cancel(app_task)
            if started or tap.passthrough:
                raise
            await _refuse(send, error)
            return
        except BaseException:  # the client went away, or the app failed: the agent stops too
            _cancel(app_task)
            raise
        if app_task is not None:
            await app_task  # done, or finishing a response it passes through; its failure is raised
        if not tap.passthrough:
            if not started:
                await send(sse_start(tap.start or {"type": "http.response.start", "status": 200}))
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _heartbeat(self, thread_id: str) -> Optional[bytes]:
        emitter = self.sequencer.emitter_for(thread_id)
        return None if emitter is None else emitter.heartbeat()


def _cancel(task: Optional[asyncio.Task]) -> None:
    if task is not None and not task.done():
        task.cancel()


async def _refuse(send: Any, error: AguiSyncError) -> None:
    """A request the sequencer refused before anything was sent (hostile edits): 400 with the code."""
    body = json.dumps({"ok": False, "code": error.code, "message": str(error)}).encode("utf-8")
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
