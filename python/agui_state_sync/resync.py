"""The server side of the resync conversation (docs/wire.md section 3):
where a reconnecting client says it is, and what to send it first. The
Python twin of js/src/server.js's readResyncRequest/catchUp.

The choice between 'snapshot' and a replay (no seq, another epoch, a reason
that says the state is wrong) is the core's (EmitterFacade::catchUp), as in
Node; this module only reads where the client is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Awaitable, Dict, List, Mapping, Optional, Union, cast, overload

from .errors import sync_type_error
from .types import CatchUp, ResyncPosition

if TYPE_CHECKING:
    from .durable import DurableStateEmitter
    from .emitter import StateEmitter

HEADER_SEQ = "X-AGUI-State-Seq"
HEADER_EPOCH = "X-AGUI-State-Epoch"
HEADER_REASON = "X-AGUI-Resync-Reason"
HEADER_LAST_EVENT_ID = "Last-Event-ID"
HEADER_HELD = "X-AGUI-State-Held"
HEADER_CATCH_UP = "X-AGUI-State-Sync"
HEADER_ACTIVITIES = "X-AGUI-State-Activities"  # percent-encoded JSON, read by the core (docs/wire.md section 11)
MAX_HELD = 64  # the engine's default reorderWindow
MAX_HELD_HEADER = MAX_HELD * 18
MAX_SAFE = 2**53 - 1
_CANONICAL_SEQ = re.compile(r"(0|[1-9][0-9]*)\Z")


def parse_seq(value: Any) -> Optional[int]:
    """12 or "12" -> 12; anything not a canonical integer in [0, 2^53-1] -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # a JSON number parsed as a float (12.0)
    if isinstance(value, int):
        return value if 0 <= value <= MAX_SAFE else None
    if isinstance(value, str) and _CANONICAL_SEQ.match(value):
        n = int(value)
        return n if n <= MAX_SAFE else None
    return None


def parse_held(value: Any) -> List[int]:
    """The held seqs of a header value ("12,13,15") or a stateSync.held list:
    valid seqs only, ascending, no repeats, at most MAX_HELD; never raises."""
    if isinstance(value, str):
        if len(value) > MAX_HELD_HEADER:
            return []
        entries: List[Any] = [entry.strip() for entry in value.split(",")]
    elif isinstance(value, (list, tuple)):
        entries = [v if isinstance(v, (int, float)) else None for v in value[: MAX_HELD * 4]]
    else:
        return []
    seqs = {s for s in map(parse_seq, entries) if s is not None}
    return sorted(seqs)[:MAX_HELD]


def _header(headers: Any, name: str) -> Optional[str]:
    value = headers.get(name) if hasattr(headers, "get") else None
    if value is None and isinstance(headers, Mapping):  # a plain dict: any case
        lower = name.lower()
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == lower), None)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.strip() if isinstance(value, str) else None


