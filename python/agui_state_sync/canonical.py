"""canonical_json (RFC 8785), state_digest ("sha256:" + SHA-256 of it) and
verify_approval, computed by the C++ core (SyncFacade::canonicalize/verify)
so that Python, the browser, Node and C++ agree byte for byte."""

from __future__ import annotations

from typing import Any, Dict

from . import _core
from ._json import json_bytes, parse, plain
from .errors import sync_type_error, sync_value_error


def _canonicalize(value: Any, what: str) -> Dict[str, Any]:
    result = parse(_core.canonicalize(json_bytes(plain(value), what)))
    if result.get("ok"):
        return result
    if result.get("code") == "limit-exceeded":
        raise sync_value_error("limit-exceeded", f"{what}: {result.get('message')}")
    raise sync_type_error("invalid-argument", f"{what}: the value has no canonical form ({result.get('message')})")


def canonical_json(value: Any) -> str:
    """RFC 8785 canonical JSON text of ``value``."""
    return _canonicalize(value, "canonical_json")["canonical"]


def state_digest(value: Any) -> str:
    """"sha256:" + lowercase hex SHA-256 of canonical_json(value)."""
    return _canonicalize(value, "state_digest")["digest"]


def verify_approval(approval: Any, agent_state: Any) -> bool:
    """What an agent calls before acting on an approval: True only if its own
    state at approval['path'] has exactly approval['digest']. Malformed input of
    any kind is False, never an exception."""
    if not isinstance(approval, dict):
        return False
    path, digest = approval.get("path"), approval.get("digest")
    if not isinstance(path, str) or not isinstance(digest, str):
        return False
    try:
        approval_text = json_bytes({"path": path, "digest": digest}, "verify_approval")
        state_text = json_bytes(plain(agent_state), "verify_approval")
    except Exception:  # a state JSON cannot hold cannot match any digest
        return False
    return bool(_core.verify(approval_text, state_text))
