"""consume_approval / effect_key: an approval is acted on once, with the same
records and keys as the JS package (js/src/server/approvals.js), so a Python agent
and a Node agent can share one store. verify_approval says whether the agent
still holds what the person approved; consume_approval records it once per
interrupt, so a re-sent resume gets the first decision back instead of a
second effect; effect_key is the idempotency key for the effect itself."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, Optional

from ._json import json_text
from .canonical import state_digest, verify_approval
from .errors import sync_type_error
from .stores.contract import RECORD_METHODS, check_key, check_store

MAX_SAFE = 2**53 - 1


def _approval_fields(approval: Any) -> Optional[Dict[str, Any]]:
    """The approval's identity, or None when it is malformed."""
    if not isinstance(approval, dict):
        return None
    path, seq, digest, epoch = (approval.get(k) for k in ("path", "seq", "digest", "epoch"))
    if not isinstance(path, str) or not isinstance(digest, str):
        return None
    safe = isinstance(seq, int) and not isinstance(seq, bool) and -MAX_SAFE <= seq <= MAX_SAFE
    return {"path": path, "seq": seq if safe else None, "digest": digest, "epoch": epoch if isinstance(epoch, str) else None}


def _optional_id(value: Any, name: str) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise sync_type_error("invalid-argument", f"{name} must be a str")
    return value


def effect_key(approval: Any, *, thread_id: Optional[str] = None, interrupt_id: Optional[str] = None) -> str:
    """A stable idempotency key (64 hex digits): the SHA-256 of the canonical
    JSON of threadId, interruptId (default approval['interruptId']) and the
    approval's path, seq, epoch and digest. The same in any process, Node too."""
    fields = _approval_fields(approval)
    if fields is None:
        raise sync_type_error("invalid-argument", "effect_key() needs an approval {path, seq, digest, epoch}")
    interrupt = _optional_id(interrupt_id, "effect_key() interrupt_id")
    if interrupt is None:
        interrupt = _optional_id(approval.get("interruptId"), "approval['interruptId']")
    identity = {"v": 1, "threadId": _optional_id(thread_id, "effect_key() thread_id"), "interruptId": interrupt, **fields}
    return state_digest(identity)[len("sha256:"):]


def _refused(reason: str) -> Dict[str, Any]:
    return {"ok": False, "decision": "refused", "replayed": False, "effectKey": None, "reason": reason}


def _answer_from_record(recorded: str, key: str) -> Dict[str, Any]:
    try:
        record = json.loads(recorded)
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get("effectKey") != key:
        return _refused("already-consumed")  # the interrupt was resolved by another approval
    return {"ok": True, "decision": "approved", "replayed": True, "effectKey": key}


async def consume_approval(approval: Any, agent_state: Any, *, store: Any, thread_id: str,
                           interrupt_id: Optional[str] = None) -> Dict[str, Any]:
    """Verifies ``approval`` against ``agent_state`` and records it once in
    ``store`` under (thread_id, interrupt_id): {ok, decision, replayed,
    effectKey, reason?}, exactly as the JS consumeApproval answers:
      first time, verified       -> ok, 'approved', replayed False;
      the same approval again    -> the first decision, replayed True;
      another approval, same interrupt -> refused 'already-consumed';
      not verified               -> refused 'changed' ('invalid-token' when malformed), nothing recorded.
    Act only on ok, with effectKey as the effect's idempotency key."""
    check_store(store, "consume_approval() option store", RECORD_METHODS)
    check_key(thread_id, "consume_approval() option thread_id")
    if interrupt_id is None and isinstance(approval, dict):
        interrupt_id = approval.get("interruptId")
    if interrupt_id is not None and (not isinstance(interrupt_id, str) or not interrupt_id):
        raise sync_type_error("invalid-options", "consume_approval() interrupt_id must be a non-empty str")
    if _approval_fields(approval) is None:
        return _refused("invalid-token")
    key = effect_key(approval, thread_id=thread_id, interrupt_id=interrupt_id)
    record_id = interrupt_id if interrupt_id is not None else f"approval:{key}"
    recorded = await store.peek(thread_id, record_id)
    if recorded is not None:
        return _answer_from_record(recorded, key)
    if not verify_approval(approval, agent_state):
        return _refused("changed")
    record = json_text({"decision": "approved", "effectKey": key, "at": int(time.time() * 1000)}, "record")
    claim = await store.claim(thread_id, record_id, record)
    if not claim.get("ok"):
        return _answer_from_record(claim["existing"], key)  # a concurrent consumer was first
    return {"ok": True, "decision": "approved", "replayed": False, "effectKey": key}
