"""Where an event's wire fields (seq, baseSeq, epoch, digest, acks;
docs/wire.md sections 1 and 10) are, for the package's Python code that holds
events as dicts. The key comes from the core (src/wire/wire.h) and the rule is
src/wire/wire_meta.h's (the twin of js/src/engine/wire-meta.js);
tests/vectors/wire_meta_vectors.json holds all three to the same answers:
version 2, ``metadata[WIRE_KEY]`` when it is a dict (it alone counts);
version 1, else ``metadata`` itself."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from . import _core

WIRE_KEY: str = _core.WIRE_KEY


def wire_fields(event: Any) -> Optional[Dict[str, Any]]:
    """The dict holding ``event``'s wire fields, or None when it has none."""
    meta = event.get("metadata") if isinstance(event, dict) else None
    if not isinstance(meta, dict):
        return None
    ours = meta.get(WIRE_KEY)
    return ours if isinstance(ours, dict) else meta


def wire_seq(event: Any) -> Any:
    """``wire_fields(event)["seq"]``, or None."""
    fields = wire_fields(event)
    return fields.get("seq") if fields is not None else None


def with_wire_fields(metadata: Any, fields: Mapping[str, Any]) -> Dict[str, Any]:
    """A new metadata: ``metadata``'s own members (if a dict) with ``fields`` under WIRE_KEY."""
    return {**(metadata if isinstance(metadata, dict) else {}), WIRE_KEY: dict(fields)}
