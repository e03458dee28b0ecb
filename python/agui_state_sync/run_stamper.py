"""One run's events through its thread's StateEmitter (the Python twin of
RunStamper in js/src/ag-ui/sequence-state.js). The emitter decides every
seq, diff and patch; what is decided here, per run, is the orchestration the
JS middleware also does and which belongs in a C++ facade shared by both
(see the package's closing note): the move to the run's input state, the
catch-up after RUN_STARTED, suspending deltas after one that did not apply
until the agent's next snapshot, and rebasing a snapshot when another writer
moved the thread meanwhile (the diff and patches for that run in C++ too, on
a scratch emitter)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from . import _core
from ._json import json_bytes, json_text, parse
from .emitter import StateEmitter
from .errors import AguiSyncError
from .resync import catch_up

Event = Dict[str, Any]
Report = Callable[[Event, Optional[BaseException]], None]
MAX_TAIL = 4096  # deltas kept to rebase the agent's next snapshot
_STAMP_FIELDS = ("type", "snapshot", "delta", "metadata", "seq", "base_seq")


class RunStamper:
    def __init__(self, emitter: StateEmitter, run_input: Dict[str, Any], report: Report) -> None:
        self.emitter = emitter
        self.input = run_input
        self.report = report
        self.started = False  # the catch-up went out
        self._suspended = False  # an agent delta did not apply: deltas wait for a snapshot
        self._ours: Optional[int] = None  # the emitter's seq after this run's last write
        self._view: Any = None  # the agent's state at its last snapshot (or the run's start)
        self._view_known = False
        self._tail: List[Any] = []  # the agent's deltas since _view

    def handle(self, event: Event) -> List[Event]:
        """The events to send for one event of the agent; the catch-up follows RUN_STARTED."""
        if self.started:
            return self._events(event)
        if event.get("type") == "RUN_STARTED":
            return [event, *self._prelude()]
        return [*self._prelude(), *self._events(event)]

    def _events(self, event: Event) -> List[Event]:
        kind = event.get("type")
        if kind == "STATE_SNAPSHOT":
            snapshot = event.get("snapshot")
            rebase = self._rebase_ops(snapshot)
            self._view, self._view_known, self._tail = snapshot, True, []
            if rebase is None:
                return self._stamp(event, lambda e: e.update(snapshot))
            return self._stamp(event, lambda e: _patch_if_applies(e, rebase) or e.update(snapshot))
        if kind != "STATE_DELTA":
            return [event]
        if len(self._tail) < MAX_TAIL:
            self._tail.append(event.get("delta"))
        else:
            self._view_known = False  # too long a run of deltas to keep: its next snapshot replaces
        if not self._suspended:
            return self._stamp(event, lambda e: e.patch(event.get("delta")))
        self.report(event, None)
        return []

    def _rebase_ops(self, snapshot: Any) -> Optional[List[Any]]:
        """What the agent's snapshot changed since its previous state, when another
        writer moved the thread meanwhile; None when nobody did or it is unknown."""
        if self._ours is None or not self._view_known or self._suspended or self.emitter.seq == self._ours:
            return None
        try:
            scratch = _core.EmitterFacade(json_text({"epoch": "rebase", "snapshotRatio": 1e12,
                                                     "initialState": self._view}, "rebase"))
            for delta in self._tail:
                if not parse(scratch.patch(json_bytes(delta, "rebase"))).get("ok"):
                    return None
            result = parse(scratch.update(json_bytes(snapshot, "rebase")))
        except AguiSyncError:
            return None
        if not result.get("ok"):
            return None
        events = result["events"]
        if not events:
            return []
        return events[0]["delta"] if events[0].get("type") == "STATE_DELTA" else None

    def _prelude(self) -> List[Event]:
        """The emitter moves to the run's input state, then the client that asked
        (forwardedProps.stateSync) gets its catch-up."""
        self.started = True
        state = self.input.get("state")
        self._view, self._view_known = (state, True) if state is not None else (self.emitter.state, True)
        if state is not None:
            try:
                self.emitter.update(state)
            except AguiSyncError as error:
                self._suspended = True  # the agent's deltas are relative to a state the emitter refused
                self.report({"type": "STATE_SNAPSHOT", "snapshot": state}, error)
        asked = (self.input.get("forwardedProps") or {}).get("stateSync")
        events = catch_up(self.emitter, self.input)["events"] if isinstance(asked, dict) else []
        self._ours = self.emitter.seq
        return events

    def _stamp(self, event: Event, apply: Callable[[StateEmitter], List[Event]]) -> List[Event]:
        try:
            stamped = apply(self.emitter)
        except AguiSyncError as error:
            self._suspended = True
            self.report(event, error)
            return []
        self._ours = self.emitter.seq
        if event.get("type") == "STATE_SNAPSHOT":
            self._suspended = False
        # The agent's payload and top-level seq fields give way to the emitter's; its other fields ride along.
        rest = {k: v for k, v in event.items() if k not in _STAMP_FIELDS}
        own = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
        return [{**rest, **e, "metadata": {**own, **e["metadata"]}} for e in stamped]


def _patch_if_applies(emitter: StateEmitter, ops: List[Any]) -> Optional[List[Event]]:
    """The events of ``ops``, or None when they do not apply to the emitter's state."""
    try:
        return emitter.patch(ops)
    except AguiSyncError:
        return None
