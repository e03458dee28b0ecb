"""canonical_json (RFC 8785), state_digest ("sha256:" + SHA-256 of it) and
verify_approval, computed by the C++ core (SyncFacade::canonicalize/verify)
so that Python, the browser, Node and C++ agree byte for byte. An approval of
an activity's content (it has a messageId, docs/wire.md section 7) is judged
by the core against the agent's content of that activity, which this module
only fetches (named_activity)."""

from __future__ import annotations

from typing import Any, Dict, cast

from . import _core
from ._json import json_bytes, parse, plain
from .errors import sync_type_error, sync_value_error


def _canonicalize(value: Any, what: str) -> Dict[str, Any]:
    result: Dict[str, Any] = parse(_core.canonicalize(json_bytes(plain(value), what)))
    if result.get("ok"):
        return result
    if result.get("code") == "limit-exceeded":
        raise sync_value_error("limit-exceeded", f"{what}: {result.get('message')}")
    raise sync_type_error("invalid-argument", f"{what}: the value has no canonical form ({result.get('message')})")


def canonical_json(value: Any) -> str:
    """RFC 8785 canonical JSON text of ``value``."""
    return cast(str, _canonicalize(value, "canonical_json")["canonical"])


def state_digest(value: Any) -> str:
    """"sha256:" + lowercase hex SHA-256 of canonical_json(value)."""
    return cast(str, _canonicalize(value, "state_digest")["digest"])


def named_activity(approval: Any, activities: Any) -> bytes:
    """The agent's content of the activity ``approval`` names, as the core reads
    it: ``{"<messageId>": content}`` JSON, or b"" when it names none or the
    agent holds none (the core then refuses it, never judging it by the state).
    ``activities`` is emitter.activities (anything with content(message_id)) or
    a dict {message_id: content}. Never raises."""
    try:
        message_id = approval.get("messageId") if isinstance(approval, dict) else None
        if not isinstance(message_id, str) or activities is None:
            return b""
        if callable(getattr(activities, "content", None)):
            content = activities.content(message_id)
        elif isinstance(activities, dict):
            content = activities.get(message_id)
        else:
            return b""
        return b"" if content is None else json_bytes({message_id: plain(content)}, "the activity content")
    except Exception:  # content JSON cannot hold cannot match any digest
        return b""


def verify_approval(approval: Any, agent_state: Any, *, activities: Any = None) -> bool:
    """What an agent calls before acting on an approval: True only if its own
    state at approval['path'] has exactly approval['digest']; for an approval
    with a messageId, its content of that activity (``activities``:
    emitter.activities or {message_id: content}; without it, or without that
    activity: False). Malformed input of any kind is False, never an exception."""
    if not isinstance(approval, dict):
        return False
    path, digest = approval.get("path"), approval.get("digest")
    if not isinstance(path, str) or not isinstance(digest, str):
        return False
    try:
        fields = {"path": path, "digest": digest}
        if "messageId" in approval:
            fields["messageId"] = approval["messageId"]
        approval_text = json_bytes(plain(fields), "verify_approval")
    except Exception:
        return False
    try:
        state_text = json_bytes(plain(agent_state), "verify_approval")
    except Exception:  # no state JSON can hold: an activity's approval may still verify
        state_text = b""
    return bool(_core.verify(approval_text, state_text, named_activity(approval, activities)))
