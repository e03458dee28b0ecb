"""ActivityEmitter: a thread's AG-UI 1.0 activities (ACTIVITY_SNAPSHOT /
ACTIVITY_DELTA; docs/wire.md section 11) as the sender stamps them, each
messageId its own sequenced document (the JS package's ActivityEmitter,
js/src/server/activity-emitter.js). One C++ ActivityFacade decides
everything: the diffs and stamps, how an agent's activity event goes on
(write), and what a reconnecting client needs of each activity (the catch-up).
A StateEmitter carries one as ``emitter.activities``, so catch_up() answers
for both."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional

from . import _core
from ._json import json_bytes, json_text, parse, plain
from ._options import check_init, options_json, random_epoch
from .errors import AguiSyncError, failure_code, failure_error, sync_type_error
from .types import ActivityWrite

Event = Dict[str, Any]
_ACTIVITY_TYPES = frozenset(("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"))
# The options an emitter's activities take from it.
_FROM_EMITTER = ("digest_every", "snapshot_ratio", "replay_max_events", "replay_max_bytes", "max_depth")


def picked_options(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The options of an emitter its activities take (not its state, say)."""
    return {k: options.get(k) for k in (*_FROM_EMITTER, "max_activities")}


def activity_options(options: Mapping[str, Any], epoch: Optional[str] = None, *, record: bool = False) -> str:
    """The ActivityFacade's options JSON for an emitter created with ``options``,
    in ``epoch``: a plain emitter's own (its activities live and die with it);
    None for a store-bound one's, a fresh one, with ``record`` (its writes'
    activity-record ops kept: src/emit/activity_record.h)."""
    picked = {k: options.get(k) for k in _FROM_EMITTER}
    return options_json({**picked, "max_activities": options.get("max_activities"), "record": record or None,
                         "epoch": random_epoch() if epoch is None else epoch}, "StateEmitter() activities")


def is_activity_event(event: Any) -> bool:
    return isinstance(event, Mapping) and event.get("type") in _ACTIVITY_TYPES


def _message_id(value: Any, who: str) -> str:
    if not isinstance(value, str):
        raise sync_type_error("invalid-argument", f"{who} message_id must be a str")
    return value


def _refusal(what: str, failure: Mapping[str, Any], fallback: str) -> AguiSyncError:
    code = failure_code(failure, fallback)
    return failure_error(failure, fallback, f"{what} refused ({code}): {failure.get('message')}; the activity is unchanged")


