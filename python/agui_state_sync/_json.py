"""Python values <-> the JSON text the engine takes and gives.

Outgoing text is written by the native module (bindings/python/py_json.cpp)
exactly as JavaScript's JSON.stringify writes the same data, so an encoded
event has the JS emitter's bytes. What JSON cannot hold is refused before
anything reaches the engine, so nothing is half-applied:
  a type JSON has no form for (bytes, set, object)  -> AguiSyncTypeError
  NaN / Infinity, a cycle, a lone surrogate         -> AguiSyncValueError
  nesting deeper than MAX_DEPTH                      -> AguiSyncValueError 'limit-exceeded'
"""

from __future__ import annotations

import json
from typing import Any

from . import _core
from .errors import sync_type_error, sync_value_error

# Far beyond any engine limit (the engine's maxDepth default is 128), so the
# engine answers with its own code first; this bound only keeps the native
# writer's recursion off the end of the C stack.
MAX_DEPTH = 4096


def plain(value: Any, *, event: bool = False) -> Any:
    """A pydantic model (ag_ui.core events, a PydanticAI state) as plain data;
    anything else as it is. Events use the wire's camelCase aliases and drop
    None, as the SDK's EventEncoder does."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        if event:
            return dump(mode="json", by_alias=True, exclude_none=True)
        return dump(mode="json")
    return value


def json_bytes(value: Any, what: str, code: str = "invalid-argument") -> bytes:
    """UTF-8 JSON text of ``value`` as JSON.stringify would write it, or the error."""
    text, kind, message = _core.to_json(value, MAX_DEPTH)
    if text is not None:
        return text
    if kind == "type":
        raise sync_type_error(code, f"{what}: {message}")
    if kind == "depth":
        raise sync_value_error("limit-exceeded", f"{what}: {message}")
    raise sync_value_error(code, f"{what}: {message}")


def json_text(value: Any, what: str, code: str = "invalid-argument") -> str:
    return json_bytes(value, what, code).decode("utf-8")


def parse(text: "str | bytes") -> Any:
    """The engine's JSON answers (always valid JSON)."""
    return json.loads(text)
