"""What a store is (memory_store(), redis_store(), or your own): the contract
of js/src/server/store/contract.js, with coroutine methods. A store-bound
emitter would call load/init/append/head/reset; consume_approval and once()
call claim/peek (and release, when the store has it).

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
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        raise sync_type_error("invalid-options", f"{what} must be a non-empty str of at most {MAX_KEY_LENGTH} characters")
    return key


def positive_option(value: Any, name: str, fallback: int) -> int:
    if value is None:
        return fallback
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise sync_type_error("invalid-options", f"{name} must be a positive integer")
    return value