class ActivityEmitter:
    """Use ``emitter.activities`` (StateEmitter, DurableStateEmitter)."""

    def __init__(self, options_text: str) -> None:
        self._facade = _core.ActivityFacade(options_text)
        check_init(parse(self._facade.init_result()), "StateEmitter() activities")
        self._epoch: str = self._facade.epoch()

    def snapshot(self, message_id: str, activity_type: str, content: Any, *, replace: bool = True) -> List[Event]:
        """The app's ACTIVITY_SNAPSHOT: the activity's snapshot at seq 0 the first
        time, then the change ([] when nothing changed, or ``replace=False`` on
        an activity held)."""
        mid = _message_id(message_id, "activities.snapshot()")
        text = json_bytes(plain(content), "activities.snapshot() content")
        result = parse(self._facade.snapshot(mid, str(activity_type or ""), text, replace is not False))
        if not result.get("ok"):
            raise _refusal("activities.snapshot()", result, "invalid-json")
        return result["events"]

    def patch(self, message_id: str, activity_type: str, ops: Any) -> List[Event]:
        """The app's ACTIVITY_DELTA: its ops, atomically. A refusal raises an
        AguiSyncError ('patch-failed' also for an activity not held) with ``op_index``."""
        mid = _message_id(message_id, "activities.patch()")
        text = json_bytes(ops, "activities.patch() operations")
        result = parse(self._facade.patch(mid, str(activity_type or ""), text))
        if not result.get("ok"):
            raise _refusal("activities.patch()", result, "patch-failed")
        return result["events"]

    def write(self, event: Event, *, verified: bool = False, content: Optional[Callable[[str], Any]] = None,
              stream: Any = None) -> ActivityWrite:
        """An agent's activity event: {events, dropped, error} as the JS
        ActivityEmitter.write() gives it (any other event: {events: [event]}).
        ``stream``: a run's (_stream()): its client's first event of an
        activity it holds no position for is that activity's snapshot."""
        if not is_activity_event(event):
            return {"events": [event], "dropped": None, "error": None}
        try:
            text = json_bytes(plain(event, event=True), "an agent's activity event")
        except AguiSyncError as error:
            return {"events": [], "dropped": error.code, "error": error}
        if stream is not None:
            result = parse(stream.write(self._facade, text, verified))
        else:
            result = parse(self._facade.write(text, verified))
        if result.get("ok") and result.get("kind") == "content" and content is not None:
            value = json_bytes(content(result["messageId"]), "the content")
            result = parse(stream.write_content(self._facade, text, value) if stream is not None
                           else self._facade.write_content(text, value))
        if not result.get("ok"):
            return {"events": [], "dropped": failure_code(result, "invalid-json"),
                    "error": failure_error(result, "invalid-json", str(result.get("message")))}
        if result["kind"] == "write":
            return {"events": result["events"], "dropped": None, "error": None}
        if result["kind"] == "pass":
            return {"events": [event], "dropped": None, "error": None}
        failure = result.get("failure")
        error = _refusal("the activity event", failure, "patch-failed") if failure else None
        return {"events": [], "dropped": result.get("reason", "patch-failed"), "error": error}

    def content(self, message_id: str) -> Any:
        """The content of ``message_id`` as clients reconstruct it, or None when not held."""
        return parse(self._facade.content_json(_message_id(message_id, "activities.content()")))

    def seq(self, message_id: str) -> Optional[int]:
        seq = self._facade.seq(_message_id(message_id, "activities.seq()"))
        return None if seq < 0 else int(seq)

    @property
    def epoch(self) -> str:
        return self._epoch

    @property
    def size(self) -> int:
        return int(self._facade.size())

    def encode(self, event: Any) -> bytes:
        """b"data: <JSON>\\n\\n": an activity event carries no SSE id."""
        return b"data: " + json_bytes(plain(event, event=True), "encode() event") + b"\n\n"

    def _catch_up(self, activities: Any, stream: Any = None) -> Dict[str, Any]:
        """{activities: [{messageId, mode}], events} for a client's activity positions
        (a list, the X-AGUI-State-Activities value, or None: it keeps none)."""
        if activities is None:
            return {"activities": [], "events": []}
        position = json_text({"activities": activities}, "the activity positions", "invalid-request")
        result = parse(stream.catch_up(self._facade, position) if stream is not None else self._facade.catch_up(position))
        return {"activities": result["activities"], "events": result["events"]}

    def _take_record_ops(self) -> List[Any]:
        """A store-bound thread's: the activity record's ops of what was written since the last call."""
        return parse(self._facade.take_record_ops())

    def _settle_record(self, refusal: Optional[str]) -> Dict[str, Any]:
        """What follows the record's answer to the ops last taken (None: stored, else the store's
        refusal code): {next: 'done' | 'adopt' | 'raise' | 'fail', code?, message?} (the core's)."""
        return parse(self._facade.settle_record(refusal or ""))

    def _record_stale(self) -> bool:
        """Ops were taken and not stored since the last adoption: adopt before the next write."""
        return bool(self._facade.record_stale())

    def _adopt_record(self, record_text: bytes) -> int:
        """Brings the activities to the stored activity record's JSON text."""
        result = parse(self._facade.adopt_record(record_text))
        if not result.get("ok"):
            raise failure_error(result, "invalid-json", f"the stored activity record is unreadable: {result.get('message')}")
        return int(result["changed"])

    @staticmethod
    def _stream() -> Any:
        """A run's stream of a thread's activities (which ones its client holds a position for)."""
        return _core.ActivityStreamFacade()
