"""SyncEngine: the receiver (the JS package's StateSync) for Python clients
and tests. Raw SSE bytes go in; outcomes come out as the facade writes them
(src/facade/sync_facade.h: dicts with the wire's camelCase keys). Every
decision (framing, sequencing, patching, edits, the guard) is the C++
SyncFacade's; this class only moves bytes and parses answers.

Unlike the JS StateSync it keeps no mirror of the state: ``state`` is read
from the engine once per change, and an applied outcome carries no ``state``
(applying deltas in Python would be a second copy of the patch decision).

The approval guard's methods are on the engine itself (JS: ``sync.guard``):
``view``, ``approve`` (with ``interrupt_id=``, as JS's ``{ interruptId }``)
and ``resume_entry``. The JS guard's ``interrupts()`` is not here: which
interrupts are open is decided by the JS wrapper (js/src/client/interrupts.js),
not by the core, and a second copy of that decision in Python is what this
package does not write (python/README.md, "Where Python differs").
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Union, cast

from . import _core
from ._json import json_bytes, parse
from ._options import check_init, options_json, random_client_id
from .errors import failure_code, sync_error, sync_type_error
from .types import (
    ActivityMirror,
    ActivityPosition,
    Approval,
    ApproveResult,
    LocalEditResult,
    EditRefusal,
    Outcome,
    PendingEdit,
    ResumeEntry,
    ResyncRequest,
    RunInput,
    SyncMetrics,
    SyncStatus,
    ViewResult,
    ViewToken,
)

Chunk = Union[bytes, bytearray, memoryview, str]
# Outcomes after which the state may differ (an 'event' or 'ignored' never changes it).
_STILL = frozenset(("event", "ignored"))


def _chunk_bytes(chunk: Chunk) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, (bytearray, memoryview)):
        return bytes(chunk)
    if isinstance(chunk, str):
        try:
            return chunk.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: U+FFFD, as the JS TextEncoder writes it
            return chunk.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
    raise sync_type_error("invalid-argument", "feed() takes bytes or a str")


class SyncEngine:
    """One receiver per stream. Options as the JS createStateSync() takes them,
    in snake_case: initial_state, reorder_window, reorder_bytes, max_gap_events,
    max_event_bytes, max_depth, max_state_bytes, stale_after_ms,
    trust_unsequenced, ownership, on_conflict, client_id, activities,
    max_activities, max_activity_bytes; ``now`` is the guard's clock in
    milliseconds (default: time.monotonic)."""

    def __init__(self, *, initial_state: Any = None, reorder_window: Optional[int] = None,
                 reorder_bytes: Optional[int] = None, max_gap_events: Optional[int] = None,
                 max_event_bytes: Optional[int] = None, max_depth: Optional[int] = None,
                 max_state_bytes: Optional[int] = None, stale_after_ms: Optional[int] = None,
                 trust_unsequenced: Optional[bool] = None, ownership: Optional[Dict[str, str]] = None,
                 on_conflict: Optional[str] = None, client_id: Optional[str] = None,
                 now: Optional[Callable[[], float]] = None, activities: Optional[bool] = None,
                 max_activities: Optional[int] = None, max_activity_bytes: Optional[int] = None) -> None:
        if now is not None and not callable(now):
            raise sync_type_error("invalid-options", "option now must be a function returning milliseconds")
        options = dict(initial_state=initial_state, reorder_window=reorder_window, reorder_bytes=reorder_bytes,
                       max_gap_events=max_gap_events, max_event_bytes=max_event_bytes, max_depth=max_depth,
                       max_state_bytes=max_state_bytes, stale_after_ms=stale_after_ms,
                       trust_unsequenced=trust_unsequenced, ownership=ownership, on_conflict=on_conflict,
                       client_id=random_client_id() if client_id is None else client_id,
                       activities=activities, max_activities=max_activities, max_activity_bytes=max_activity_bytes)
        self._facade = _core.SyncFacade(options_json(options, "SyncEngine()"))
        check_init(parse(self._facade.init_result()), "SyncEngine()")
        self._now = now or (lambda: time.monotonic() * 1000.0)
        self._result: Dict[str, Any] = {}
        self._state: Any = None
        self._confirmed: Any = None
        self._fresh = False
        self._activity_list: List[Dict[str, Any]] = []  # the last Result's "activities"
        self._activities: Optional[Dict[str, ActivityMirror]] = None  # built on demand
        self._keeps_activities = activities is True
        self._absorb(self._facade.status_json())

    # --- the stream -------------------------------------------------------------
    def feed(self, chunk: Chunk) -> List[Outcome]:
        """Feeds one chunk of the SSE byte stream (any chunking). Returns one
        outcome per complete SSE event the chunk finished."""
        data = _chunk_bytes(chunk)
        if data:
            self._facade.note_activity(float(self._now()))
        return self._absorb(self._facade.feed(data))

    def end(self) -> List[Outcome]:
        """The stream ended: a pending gap becomes a resync."""
        return self._absorb(self._facade.end())

    def reset(self) -> None:
        """A new connection starts; state, last_seq and last_event_id are kept."""
        self._facade.reset()
        self._absorb(self._facade.status_json())

    # --- what the engine holds ----------------------------------------------------
    @property
    def state(self) -> Any:
        """The visible state: the agent's, with this client's pending edits on top."""
        self._load()
        return self._state

    @property
    def activities(self) -> Dict[str, ActivityMirror]:
        """With ``activities=True``: the AG-UI activities held (docs/wire.md
        section 11), by messageId: {messageId, activityType, content, status,
        lastSeq, held, resync}; ``content`` is the agent's when ``status`` is
        'synced'. Read from the engine when one changed."""
        if self._activities is None:
            self._activities = {a["messageId"]: cast(ActivityMirror, {
                **a, "content": parse(self._facade.activity_json(a["messageId"]))}) for a in self._activity_list}
        return self._activities

    @property
    def confirmed_state(self) -> Any:
        """The agent's state as of last_seq, without pending edits."""
        self._load()
        return self._confirmed

    @property
    def status(self) -> SyncStatus:
        """'synced' | 'unverified' | 'resyncing'"""
        return cast(SyncStatus, self._result["status"])

    @property
    def last_seq(self) -> Optional[int]:
        return cast(Optional[int], self._result.get("lastSeq"))

    @property
    def last_event_id(self) -> Optional[str]:
        return cast(Optional[str], self._result.get("lastEventId"))

    @property
    def epoch(self) -> Optional[str]:
        return cast(Optional[str], self._result.get("epoch"))

    @property
    def client_id(self) -> str:
        return self._facade.client_id()

    def resync_request(self) -> Optional[ResyncRequest]:
        """None, or what to tell the server: {reason, lastSeq, lastEventId, held}."""
        resync = self._result.get("resync")
        return None if resync is None else cast(ResyncRequest, dict(resync, held=list(resync.get("held") or [])))

    def metrics(self) -> SyncMetrics:
        return cast(SyncMetrics, parse(self._facade.metrics_json()))

    # --- local edits -------------------------------------------------------------
    def edit(self, ops: Any) -> LocalEditResult:
        """RFC 6902 ``ops`` applied to the visible state at once, pending until
        the agent acknowledges them: {ok: True, editId} or {ok: False, reason,
        code, message, opIndex?}. Never raises for ``ops``."""
        if not isinstance(ops, (list, tuple)):
            return _edit_refusal("invalid-patch", "an edit is a list of RFC 6902 operations")
        try:
            text = json_bytes(ops, "edit()", "invalid-patch")
        except Exception as error:  # the refusal is the answer, as in JS
            return _edit_refusal(getattr(error, "code", "invalid-patch"), str(error))
        result = parse(self._facade.edit(text))
        if not result.get("ok"):
            return _edit_refusal(failure_code(result, "invalid-patch"), result.get("message", ""), result.get("opIndex"))
        self._absorb(self._facade.status_json())
        self._fresh = False
        return {"ok": True, "editId": result["editId"]}

    def pending_edits(self) -> List[PendingEdit]:
        """[{editId, baseSeq, ops}], oldest first."""
        return [{"editId": e["editId"], "baseSeq": e["baseSeq"], "ops": e["ops"]}
                for e in parse(self._facade.pending_edits_json())]

    def activity_positions(self) -> Optional[List[ActivityPosition]]:
        """With ``activities=True``: where each activity is, as a reconnecting
        client tells the server ([{messageId, lastSeq, epoch, reason}],
        forwardedProps.stateSync.activities); None without."""
        if not self._keeps_activities:
            return None
        return [{"messageId": a["messageId"], "lastSeq": a["lastSeq"], "epoch": a.get("epoch"),
                 "reason": (a.get("resync") or {}).get("reason")} for a in self._activity_list]

    def run_input(self) -> RunInput:
        """What the next RunAgentInput needs: {state, forwardedProps: {stateSync: {edits}}}."""
        return {"state": self.state, "forwardedProps": {"stateSync": {"edits": self.pending_edits()}}}

    # --- the approval guard ---------------------------------------------------------
    def view(self, path: str, *, message_id: Optional[str] = None) -> ViewResult:
        """{ok: True, token: {path, seq, digest}} or {ok: False, reason}: what a
        person is shown, for approve(). With ``message_id``: the value at path
        in that activity's content (a form rendered from it), the token with
        the activity's own seq and its messageId ('missing': no such activity)."""
        if not isinstance(path, str):
            raise sync_type_error("invalid-argument", "view() path must be a JSON Pointer string")
        if message_id is None:
            return cast(ViewResult, _guard_answer(parse(self._facade.guard_view(path))))
        if not isinstance(message_id, str):
            raise sync_type_error("invalid-argument", "view() message_id must be a str")
        return cast(ViewResult, _guard_answer(parse(self._facade.guard_view_activity(message_id, path))))

    def approve(self, token: Union[ViewToken, Mapping[str, Any]], *,
                interrupt_id: Optional[str] = None) -> ApproveResult:
        """{ok: True, approval: {path, seq, viewedSeq, digest, epoch}} or {ok: False, reason};
        a token with a messageId is judged by that activity, and its approval carries it.
        With ``interrupt_id`` (JS: ``guard.approve(token, { interruptId })``) the approval
        carries it as ``interruptId``, the AG-UI interrupt it answers: resume_entry()
        makes the RunAgentInput.resume entry, and consume_approval() records it once
        per interrupt. Unlike JS, the id is not checked against the stream's open
        interrupts (the engine does not track them: python/README.md)."""
        if interrupt_id is not None and not isinstance(interrupt_id, str):
            raise sync_type_error("invalid-argument", "approve() interrupt_id must be a str")
        text = json_bytes(token, "approve() token").decode("utf-8")
        answer = _guard_answer(parse(self._facade.guard_approve(text, float(self._now()))))
        if answer.get("ok") and interrupt_id is not None:
            answer["approval"]["interruptId"] = interrupt_id
        return cast(ApproveResult, answer)

    @staticmethod
    def resume_entry(approval: Union[Approval, Mapping[str, Any]],
                     extra_payload: Optional[Mapping[str, Any]] = None) -> ResumeEntry:
        """The AG-UI RunAgentInput.resume entry answering ``approval["interruptId"]``
        (docs/wire.md section 7), as JS's ``guard.resumeEntry(approval, extraPayload)``:
        {interruptId, status: 'resolved', payload: {approved: True, approval, **extra_payload}}.
        The approval must be bound to an interrupt (approve(token, interrupt_id=...));
        ``extra_payload`` must not set 'approved' or 'approval'."""
        interrupt_id = approval.get("interruptId") if isinstance(approval, Mapping) else None
        if not isinstance(interrupt_id, str):
            raise sync_type_error("invalid-argument", "resume_entry() needs an approval bound to an interrupt "
                                                      "(approve(token, interrupt_id=...))")
        if extra_payload is not None and not isinstance(extra_payload, Mapping):
            raise sync_type_error("invalid-argument", "resume_entry() extra_payload must be a dict")
        for key in ("approved", "approval"):
            if extra_payload is not None and key in extra_payload:
                raise sync_type_error("invalid-argument", f"resume_entry() extra_payload must not set {key!r}")
        return {"interruptId": interrupt_id, "status": "resolved",
                "payload": {"approved": True, "approval": approval, **(extra_payload or {})}}

    # --- internals ------------------------------------------------------------------
    def _absorb(self, result_json: str) -> List[Outcome]:
        result = parse(result_json)
        if "outcomes" not in result:  # a facade failure where a Result was due: an engine bug
            raise sync_error("engine-failed", f"the engine answered {result_json[:200]!r}")
        outcomes = result.pop("outcomes")
        if "activities" in result:  # an outcome named an activity (docs/wire.md section 11)
            self._activity_list = result.pop("activities")
            self._activities = None
        self._result = result
        if any(o.get("kind") not in _STILL and "messageId" not in o for o in outcomes):
            self._fresh = False
        return cast(List[Outcome], outcomes)

    def _load(self) -> None:
        if self._fresh:
            return
        self._confirmed = parse(self._facade.state_json())
        self._state = self._confirmed if not self._result.get("edits") else parse(self._facade.visible_state_json())
        self._fresh = True


def _edit_refusal(code: str, message: str, op_index: Optional[int] = None) -> EditRefusal:
    refusal: Dict[str, Any] = {"ok": False, "reason": code, "code": code, "message": message}
    if op_index is not None:
        refusal["opIndex"] = op_index
    return cast(EditRefusal, refusal)


def _guard_answer(result: Dict[str, Any]) -> Dict[str, Any]:
    """The facade's guard answer as the JS guard returns it ({ok: False, reason: code} when refused)."""
    if result.get("ok"):
        return result
    return {"ok": False, "reason": result.get("code")}


# The JS package's name for the same object.
StateSync = SyncEngine
