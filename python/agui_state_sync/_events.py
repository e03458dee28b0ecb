"""AG-UI events as they come from Python agent frameworks -> plain dicts.

An upstream may yield ag_ui.core event objects (LangGraphAgent.run()), dicts,
or already-encoded SSE text or bytes (EventEncoder.encode() output, PydanticAI's
AGUIAdapter stream): the last are framed by the core's SSE framer, so a chunk
may hold several events or part of one."""

from __future__ import annotations

import json
from typing import Any, AsyncIterable, AsyncIterator, Dict, Iterable, Union

from . import _core
from ._json import plain
from .errors import sync_error

Upstream = Union[AsyncIterable[Any], Iterable[Any]]


class EventReader:
    """Turns one item of an upstream into zero or more event dicts."""

    def __init__(self) -> None:
        self._framer = _core.SseFramer()

    def read(self, item: Any) -> Iterable[Dict[str, Any]]:
        if isinstance(item, str):
            item = item.encode("utf-8")
        if isinstance(item, (bytes, bytearray, memoryview)):
            return [self._parse(data) for kind, _, data, _, oversized in self._framer.feed(bytes(item))
                    if kind == "event" and not oversized and data]
        event = _event_dict(item)
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise sync_error("invalid-event", f"sequence_state(): an upstream item is not an AG-UI event: {type(item).__name__}")
        return [event]

    @staticmethod
    def _parse(data: str) -> Dict[str, Any]:
        try:
            event = json.loads(data)
        except ValueError as error:
            raise sync_error("invalid-json", f"sequence_state(): an upstream SSE event is not JSON ({error})") from None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise sync_error("invalid-event", "sequence_state(): an upstream SSE event has no type")
        return event


_PAYLOADS = {"STATE_SNAPSHOT": "snapshot", "STATE_DELTA": "delta"}


def _event_dict(item: Any) -> Any:
    """An SDK event object as a dict; its state payload is taken as it is rather
    than dumped (model_dump of a large snapshot costs more than sequencing it)."""
    if not callable(getattr(item, "model_dump", None)):
        return item
    kind = getattr(item, "type", None)
    name = _PAYLOADS.get(getattr(kind, "value", kind))  # the SDK's EventType is a str enum
    if name is None or getattr(item, name, None) is None:
        return plain(item, event=True)
    payload = getattr(item, name)
    if name == "delta" and isinstance(payload, list):
        # The SDK holds a delta's ops as models: each dumped by its aliases ("from"),
        # None kept (a replace to null is data, unlike the event's absent fields).
        payload = [op.model_dump(mode="json", by_alias=True) if callable(getattr(op, "model_dump", None)) else op
                   for op in payload]
    return {**item.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={name}), name: payload}


async def events_of(upstream: Upstream) -> AsyncIterator[Dict[str, Any]]:
    """Every event of ``upstream`` (sync or async iterable) as a dict, in order."""
    reader = EventReader()
    if hasattr(upstream, "__aiter__"):
        async for item in upstream:  # type: ignore[union-attr]
            for event in reader.read(item):
                yield event
    else:
        for item in upstream:  # type: ignore[union-attr]
            for event in reader.read(item):
                yield event
