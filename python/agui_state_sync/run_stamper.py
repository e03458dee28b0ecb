"""One run's events through its thread's StateEmitter (the Python twin of the
JS sequencers' run loop). How each of the agent's state events goes on top
of the thread's state (in step or not, its own ops, a rebase diff, its whole
state, suspending deltas that nobody can vouch for) is decided once in the
core by the UpstreamCursor (src/emit/upstream_cursor.h, bound as
_core.CursorFacade); this class only carries out its plan against the
emitter and settles which try landed. What stays here: the move to the run's
input state and the catch-up after RUN_STARTED (docs/wire.md section 3).
The emitter is a StateEmitter or a store-bound DurableStateEmitter, whose
writes and catch-up are coroutines (awaited here). A plain StateEmitter is
written by the core itself in the same call that plans (CursorFacade.plan_write:
one parse of a snapshot instead of two)."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _core
from ._json import MAX_DEPTH, json_bytes, parse
from .activities import is_activity_event
from .emitter import StateEmitter
from .errors import AguiSyncError, failure_error
from .resync import catch_up

Event = Dict[str, Any]
Report = Callable[[Event, Optional[BaseException]], None]
_STAMP_FIELDS = ("type", "snapshot", "delta", "metadata", "seq", "base_seq")
_MAX_SAFE = 2 ** 53 - 1  # AG-UI 1.0's timestamp: an integer a JavaScript client holds exactly
# A patch the emitter refuses as not applicable: the plan's next try.
_NOT_APPLICABLE = frozenset(("patch-failed", "precondition-failed", "invalid-patch"))
_PAYLOAD = {"STATE_SNAPSHOT": "snapshot", "STATE_DELTA": "delta"}


class RunStamper:
    def __init__(self, emitter: StateEmitter, run_input: Dict[str, Any], report: Report) -> None:
        self.emitter = emitter
        self.input = run_input
        self.report = report
        self.started = False  # the catch-up went out
        self.catch_up_mode: Optional[str] = None  # 'current' | 'replay' | 'snapshot' once answered
        self.current_heartbeat: Optional[bytes] = None  # the answer to a client that is current
        # A store-bound thread may be written by another instance between two of this run's writes:
        # every state event goes as the agent's own change, rebased (issue 40).
        self.cursor = _core.CursorFacade('{"alwaysRebase":true}' if not isinstance(emitter, StateEmitter) else "")
        self._stream: Any = None  # the run's stream of the thread's activities, once it needs one

    async def handle(self, event: Event) -> Tuple[List[Event], List[Event]]:
        """The events to send for one event of the agent, in two parts: what leads
        (RUN_STARTED, then the catch-up; the catch-up alone when the agent's first
        event is another) and what the agent's event made (its updates, which a
        flaky segment's sender may answer with a snapshot)."""
        if self.started:
            return [], await self._events(event)
        if event.get("type") == "RUN_STARTED":
            return [event, *await self._prelude()], []
        return await self._prelude(), await self._events(event)

    async def _prelude(self) -> List[Event]:
        """The emitter moves to the run's input state (a thread of its own; a
        store-bound one never writes a client's state: the core's
        UpstreamCursor::writesInput), the cursor starts where the core says,
        then the client that asked (forwardedProps.stateSync) gets its catch-up."""
        self.started = True
        state = self.input.get("state")
        refused: Optional[AguiSyncError] = None
        if state is not None and self.cursor.writes_input():
            try:
                await settled(self.emitter.update(state))
            except AguiSyncError as error:
                refused = error
        try:
            given = b"" if state is None else json_bytes(state, "the run's state")
            begun = parse(self.cursor.start_run(given, json_bytes(self.emitter.state, "the thread's state"), self.emitter.seq))
        except AguiSyncError as error:
            begun = {"ok": False, "code": error.code, "message": str(error)}
        if not isinstance(self.emitter, StateEmitter) and begun.get("start") == "thread":
            self.cursor.on_line(self.emitter.epoch, self.emitter.seq)  # a store-bound emitter's line: in-step tries check it
        if refused is not None or not begun.get("ok"):
            self.cursor.suspend()  # the agent's deltas are relative to a state the emitter could not take
            self.report({"type": "STATE_SNAPSHOT", "snapshot": state}, refused or failure_error(begun, "invalid-json", ""))
        asked = (self.input.get("forwardedProps") or {}).get("stateSync")
        if not isinstance(asked, dict):
            return []
        # A store-bound thread's activities may be stored by another instance: its catch-up finds them.
        in_use = not isinstance(self.emitter, StateEmitter) or self.emitter._activities_in_use() is not None
        answer = await settled(catch_up(self.emitter, self.input, self._activity_stream() if in_use else None))
        self.catch_up_mode = answer["mode"]
        if answer["mode"] == "current":  # nothing to send still answers, at the client's seq
            self.current_heartbeat = self.emitter.heartbeat()
        return answer["events"]

    def _activity_stream(self) -> Any:
        """Which activities this run's client holds a position for (its first event of another is the snapshot)."""
        if self._stream is None:
            self._stream = self.emitter.activities._stream()
        return self._stream

    async def _activity(self, event: Event) -> List[Event]:
        """An activity event, stamped on the thread's activities as the core decides
        (a delta that does not apply drops that activity's deltas until its next snapshot);
        a store-bound thread's once the store holds it."""
        written = await settled(self.emitter.activities.write(event, stream=self._activity_stream()))
        if written["dropped"] is not None:
            self.report(event, written["error"])
        return written["events"]

    async def _events(self, event: Event) -> List[Event]:
        if is_activity_event(event):
            return await self._activity(event)
        name = _PAYLOAD.get(event.get("type"))  # type: ignore[arg-type]
        if name is None:
            return [event]
        if name == "snapshot" and isinstance(self.emitter, StateEmitter):
            # In step, the core diffs the thread's state against the dict itself:
            # equal subtrees cost a C comparison, not JSON text written and parsed.
            written = self.cursor.write_snapshot(event.get(name), self.emitter._facade, MAX_DEPTH)
            if written is not None:
                return self._written(event, parse(written))
        try:
            payload = json_bytes(event.get(name), f"the agent's {event['type']}")
        except AguiSyncError as error:  # a payload JSON cannot hold: as one the emitter refuses
            payload, refusal = b"null", error
        else:
            refusal = None
        envelope = b'{"type":"%s","%s":%s}' % (event["type"].encode(), name.encode(), payload)
        if refusal is None and isinstance(self.emitter, StateEmitter):
            return self._plan_write(event, envelope)
        plan = parse(self.cursor.plan(envelope, self.emitter.seq))
        if not plan.get("ok") or refusal is not None:
            self.cursor.settle(-1, self.emitter.seq)
            self.report(event, refusal or failure_error(plan, "invalid-json", f"the agent's {event['type']}: "
                                                                              f"{plan.get('message')}"))
            return []
        if plan["kind"] == "pass":
            return [event]
        if plan["kind"] == "drop":
            self.report(event, None)
            return []
        return await self._write(event, plan["tries"], payload)

    def _plan_write(self, event: Event, envelope: bytes) -> List[Event]:
        """A plain emitter: the core plans, tries and settles in one call on one
        parse of the event (the route below, for a store-bound emitter whose
        writes are awaited, parses a snapshot twice)."""
        return self._written(event, parse(self.cursor.plan_write(envelope, self.emitter._facade)))

    def _written(self, event: Event, result: Dict[str, Any]) -> List[Event]:
        """What the core's one-call write answered (plan_write, write_snapshot)."""
        if not result.get("ok"):
            self.report(event, failure_error(result, "invalid-json", f"the agent's {event['type']}: "
                                                                     f"{result.get('message')}"))
            return []
        if result["kind"] == "pass":
            return [event]
        if result["kind"] == "drop":
            self.report(event, None)
            return []
        try:  # the emitter's own bookkeeping and errors, as for its update() / patch()
            stamped = self.emitter._events(result if result["landed"] >= 0 else result["failure"], "the write",
                                           "patch-failed")
        except AguiSyncError as error:
            self.report(event, error)
            return []
        return _carry(event, stamped)

    async def _write(self, event: Event, tries: List[Dict[str, Any]], payload: bytes) -> List[Event]:
        """The plan's tries in order, the first that lands stands; settled either way."""
        last: Optional[AguiSyncError] = None
        for index, attempt in enumerate(tries):
            update = "update" in attempt
            try:
                # A store-bound emitter: the core carries each attempt out on its local emitter,
                # checking an in-step try's line there (a retry after a lost race finds it moved).
                stamped = await self.emitter._commit_through(
                    lambda e, i=index: e._events(parse(self.cursor.try_planned(i, e._facade)), "the write", "patch-failed"))
            except AguiSyncError as error:
                last = error
                if (not update or attempt.get("inStep")) and error.code in _NOT_APPLICABLE:
                    continue
                break
            self.cursor.settle_planned(index, self.emitter.seq)
            return _carry(event, stamped)
        self.cursor.settle_planned(-1, self.emitter.seq)
        self.report(event, last)
        return []


async def settled(value: Any) -> Any:
    """A write's result: awaited when the emitter is store-bound."""
    return await value if inspect.isawaitable(value) else value


def _safe_integer(value: Any) -> bool:
    # 7.0 is written "7.0", which a JavaScript client reads as the integer 7.
    number = (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    return number and abs(value) <= _MAX_SAFE


def _carry(event: Event, stamped: Sequence[Mapping[str, Any]]) -> List[Event]:
    """The emitter's events, carrying the agent's other fields (its payload and
    top-level seq fields give way to the emitter's), but never one AG-UI 1.0
    ends a run on: a null where a field is optional, a timestamp that is not an
    integer."""
    rest = {k: v for k, v in event.items() if k not in _STAMP_FIELDS and v is not None
            and (k != "timestamp" or _safe_integer(v))}
    own = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
    return [{**rest, **e, "metadata": {**own, **e["metadata"]}} for e in stamped]
