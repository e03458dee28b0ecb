"""StateSyncMiddleware's approvals (issue 24, section 2; the Node proxy does
the same in js/src/proxy/approvals.js). A RunAgentInput.resume entry carrying
one of our approvals (payload.approval, docs/wire.md section 7) is judged
before the endpoint runs, against the thread's sequenced state (one with a
messageId against the thread's content of that activity, docs/wire.md section
11, which the core asks for by name; none held: 'approval-stale'). The judgement
is the core's (_core.judge_approvals, src/facade/approval_gate.h, the one the
proxy asks too); this file reads and writes the store it asks for:

- forward: verified, consumed once per (thread, interrupt) in the store, and
  the run goes on; a client that goes away does not stop it (the approved
  effect completes, the state ends where the agent put it);
- refuse: the endpoint never sees it; the client gets RUN_STARTED, its
  catch-up and RUN_ERROR with the core's code: 'approval-stale' (not of the
  thread's current value, or no state of the thread), 'already-consumed'
  (another approval resolved the interrupt), 'invalid-request' (malformed);
- replay: this approval was forwarded before (a resume re-sent after a cut):
  the endpoint does not run again; once the first run is over, the client
  gets RUN_STARTED, its catch-up and RUN_FINISHED.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from typing import Any, Dict, Tuple

from . import _core
from ._json import json_bytes, parse
from .resync import catch_up
from .stores import memory_store

_MAX_STEPS = 6  # peek, claim, the answer; one more round when a claim is lost to a racing request


def carries_resume(run_input: Dict[str, Any]) -> bool:
    """Whether the request has resume entries for the core to look at."""
    resume = run_input.get("resume")
    return isinstance(resume, list) and len(resume) > 0


class ApprovedRun(asyncio.Event):
    """Set once the approved run is over; ``claimed`` (interrupt -> record) is released
    if the app refuses the run (SECURITY.md)."""

    def __init__(self, claimed: Dict[str, str]) -> None:
        super().__init__()
        self.claimed = claimed
        self.run: Any = None  # the held run (_run_holder.py) once it started: a re-sent resume joins it


class ApprovalGate:
    def __init__(self, store: Any = None) -> None:
        self.store = store if store is not None else memory_store()
        self._runs: Dict[Tuple[str, str], asyncio.Event] = {}  # the first run of each consumed interrupt

    async def release(self, thread_id: str, claimed: Dict[str, str]) -> None:
        """The app refused a run this gate forwarded: its approvals are not consumed."""
        await _release(self.store, thread_id, [{"interruptId": i, "record": r} for i, r in claimed.items()])
        for interrupt_id in claimed:
            self._runs.pop((thread_id, interrupt_id), None)

    async def judge(self, emitter: Any, thread_id: str, run_input: Dict[str, Any]) -> Tuple[str, Any]:
        """('pass' | 'forward', None | done_event) | ('refuse', RUN_ERROR event) | ('replayed', first_run_done)."""
        known: Dict[str, Any] = {"threadId": thread_id, "resume": run_input.get("resume"), "records": {}, "claimed": {},
                                 "activities": {}}
        if emitter is not None:
            known["state"] = emitter.state
        for _ in range(_MAX_STEPS):
            verdict = parse(_core.judge_approvals(json_bytes({**known, "nowMs": int(time.time() * 1000)}, "the resume")))
            kind = verdict.get("verdict")
            await _release(self.store, thread_id, verdict.get("releases", []))
            if not verdict.get("ok") or kind == "refuse":
                return "refuse", run_error(verdict["code"], verdict["message"])
            if kind == "pass":
                return "forward", None
            if kind == "forward":
                done = ApprovedRun(dict(known["claimed"]))
                for interrupt_id in verdict["interruptIds"]:
                    self._runs[(thread_id, interrupt_id)] = done
                return "forward", done
            if kind == "replay":
                return "replayed", self._runs.get((thread_id, verdict["interruptId"]))
            if kind == "peek":
                for interrupt_id in verdict["interruptIds"]:
                    known["records"][interrupt_id] = await self.store.peek(thread_id, interrupt_id)
                for message_id in verdict.get("activities", []):  # an approval of that activity's content
                    known["activities"][message_id] = _activity_content(emitter, message_id)
            else:
                await _claim(self.store, thread_id, verdict["claims"], known)
        raise RuntimeError(f"the approval gate did not settle in {_MAX_STEPS} steps")  # a bug in the core


def _activity_content(emitter: Any, message_id: str) -> Any:
    """The thread's content of an activity, None when it holds none (never creating its activities)."""
    activities = None if emitter is None else emitter._activities_in_use()
    return None if activities is None else activities.content(message_id)


async def _claim(store: Any, thread_id: str, claims: Any, known: Dict[str, Any]) -> None:
    """The core's claims, in order, up to the first one another request won."""
    for claim in claims:
        won = await store.claim(thread_id, claim["interruptId"], claim["record"])
        if not won.get("ok"):
            known["records"][claim["interruptId"]] = won["existing"]
            return
        known["claimed"][claim["interruptId"]] = claim["record"]


async def _release(store: Any, thread_id: str, releases: Any) -> None:
    """This request's claims of a run that is not forwarded: dropped, when the store can."""
    if callable(getattr(store, "release", None)):
        for claim in releases:
            await store.release(thread_id, claim["interruptId"], claim["record"])


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


def run_error(code: str, message: str) -> Dict[str, Any]:
    return {"type": "RUN_ERROR", "code": code, "message": f"agui-state-sync middleware: {message}"}


def run_finished(run_input: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": run_input.get("threadId"), "runId": run_input.get("runId")}


