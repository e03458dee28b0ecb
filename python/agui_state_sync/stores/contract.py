"""What a store is (memory_store(), redis_store(), or your own): the contract
of js/src/server/store/contract.js, with coroutine methods that raise only
when the store cannot be reached (a lost race is an ordinary answer). A
store-bound emitter (StateEmitter.open) calls load/init/append/head/reset
(and watch, when the store has it); consume_approval and once() call
claim/peek (and release, when the store has it).

  load(key)          -> None | {epoch, seq, state, stateSeq?, events}: the state's JSON
                        text at stateSeq (default seq); the log's JSON texts, oldest first,
                        a consecutive run of seqs ending at seq holding every event after stateSeq
  init(key, {epoch, seq, state})  -> {"ok": bool}: creates the thread unless it exists
  append(key, {baseSeq, epoch, state, events: [{seq, text, snapshot}], maxEvents, maxBytes})
                     -> {"ok": bool}: lands only if the thread is still at baseSeq/epoch; state
                        None keeps the stored one (sent only to a store with incremental_state)
  head(key)          -> None | {epoch, seq}
  reset(key, expect, {epoch, seq, state}) -> {"ok": bool}: a new line if still at expect, or gone
  watch(key, on_change) -> unwatch  (optional, not a coroutine) on_change() after every write
  claim(scope, id, value, ttl_ms) -> {"ok": True} | {"ok": False, "existing": value}
  peek(scope, id)                 -> the value recorded under (scope, id), or None
  release(scope, id, value)       -> True when the record held value and is gone (optional)
"""

from __future__ import annotations

from typing import Any

from ..errors import sync_type_error

DEFAULT_TTL_MS = 24 * 60 * 60 * 1000  # a thread not written for a day is forgotten
DEFAULT_APPROVAL_TTL_MS = 7 * 24 * 60 * 60 * 1000
MAX_KEY_LENGTH = 1024
STORE_METHODS = ("load", "init", "append", "head", "reset", "claim", "peek")
RECORD_METHODS = ("claim", "peek")


def check_store(store: Any, what: str, methods: tuple = STORE_METHODS) -> Any:
    if store is None or not all(callable(getattr(store, m, None)) for m in methods):
        raise sync_type_error("invalid-options", f"{what} must be a store: memory_store(), redis_store() or an object "
                                                 f"with {', '.join(methods)}")
    return store


def check_key(key: Any, what: str) -> str:
    """A caller's key: a non-empty str of at most 1024 characters that does not start with a
    NUL (the library's own keys do: a thread's activity record, src/emit/activity_record.h)."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH or key[0] == "\0":
        raise sync_type_error("invalid-options", f"{what} must be a non-empty str of at most {MAX_KEY_LENGTH} "
                                                 "characters, not starting with a NUL")
    return key


def positive_option(value: Any, name: str, fallback: int) -> int:
    if value is None:
        return fallback
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise sync_type_error("invalid-options", f"{name} must be a positive integer")
    return value
