"""StateSyncMiddleware's approvals (issue 24, section 2; the Node proxy does
the same in js/src/proxy/approvals.js). A RunAgentInput.resume entry carrying
one of our approvals (payload.approval, docs/wire.md section 7) is judged
before the endpoint runs, against the thread's sequenced state:

- verified: consumed once per (thread, interrupt) in the store, and the run
  goes on; a client that goes away does not stop it (the approved effect
  completes, the state ends where the agent put it);
- not verified (or no state of the thread): the endpoint never sees it; the
  client gets RUN_STARTED, its catch-up and RUN_ERROR code 'changed';
- already consumed by this approval (a resume re-sent after a cut): the
  endpoint does not run again; once the first run is over, the client gets
  RUN_STARTED, its catch-up and RUN_FINISHED;
- another approval for a consumed interrupt: RUN_ERROR 'already-consumed'.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, AsyncIterator, Dict, List, Tuple

from .approvals import consume_approval
from .canonical import verify_approval
from .resync import catch_up
from .stores import memory_store

Entry = Tuple[str, Dict[str, Any]]
_PUMPS: "set[asyncio.Task]" = set()


def approval_entries(run_input: Dict[str, Any]) -> List[Entry]:
    """The resume entries with one of our approvals: [(interrupt_id, approval)]."""
    found = []
    for entry in run_input.get("resume") or []:
        payload = entry.get("payload") if isinstance(entry, dict) else None
        approval = payload.get("approval") if isinstance(payload, dict) else None
        interrupt_id = entry.get("interruptId") if isinstance(entry, dict) else None
        if entry.get("status") == "resolved" and payload.get("approved") is True and isinstance(approval, dict) \
                and isinstance(interrupt_id, str) and interrupt_id:
            found.append((interrupt_id, approval))
    return found


class ApprovalGate:
    def __init__(self, store: Any = None) -> None:
        self.store = store if store is not None else memory_store()
        self._runs: Dict[Tuple[str, str], asyncio.Event] = {}  # the first run of each consumed interrupt

    async def judge(self, emitter: Any, thread_id: str, entries: List[Entry]) -> Tuple[str, Any]:
        """('forward', done_event) | ('refuse', code) | ('replayed', first_run_done)."""
        state = None if emitter is None else emitter.state
        for interrupt_id, approval in entries:  # a refusal consumes nothing: verify all first
            fresh = await self.store.peek(thread_id, interrupt_id) is None
            if fresh and (state is None or not verify_approval(approval, state)):
                return "refuse", "changed"
        replayed = []
        for interrupt_id, approval in entries:
            decision = await consume_approval(approval, state if state is not None else {}, store=self.store,
                                              thread_id=thread_id, interrupt_id=interrupt_id)
            if not decision["ok"]:
                return "refuse", "already-consumed" if decision.get("reason") == "already-consumed" else "changed"
            replayed.append(decision["replayed"])
        keys = [(thread_id, interrupt_id) for interrupt_id, _ in entries]
        if not any(replayed):
            done = asyncio.Event()
            for key in keys:
                self._runs[key] = done
            return "forward", done
        first = self._runs.get(keys[0])
        return "replayed", first


async def answer_events(emitter: Any, run_input: Dict[str, Any], last: Dict[str, Any]) -> bytes:
    """RUN_STARTED, the client's catch-up from the thread's emitter, then `last`: SSE bytes."""
    thread_id, run_id = run_input.get("threadId"), run_input.get("runId")
    parts = [b"data: " + json.dumps({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}).encode() + b"\n\n"]
    if emitter is not None:
        answer = catch_up(emitter, run_input)
        if inspect.isawaitable(answer):  # a store-bound emitter catches up with its store first
            answer = await answer
        parts += [emitter.encode(event) for event in answer["events"]]
    parts.append(b"data: " + json.dumps(last).encode() + b"\n\n")
    return b"".join(parts)


def detached(stream: AsyncIterator[bytes], done: asyncio.Event) -> AsyncIterator[bytes]:
    """``stream`` read to its end by a task of its own, whoever reads what it
    yields: an approved run is not stopped by its client going away. ``done``
    is set once it has ended (a re-sent resume waits for that)."""
    queue: "asyncio.Queue[Any]" = asyncio.Queue()
    end = object()

    async def pump() -> None:
        try:
            async for chunk in stream:
                queue.put_nowait(chunk)
        except BaseException as error:  # raised to the reader, if one is still there
            queue.put_nowait(error)
        finally:
            queue.put_nowait(end)
            done.set()

    task = asyncio.ensure_future(pump())
    _PUMPS.add(task)  # referenced until it ends: nobody else may hold it
    task.add_done_callback(_PUMPS.discard)

    async def chunks() -> AsyncIterator[bytes]:
        while True:
            item = await queue.get()
            if item is end:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    return chunks()


def run_error(code: str) -> Dict[str, Any]:
    message = ("the interrupt was already resolved by another approval" if code == "already-consumed"
               else "the approval is not of the thread's current value")
    return {"type": "RUN_ERROR", "code": code, "message": f"agui-state-sync middleware: {message}; the agent was not run"}


def run_finished(run_input: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": run_input.get("threadId"), "runId": run_input.get("runId")}


