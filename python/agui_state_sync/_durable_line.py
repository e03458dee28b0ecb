"""Helpers of the store-bound emitter (durable.py), the twin of
js/src/server/store/durable-line.js: the local StateEmitter that continues a
stored line, the records an append carries, and the catch-up answer while the
store cannot vouch for a replay. The state at a stored line's head and when a
write carries the state are the core's (_core.StoreLineFacade,
src/emit/store_line.h), so a Node and a Python emitter agree on them."""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Sequence, Tuple

from . import _core
from ._json import json_bytes, json_text, parse
from ._options import options_json
from ._wire import wire_fields, wire_seq
from .emitter import StateEmitter
from .errors import failure_error
from .resync import read_resync_request
from .types import CatchUp

Event = Dict[str, Any]


def line_rules(store: Any, options: Mapping[str, Any]) -> Any:
    """The core's rules for one emitter's line, with the emitter's caps (the log's)."""
    picked = {k: options.get(k) for k in ("replay_max_events", "replay_max_bytes", "max_depth")}
    rules = _core.StoreLineFacade(options_json({**picked, "incremental": getattr(store, "incremental_state", False) is True},
                                               "StateEmitter.open()"))
    return rules


def build_local(rules: Any, options: Mapping[str, Any], stored: Mapping[str, Any], key: str) -> StateEmitter:
    """A local emitter continuing ``stored`` ({epoch, seq, state: JSON text at
    stateSeq (default seq), stateSeq?, events?: [JSON text]}): the state at its
    head (the core applies the log after stateSeq), its log adopted as the
    replay ring and edit ledger."""
    events = list(stored.get("events") or [])
    state_seq = stored.get("stateSeq")
    line = {"state": stored["state"], "stateSeq": stored["seq"] if state_seq is None else state_seq, "events": events}
    opened = parse(rules.open(json_bytes(line, "a stored line", "invalid-json")))
    if not opened.get("ok"):
        raise failure_error(opened, "store-conflict", f"key {json.dumps(key)}: {opened.get('message')}")
    local = StateEmitter._with_state_text(rules.head_state_json(), **options, epoch=stored["epoch"],
                                          start_seq=stored["seq"])
    if events:  # one parse of the whole log, in the core
        local._adopt_history_json(("[" + ",".join(events) + "]").encode("utf-8"))
    return local


def line_of(local: StateEmitter) -> Dict[str, Any]:
    """Where ``local`` stands, as a store line: {epoch, seq, state}."""
    return {"epoch": local.epoch, "seq": local.seq, "state": local._state_text()}


def log_records(events: List[Event]) -> Tuple[List[Dict[str, Any]], int, bool]:
    """The log records of ``events`` ([{seq, text, snapshot}], written as
    JSON.stringify writes them, so Node's records and ours are the same
    bytes), their UTF-8 bytes, and whether one is a snapshot."""
    records = [{"seq": wire_seq(e), "text": json_text(e, "an event"), "snapshot": e.get("type") == "STATE_SNAPSHOT"}
               for e in events]
    size = sum(len(r["text"].encode("utf-8")) for r in records)
    return records, size, any(r["snapshot"] for r in records)


def snapshot_catch_up(local: StateEmitter, request: Any) -> CatchUp:
    """The catch-up when no replay can be vouched for (the store is
    unreachable): the core's answer (nothing for a client exactly at the
    emitter's epoch and seq), with a snapshot in place of a replay."""
    where = read_resync_request(request)
    answer = local._catch_up_at({k: where[k] for k in ("lastSeq", "epoch", "reason", "held")})
    if answer["mode"] == "replay":
        return {"mode": "snapshot", "events": [local._catch_up_snapshot()]}
    return answer


def copy_argument(value: Any) -> Any:
    """``value`` copied now as JSON (the caller may change it before its turn);
    as it is when it is not JSON (the emitter's own check says so, with its code)."""
    try:
        return parse(json_bytes(value, "an argument"))
    except (TypeError, ValueError):
        return value


def events_of(out: Any) -> List[Event]:
    """The events of an update/patch result (a list) or an apply_edits result ({events})."""
    return out if isinstance(out, list) else out["events"]


def with_events(out: Any, events: Sequence[Mapping[str, Any]]) -> Any:
    return events if isinstance(out, list) else {**out, "events": events}


def events_after(events: List[Dict[str, Any]], seen: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The events of a line's log after ``seen`` ({epoch, seq}): all of them in another epoch."""
    def meta(e: Dict[str, Any]) -> Dict[str, Any]:
        return wire_fields(e) or {}
    return [e for e in events if meta(e).get("epoch") != seen["epoch"] or (meta(e).get("seq") or 0) > seen["seq"]]


def now_or_raise(start: Callable[[], Awaitable[Any]]) -> Awaitable[Any]:
    """start()'s coroutine; an error start() raises (a value JSON cannot hold)
    is raised by awaiting, as every other refusal of a write."""
    try:
        return start()
    except Exception as error:  # noqa: BLE001 - re-raised when awaited
        failed = error

    async def fail() -> Any:
        raise failed
    return fail()
