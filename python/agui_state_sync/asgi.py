"""StateSyncMiddleware: one line on a Starlette/FastAPI (any ASGI) app, and
the SSE responses of the AG-UI endpoints it is told about are sequenced:

    app.add_middleware(StateSyncMiddleware, paths=["/agent"])

The endpoint is not changed (add_langgraph_fastapi_endpoint(...), a route
returning AGUIAdapter.dispatch_request(...)). For a POST to one of ``paths``
whose response is text/event-stream, the middleware reads the RunAgentInput,
judges the client's edits (the app gets the accepted state and no edits),
reads the app's stream with the core's SSE framer, sequences it per threadId
(sequence_state), answers the client's catch-up after RUN_STARTED (the
client's position from its X-AGUI-State-* headers when it sent any, else
from forwardedProps.stateSync, as Node's proxy reads it; the answer's mode in
the X-AGUI-State-Sync response header, as Node's writeCatchUp sets it), and
writes heartbeats while the agent is quiet. Anything else passes through
untouched. ``store`` (memory_store(), redis_store()) binds each thread's
emitter to its threadId there: a restart, or another instance, Node's too,
continues the thread.

Each run is held (_run_holder.py, the core's run machine): the app runs
detached from its client's connection, every event carries an id
"<key>:<n>", a cut client resumes byte for byte (Last-Event-ID, or the same
runId posted again), GET with X-AGUI-Attach joins the thread's run, POST
with X-AGUI-Abort: <runId> aborts it (its starter's credentials), and a run
nobody came back to within ``grace_ms`` (30 s) is aborted. With
redis_store() each run's log is kept there too, in the Node proxy's format
(stores/run_log.py): any instance, a Node proxy included, resumes a run,
attaches to it or aborts it, and a run whose holder died (no lease renewal
for ``run_lease_ms``, 5 s) ends with RUN_ERROR 'run-lost' wherever its
clients are. ``max_run_events`` (100,000) and ``max_run_buffer_bytes``
(4 MiB) bound each run's log (docs/proxy.md#run-logs-in-the-store).

A resume entry carrying one of our approvals is checked and consumed once
(_asgi_approvals.py, as the Node proxy does): a stale one never reaches the
endpoint (RUN_ERROR 'approval-stale'), a re-sent one does not run it again, and an
approved run is not stopped by its client going away.

``flaky_segments`` (True, or {"window": n, "break_even": x}): the tax study's
policy 5, as the Node proxy's flakySegments. A run's segment is its client's
connection type; the core (_flaky_segments.py) counts each segment's updates
and its clients' catch-ups over windows, and while a segment's tax passes
break-even its runs send the thread's snapshot in place of each delta.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Tuple

from ._access import DEFAULT_GRANT_TTL_MS, AccessGate, Refused, Unjudged, credentials_of
from ._asgi_approvals import ApprovalGate, ApprovedRun, answer_events, carries_resume, run_finished
from ._asgi_clients import refuse, serve_client
from ._asgi_io import BodyTooLarge, ResponseTap, detached_receive, read_body, replay, request_headers, sse_start, with_length
from ._asgi_runs import ABORT, MAX_THREAD_ID, RunRoutes, client_position
from ._run_holder import DEFAULT_GRACE_MS, DEFAULT_MAX_RUN_BYTES, DEFAULT_MAX_RUN_EVENTS, RunBook
from .stores.run_log import run_store_for
from ._flaky_segments import FlakySegments
from ._codes import REPLAY_REASONS, RESYNC_REASONS, SNAPSHOT_REASONS
from .errors import AguiSyncError, sync_error, sync_type_error
from .resync import HEADER_CATCH_UP, HEADER_EPOCH, HEADER_HELD, HEADER_REASON, HEADER_SEQ, read_resync_request
from .sequence import StateSequencer

if TYPE_CHECKING:
    from .stores.protocol import RecordStore, Store

DEFAULT_HEARTBEAT_S = 15.0
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024  # a RunAgentInput, as the Node proxy's maxBodyBytes
DEFAULT_RUN_LEASE_MS = 5000  # with redis_store(): a run whose holder has not renewed its lease this long is lost
# forwardedProps.stateSync.connection: the browser's effective connection type (docs/wire.md section 3).
CONNECTION_TYPES = ("slow-2g", "2g", "3g", "4g")
_KNOWN_REASONS = frozenset((*RESYNC_REASONS, *REPLAY_REASONS, *SNAPSHOT_REASONS))
_STATE_HEADERS = tuple(name.lower() for name in (HEADER_SEQ, HEADER_EPOCH, HEADER_REASON, HEADER_HELD))


class StateSyncMiddleware:
    def __init__(self, app: Any, *, paths: Iterable[str], sequencer: Optional[StateSequencer] = None,
                 store: Optional["Store"] = None, heartbeat_s: Optional[float] = DEFAULT_HEARTBEAT_S,
                 approval_store: Optional["RecordStore"] = None, flaky_segments: Any = None, authorize: Any = None,
                 grant_ttl_ms: int = DEFAULT_GRANT_TTL_MS, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 grace_ms: int = DEFAULT_GRACE_MS, run_lease_ms: int = DEFAULT_RUN_LEASE_MS,
                 max_run_events: int = DEFAULT_MAX_RUN_EVENTS, max_run_buffer_bytes: int = DEFAULT_MAX_RUN_BYTES) -> None:
        paths = [paths] if isinstance(paths, str) else list(paths)
        if not paths or not all(isinstance(p, str) and p.startswith("/") for p in paths):
            raise sync_type_error("invalid-options", "StateSyncMiddleware paths must be a list of URL paths ('/agent')")
        if heartbeat_s is not None and (not isinstance(heartbeat_s, (int, float)) or heartbeat_s <= 0):
            raise sync_type_error("invalid-options", "StateSyncMiddleware heartbeat_s must be a positive number or None")
        self.app = app
        self.paths = frozenset(paths)
        if sequencer is not None and store is not None:
            raise sync_type_error("invalid-options", "StateSyncMiddleware takes a sequencer or a store, not both")
        self.sequencer = sequencer or StateSequencer(store=store)
        self.heartbeat_s = heartbeat_s
        if not isinstance(max_body_bytes, int) or max_body_bytes <= 0:
            raise sync_type_error("invalid-options", "StateSyncMiddleware max_body_bytes must be a positive integer")
        if authorize is not None and not callable(authorize):
            raise sync_type_error("invalid-options", "StateSyncMiddleware authorize must be callable")
        self.max_body_bytes = max_body_bytes
        for name, value in (("grace_ms", grace_ms), ("run_lease_ms", run_lease_ms), ("max_run_events", max_run_events),
                            ("max_run_buffer_bytes", max_run_buffer_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise sync_type_error("invalid-options", f"StateSyncMiddleware {name} must be a positive integer")
        # The runs it holds: each outlives its client's connection (_run_holder.py, the core's run machine).
        self.runs = RunBook(grace_ms, max_run_bytes=max_run_buffer_bytes, max_run_events=max_run_events)
        # With redis_store(), every run's log is kept there too: any instance serves it (stores/run_log.py),
        # with the Node proxy's timings (create-proxy.js): kept grace + 2 leases while live, grace once over.
        self.run_lease_ms = run_lease_ms
        self.run_store = run_store_for(store, owner=str(uuid.uuid4()), lease_ms=run_lease_ms,
                                       keep_ms=grace_ms + 2 * run_lease_ms, ended_ms=grace_ms,
                                       max_events=max_run_events, max_bytes=max_run_buffer_bytes)
        self.routes = RunRoutes(self)
        # Resume entries' approvals, checked and consumed once; grants too. In the thread's store unless
        # told otherwise (as Node's proxy keeps them in its store): every instance of a fleet knows both.
        self.approvals = ApprovalGate(approval_store if approval_store is not None else store)
        # Who may read, change or consume a thread (SECURITY.md): grants live where approvals are claimed.
        self.access = AccessGate(self.approvals.store, authorize, grant_ttl_ms)
        self.store = store
        # Snapshots per update for a connection type whose snapshot tax passes break-even (_flaky_segments.py).
        self.flaky = None if flaky_segments is None or flaky_segments is False else FlakySegments(flaky_segments)
        # True once the server said it shuts down (ASGI lifespan): readiness fails (operate.py), runs go on.
        self.draining = False
        self._counts: Dict[str, Any] = {"runs": 0, "upstream_bytes": 0, "approvals": {},
                                        "resyncs": {}, "connections": {}}

    def stats(self) -> Dict[str, Any]:
        """Counters since creation, for operate.ops_app's /metrics: runsStarted, liveRuns,
        clientBytes, upstreamBytes (read from the agent's SSE responses),
        approvals {verdict: n}, runsByConnection {connection type: n},
        resyncs {client reason: {connection type: n}}, flakySegments {snapshotMode:
        {connection type: 0 | 1}, switches: {connection type: n}}, and the
        sequencer's threads, events received and sent by type, and catch-ups by mode."""
        counts = self._counts
        flaky = self.flaky.stats() if self.flaky is not None else {"snapshotMode": {}, "switches": {}}
        return {"runsStarted": counts["runs"], "liveRuns": self.runs.live, "clientBytes": self.runs.client_bytes,
                "upstreamBytes": counts["upstream_bytes"],
                "approvals": dict(counts["approvals"]), "runsByConnection": dict(counts["connections"]),
                "resyncs": {reason: dict(by) for reason, by in counts["resyncs"].items()}, "flakySegments": flaky,
                **self.sequencer.stats()}

    def _count(self, family: str, key: str) -> None:
        self._counts[family][key] = self._counts[family].get(key, 0) + 1

    async def __call__(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "lifespan":
            await self.app(scope, self._lifespan(receive), send)
            return
        if scope.get("type") == "http" and scope.get("path") in self.paths and _has_header(scope, ABORT):
            await self._abort(scope, receive, send)  # X-AGUI-Abort: <runId>, wherever the run is held
            return
        if scope.get("type") == "http" and scope.get("path") in self.paths and await self.routes.serve_get(scope, receive, send):
            return  # a GET that attaches or resumes a held run (_asgi_runs.py)
        if scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") not in self.paths:
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(receive, self.max_body_bytes)
        except BodyTooLarge:
            await refuse(send, 413, "limit-exceeded", f"the request body is larger than {self.max_body_bytes} bytes")
            return
        try:
            run_input = json.loads(body)
        except RecursionError:  # nested deeper than Python's JSON reader goes: nothing is run
            await refuse(send, 400, "limit-exceeded", "the request body nests too deep")
            return
        except ValueError:
            run_input = None
        if not isinstance(run_input, dict) or not isinstance(run_input.get("threadId"), str):
            await self.app(scope, replay(body, receive), send)  # not a RunAgentInput: the endpoint answers it
            return
        if run_input["threadId"].startswith("\0"):  # keys starting with a NUL are the library's own (as Node's proxy)
            await _refuse(send, sync_error("invalid-request", "RunAgentInput.threadId must not start with a NUL"))
            return
        run_input = _with_header_position(scope, run_input)
        if not _edits_readable(run_input):  # a hostile edit list is a 400, whoever sends it (as Node's proxy)
            await _refuse(send, sync_error("invalid-request", "forwardedProps.stateSync.edits must be a list of {editId, baseSeq, ops}"))
            return
        headers = request_headers(scope)
        if await self.routes.serve_resume(scope, receive, send, run_input, headers):
            return  # the client came back to a run held here: the app is not called again
        access = {"kind": "start", "threadId": run_input["threadId"], "credentials": credentials_of(headers),
                  "resume": run_input.get("resume"), "headers": headers}
        try:
            admission = await self.access.admit(access)
        except Refused:
            await refuse(send, 403, "not-authorized", "the backend has not accepted this requester for this thread")
            return
        except Unjudged as error:
            await refuse(send, 400, error.code, f"the request cannot be judged: {error}")
            return
        except AguiSyncError as error:  # the grants' store is unreachable: nothing is decided, nothing changes
            await _refuse(send, error)
            return
        if admission == "forward":  # the app judges the requester first; the thread is touched only on a 2xx
            run_input = _without_edits(run_input)  # not applied: the client's state goes as it sent it
            body = json.dumps(_without_state_sync(run_input)).encode("utf-8")
            await self._counted(self._forwarded(scope, receive, send, body, run_input, access), run_input)
            return
        verdict, done = await self._approvals(send, receive, run_input)
        if verdict == "forward":
            await self._counted(lambda segment: self._sequenced(scope, receive, send, run_input, done, segment, access=access),
                                run_input)

    async def _counted(self, run: Any, run_input: Dict[str, Any]) -> None:
        connection = self._count_client(run_input)
        self._counts["runs"] += 1
        await run(None if self.flaky is None else (self.flaky, connection))

    def _forwarded(self, scope: Dict[str, Any], receive: Any, send: Any, body: bytes, run_input: Dict[str, Any],
                   access: Dict[str, Any]) -> Any:
        """A requester the gate does not know: the app gets the client's own body first; its
        refusal passes through and nothing else happens, its 2xx grants and the run is sequenced."""
        async def run(segment: Any) -> None:
            tap = ResponseTap(send, self._count_upstream)
            over = asyncio.Event()  # the run is over: only then does the app hear a disconnect
            app_task = asyncio.ensure_future(self.app(scope, detached_receive(body, over), tap))
            app_task.add_done_callback(lambda _: tap.finish())
            await tap.started.wait()
            if tap.passthrough or tap.start is None:
                await self.access.settle(access, tap.status or 500)
                await app_task
                return
            await self.access.settle(access, tap.status)
            await self._sequenced(scope, receive, send, run_input, None, segment, opened=(tap, app_task, over),
                                  credentials=access["credentials"])
        return run

    async def _abort(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        """POST with X-AGUI-Abort: <runId> (its body, if any, is read and not needed)."""
        if scope.get("method") != "POST":
            await refuse(send, 405, "invalid-request", "X-AGUI-Abort needs a POST", [(b"allow", b"POST")])
            return
        try:
            await read_body(receive, self.max_body_bytes)
        except BodyTooLarge:
            await refuse(send, 413, "limit-exceeded", f"the request body is larger than {self.max_body_bytes} bytes")
            return
        headers = request_headers(scope)
        run_id = headers.get(ABORT, "").strip()
        if not run_id or len(run_id) > MAX_THREAD_ID:
            await refuse(send, 400, "invalid-request", "X-AGUI-Abort must name a runId")
            return
        await self.routes.serve_abort(send, headers, run_id)

    def _count_upstream(self, size: int) -> None:
        self._counts["upstream_bytes"] += size

    def _count_client(self, run_input: Dict[str, Any]) -> str:
        """The run's client, labelled by its connection type (forwardedProps.stateSync.connection)
        and, when it came back resyncing, its reason: both bounded, a client cannot mint labels.
        Returns the connection type (the run's segment)."""
        state_sync = (run_input.get("forwardedProps") or {}).get("stateSync")
        said = state_sync.get("connection") if isinstance(state_sync, dict) else None
        connection = said if said in CONNECTION_TYPES else "unknown"
        self._count("connections", connection)
        reason = read_resync_request(run_input)["reason"]
        if reason is not None:
            by = self._counts["resyncs"].setdefault(reason if reason in _KNOWN_REASONS else "other", {})
            by[connection] = by.get(connection, 0) + 1
        return connection

    def _lifespan(self, receive: Any) -> Any:
        """The server's lifespan messages, passed on; a shutdown marks the middleware draining, and
        ends the runs still held here (after the server's graceful shutdown: it waited for their clients)."""
        async def watched() -> Dict[str, Any]:
            message = await receive()
            if message.get("type") == "lifespan.shutdown":
                self.draining = True
                await self.runs.shutdown(self.run_lease_ms / 1000)
            return message
        return watched

    async def _approvals(self, send: Any, receive: Any, run_input: Dict[str, Any]) -> Any:
        """The resume entries' approvals, judged before the endpoint runs (_asgi_approvals.py):
        ('forward', None | the approved run's done event), or ('answered', None)."""
        if not carries_resume(run_input):
            return "forward", None
        thread_id = str(run_input.get("threadId") or "")
        verdict, value = await self.approvals.judge(self.sequencer.emitter_for(thread_id), thread_id, run_input)
        if verdict != "forward" or value is not None:  # a resume that carried one of our approvals
            self._count("approvals", {"forward": "forwarded", "refuse": "refused"}.get(verdict, verdict))
        if verdict == "forward":
            return verdict, value
        if verdict == "replayed" and getattr(value, "run", None) is not None and not value.run.over.is_set():
            # a re-sent resume joins the approved run, still going: its effect happens once, and the client sees it
            await self.routes.resume(value.run, 0, client_position(run_input), send, receive, attach=False)
            return "answered", None
        if verdict == "replayed" and value is not None:
            await value.wait()  # the first run of this approval is over: the state is final
        last = value if verdict == "refuse" else run_finished(run_input)
        await _answer(send, await answer_events(self.sequencer.emitter_for(thread_id), run_input, last))
        return "answered", None

    async def _sequenced(self, scope: Dict[str, Any], receive: Any, send: Any, run_input: Dict[str, Any],
                         done: Optional[asyncio.Event] = None,
                         segment: Optional[Tuple[FlakySegments, str]] = None,
                         opened: Optional[Tuple[ResponseTap, asyncio.Task, asyncio.Event]] = None,
                         access: Optional[Dict[str, Any]] = None,
                         credentials: Optional[list] = None) -> None:
        """The app's run, sequenced on its thread and held (_run_holder.py): the app runs
        detached from this connection, which is only the run's first client. opened: the app
        already answered 2xx to the client's own body (_forwarded). access: an authorized
        requester's run, whose answer from the app renews its grant, or drops it and
        releases the run's claims. credentials: the starter's (who may abort it), when not in access."""
        tap = ResponseTap(send, self._count_upstream) if opened is None else opened[0]
        app_task: Optional[asyncio.Task] = None if opened is None else opened[1]
        over = asyncio.Event() if opened is None else opened[2]
        if access is not None:
            tap.on_start = lambda status: self._settle(access, status, run_input, done)

        def start_agent(prepared: Dict[str, Any]) -> Any:
            nonlocal app_task
            if opened is not None:
                return tap.chunks()
            rewritten = json.dumps(prepared).encode("utf-8")
            app_task = asyncio.ensure_future(self.app(with_length(scope, len(rewritten)), detached_receive(rewritten, over), tap))
            app_task.add_done_callback(lambda _: tap.finish())
            return tap.chunks()

        thread_id = str(run_input.get("threadId") or "")
        modes: list = []  # the catch-up's mode, known before its first byte
        stream = self.sequencer.run(start_agent, run_input, sse=True, on_catch_up=modes.append, segment=segment)
        starter = credentials if credentials is not None else (access or {}).get("credentials", [])
        run = self.routes.hold(thread_id, str(run_input.get("runId") or ""), starter, keep=done is not None)
        run.on_over.append(over.set)
        run.stop_app = lambda: _cancel(app_task)
        if isinstance(done, ApprovedRun):  # a re-sent resume of this approval joins this run
            done.run = run
        if done is not None:
            run.on_over.append(done.set)
        client = run.join({"starter": True})

        def on_first() -> None:
            run.head = _start(tap.start, modes)

        async def on_void(why: Any) -> None:
            kind, error = why
            if kind == "error" and not tap.passthrough:
                await _refuse(send, error)
            elif app_task is not None:
                await asyncio.wait({app_task})  # its own answer passed through: let it finish
        run.pump(stream, on_first)
        await serve_client(run, client, send, receive, head=lambda: run.head or _start(tap.start, modes), on_void=on_void)

    async def _settle(self, access: Dict[str, Any], status: int, run_input: Dict[str, Any],
                      done: Optional[asyncio.Event]) -> None:
        """The app answered an authorized requester's run: a 2xx renews the grant; anything else
        drops it and releases the approvals this run claimed (SECURITY.md)."""
        if not await self.access.settle(access, status) and isinstance(done, ApprovedRun):
            await self.approvals.release(run_input["threadId"], done.claimed)



def _start(start: Optional[Dict[str, Any]], modes: list) -> Dict[str, Any]:
    """The app's response start, sequenced: X-AGUI-State-Sync: <mode> when the client was caught up."""
    message = sse_start(start or {"type": "http.response.start", "status": 200})
    if modes:
        message["headers"] = [*message["headers"], (HEADER_CATCH_UP.lower().encode(), modes[0].encode())]
    return message


def _with_header_position(scope: Dict[str, Any], run_input: Dict[str, Any]) -> Dict[str, Any]:
    """The run's input with the client's position from its X-AGUI-State-*
    headers when it sent any (they win, as in Node's proxy), put where the
    sequencer reads it: forwardedProps.stateSync (its edits kept)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    if not any(name in headers for name in _STATE_HEADERS):
        return run_input
    where = read_resync_request({"headers": headers})
    forwarded = run_input.get("forwardedProps")
    forwarded = dict(forwarded) if isinstance(forwarded, dict) else {}
    state_sync = forwarded.get("stateSync")
    state_sync = dict(state_sync) if isinstance(state_sync, dict) else {}
    state_sync.update({"lastSeq": where["lastSeq"], "epoch": where["epoch"], "reason": where["reason"],
                       "held": where["held"]})
    forwarded["stateSync"] = state_sync
    return {**run_input, "forwardedProps": forwarded}


async def _answer(send: Any, body: bytes) -> None:
    """A whole SSE answer the middleware writes itself (an approval it judged)."""
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _cancel(task: Optional[asyncio.Task]) -> None:
    if task is not None and not task.done():
        task.cancel()


def _edits_readable(run_input: Dict[str, Any]) -> bool:
    """forwardedProps.stateSync.edits is absent or a list (its entries are the emitter's to judge)."""
    props = run_input.get("forwardedProps")
    state_sync = props.get("stateSync") if isinstance(props, dict) else None
    return not isinstance(state_sync, dict) or "edits" not in state_sync or isinstance(state_sync["edits"], list)


def _without_edits(run_input: Dict[str, Any]) -> Dict[str, Any]:
    """The run's input without forwardedProps.stateSync.edits (its position kept)."""
    props = run_input.get("forwardedProps")
    state_sync = props.get("stateSync") if isinstance(props, dict) else None
    if not isinstance(state_sync, dict) or "edits" not in state_sync:
        return run_input
    kept = {k: v for k, v in state_sync.items() if k != "edits"}
    return {**run_input, "forwardedProps": {**props, "stateSync": kept}}


def _without_state_sync(run_input: Dict[str, Any]) -> Dict[str, Any]:
    """The input as the app gets it: forwardedProps.stateSync is the middleware's."""
    props = run_input.get("forwardedProps")
    if not isinstance(props, dict) or "stateSync" not in props:
        return run_input
    return {**run_input, "forwardedProps": {k: v for k, v in props.items() if k != "stateSync"}}


def _has_header(scope: Dict[str, Any], name: str) -> bool:
    wanted = name.encode("latin-1")
    return any(bytes(key).lower() == wanted for key, _ in scope.get("headers", []))


async def _refuse(send: Any, error: AguiSyncError) -> None:
    """A request the sequencer refused before anything was sent: 400 with the code
    (hostile edits), 503 when the thread's store is unreachable."""
    body = json.dumps({"ok": False, "code": error.code, "message": str(error)}).encode("utf-8")
    await send({"type": "http.response.start", "status": 503 if error.code == "store-unavailable" else 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