def _field(obj: Any, *names: str) -> Any:
    """obj[name] or obj.name, for dicts and pydantic models alike (first name found)."""
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def read_resync_request(request: Any) -> ResyncPosition:
    """Where the client says it is: {lastSeq, epoch, reason, lastEventId, held,
    activities} (activities: its activity positions as they came, the header's
    value or stateSync.activities, None when it keeps none; the core reads them).
    ``request``: anything with ``headers`` (Starlette, a dict of headers), or a
    RunAgentInput (dict or ag_ui.core model) carrying forwardedProps.stateSync.
    Last-Event-ID is reported, never taken for the seq (it names no epoch)."""
    position: Dict[str, Any] = {"lastSeq": None, "epoch": None, "reason": None, "lastEventId": None, "held": [],
                                "activities": None}
    headers = getattr(request, "headers", None)
    if headers is None and isinstance(request, Mapping) and "headers" in request:
        headers = request["headers"]
    if headers is not None:
        position["lastSeq"] = parse_seq(_header(headers, HEADER_SEQ))
        position["lastEventId"] = _header(headers, HEADER_LAST_EVENT_ID)
        position["epoch"] = _header(headers, HEADER_EPOCH) or None
        position["reason"] = _header(headers, HEADER_REASON) or None
        position["held"] = parse_held(_header(headers, HEADER_HELD))
        position["activities"] = _header(headers, HEADER_ACTIVITIES)
        return cast(ResyncPosition, position)
    state_sync = _field(_field(request, "forwardedProps", "forwarded_props"), "stateSync")
    if not isinstance(state_sync, Mapping):
        return cast(ResyncPosition, position)
    last_seq = state_sync.get("lastSeq")
    position["lastSeq"] = parse_seq(last_seq) if isinstance(last_seq, (int, float)) else None
    epoch = state_sync.get("epoch")
    if isinstance(epoch, str):
        position["epoch"] = epoch
    elif parse_seq(epoch) is not None and not isinstance(epoch, str):
        position["epoch"] = str(epoch)
    reason = state_sync.get("reason")
    if isinstance(reason, str) and reason:
        position["reason"] = reason
    held = state_sync.get("held")
    position["held"] = parse_held(held) if isinstance(held, list) else []
    activities = state_sync.get("activities")
    if isinstance(activities, (list, str)):
        position["activities"] = activities
    return cast(ResyncPosition, position)


@overload
def catch_up(emitter: "DurableStateEmitter", request: Any, activity_stream: Any = None) -> Awaitable[CatchUp]: ...


@overload
def catch_up(emitter: "StateEmitter", request: Any, activity_stream: Any = None) -> CatchUp: ...


def catch_up(emitter: Any, request: Any, activity_stream: Any = None) -> Union[CatchUp, Awaitable[CatchUp]]:
    """{mode: 'current' | 'replay' | 'snapshot', events} for a (re)connecting
    client; for a store-bound emitter (StateEmitter.open) a coroutine of it,
    which first catches up with what other instances wrote to the store. When
    the emitter has activities and the client said where its are, their events
    follow the state's, and ``activities`` lists [{messageId, mode}]."""
    store_catch_up = getattr(emitter, "_store_catch_up", None)
    if callable(store_catch_up):
        return _then_activities(emitter, request, store_catch_up(request), activity_stream)
    if not callable(getattr(emitter, "_catch_up_at", None)):
        raise sync_type_error("invalid-argument", "catch_up() needs a StateEmitter")
    where = read_resync_request(request)
    answer = emitter._catch_up_at({k: where[k] for k in ("lastSeq", "epoch", "reason", "held")})
    return cast(CatchUp, with_activities(emitter, where["activities"], answer, activity_stream))


async def _then_activities(emitter: Any, request: Any, pending: Any, stream: Any) -> CatchUp:
    return cast(CatchUp, with_activities(emitter, read_resync_request(request)["activities"], await pending, stream))


def with_activities(emitter: Any, positions: Any, answer: Dict[str, Any], stream: Any = None) -> Dict[str, Any]:
    """The state's catch-up ``answer`` with the activities' after it (as it was
    when the emitter has none in use or the client keeps none). ``stream``: the
    run's (internal), whose client then holds every activity."""
    in_use = getattr(emitter, "_activities_in_use", None)
    activities = in_use() if callable(in_use) else None
    if activities is None or positions is None:
        return answer
    caught = activities._catch_up(positions, stream)
    return {**answer, "events": [*answer["events"], *caught["events"]], "activities": caught["activities"]}


_POLICY_KEYS = frozenset(("ownership", "onConflict"))


def check_edit_policy(policy: Any, who: str) -> Dict[str, Any]:
    """The policy's shape ({ownership, onConflict}, both optional); the values
    are judged by the engine, whose refusal names them."""
    if policy is None:
        return {}
    if not isinstance(policy, Mapping):
        raise sync_type_error("invalid-options", f"{who} must be a mapping")
    unknown = [k for k in policy if k not in _POLICY_KEYS]
    if unknown:
        raise sync_type_error("invalid-options", f"{who}: unknown key {unknown[0]!r}")
    return {k: v for k, v in policy.items() if v is not None}
