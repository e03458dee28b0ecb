"""consume_approval / effect_key: an approval is acted on once. The decisions
(the key's identity, the record, a replay or another approval's record, the
verification) are the core's (src/facade/approval_consume.h), the ones the JS
package asks, so a Python agent and a Node agent share one store's records and
keys. This file checks arguments and does the store's I/O. verify_approval
says whether the agent still holds what the person approved; consume_approval
records it once per interrupt, so a re-sent resume gets the first decision
back instead of a second effect; effect_key is the idempotency key for the
effect itself."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, Optional, cast

from . import _core
from ._json import json_bytes, parse, plain
from .canonical import named_activity
from .errors import sync_type_error
from .stores.contract import RECORD_METHODS, check_key, check_store
from .types import ConsumedApproval

if TYPE_CHECKING:
    from .stores.protocol import RecordStore

# consume_approval's steps: peek, claim, the answer; one more round when a claim is lost.
_MAX_STEPS = 6


def _optional_id(value: Any, name: str) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise sync_type_error("invalid-argument", f"{name} must be a str")
    return value


def _request(approval: Any, **known: Any) -> Dict[str, Any]:
    """The core's request; an approval JSON cannot hold is no approval (None)."""
    try:
        json_bytes(approval, "approval")
    except Exception:  # a value JSON cannot hold cannot be a well-formed approval
        approval = None
    return {"approval": approval if isinstance(approval, dict) else None, **known}


def effect_key(approval: Any, *, thread_id: Optional[str] = None, interrupt_id: Optional[str] = None) -> str:
    """A stable idempotency key (64 hex digits): the SHA-256 of the canonical
    JSON of threadId, interruptId (default approval['interruptId']) and the
    approval's path, seq, epoch and digest. The same in any process, Node too."""
    request = _request(approval, threadId=_optional_id(thread_id, "effect_key() thread_id"),
                       interruptId=_optional_id(interrupt_id, "effect_key() interrupt_id"))
    answer = parse(_core.effect_key(json_bytes(request, "effect_key()")))
    if not answer["ok"]:
        raise sync_type_error(answer["code"], f"effect_key(): {answer['message']}")
    return cast(str, answer["effectKey"])


def _state_text(agent_state: Any) -> Optional[bytes]:
    try:
        return json_bytes(plain(agent_state), "consume_approval() agent_state")
    except Exception:  # a state JSON cannot hold cannot match any digest
        return None


async def consume_approval(approval: Any, agent_state: Any, *,
                           store: "RecordStore", thread_id: str,
                           interrupt_id: Optional[str] = None, activities: Any = None) -> ConsumedApproval:
    """Verifies ``approval`` against ``agent_state`` (an approval with a
    messageId against ``activities``' content of that activity:
    emitter.activities or {message_id: content}) and records it once in
    ``store`` under (thread_id, interrupt_id): {ok, decision, replayed,
    effectKey, reason?}, exactly as the JS consumeApproval answers:
      first time, verified       -> ok, 'approved', replayed False;
      the same approval again    -> the first decision, replayed True;
      another approval, same interrupt -> refused 'already-consumed';
      not verified               -> refused 'changed' ('invalid-token' when malformed, 'missing' when
                                    it names an activity the agent does not hold), nothing recorded.
    Act only on ok, with effectKey as the effect's idempotency key: a type checker
    narrows the answer on ``decision["ok"]`` (effectKey is a str there, None when refused).
    ``store``: any RecordStore (stores/protocol.py)."""
    check_store(store, "consume_approval() option store", RECORD_METHODS)
    check_key(thread_id, "consume_approval() option thread_id")
    known = _request(approval, threadId=thread_id, interruptId=interrupt_id,
                     nowMs=int(time.time() * 1000))
    state = _state_text(agent_state)
    named = named_activity(approval, activities)
    for _ in range(_MAX_STEPS):
        text = json_bytes(known, "consume_approval()")
        if named:  # spliced in like the state
            text = b'{"activities":' + named + b"," + text[1:]
        if state is not None:  # spliced in, not parsed again: the state may be large
            text = b'{"state":' + state + b"," + text[1:]
        step = parse(_core.consume_approval_step(text))
        if not step["ok"]:
            raise sync_type_error(step["code"], f"consume_approval(): {step['message']}")
        if step["step"] == "answer":
            return cast(ConsumedApproval, step["answer"])
        if step["step"] == "peek":
            known["record"] = await store.peek(thread_id, step["recordId"])
            continue
        claim = await store.claim(thread_id, step["recordId"], step["record"])
        if claim["ok"]:
            known["claimed"] = True
        else:
            known["record"] = cast(Dict[str, Any], claim)["existing"]  # a concurrent consumer was first
    raise RuntimeError(f"consume_approval did not settle in {_MAX_STEPS} steps")  # a bug in the core's steps
