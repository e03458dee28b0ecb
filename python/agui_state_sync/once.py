"""once(store, key, effect): the idempotency key at the effect boundary.

    result = await once(store, key, lambda k: pay(amount, idempotency_key=k))

(as JS's ``once(store, key, effect)``; the curried ``await once(store, key)(effect)``
works too, and its Once also answers ``recorded()``)

runs the effect at most once per key and records its (JSON) result in the
store; a replayed step (a re-sent resume, a retried graph node, another
instance on a shared store) gets the recorded result back without running
it. The effect is handed the key, so the API it calls can deduplicate the
one case no record can cover: a process that died after the effect and
before the record was written.

While an effect runs, a lease (a claim with a short TTL) keeps a concurrent
caller from running it too: that caller gets AguiSyncError 'run-active' and
may retry. A failed effect records nothing and gives the lease back (when the
store can release; otherwise it lapses after lease_ms), so it can be retried.
"""

from __future__ import annotations

import inspect
import json
import secrets
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Coroutine, Optional, TypeVar, Union, cast, overload

from ._json import json_text
from .errors import sync_error, sync_type_error
from .stores.contract import RECORD_METHODS, check_key, check_store
from .types import OnceRecord

if TYPE_CHECKING:
    # The stores once() takes: any RecordStore (stores/protocol.py); memory_store() and redis_store() are.
    from .stores.protocol import RecordStore as AnyRecordStore

SCOPE = "agui-once"
DEFAULT_LEASE_MS = 60_000
T = TypeVar("T")
Effect = Callable[[str], Union[Any, Awaitable[Any]]]


class Once:
    def __init__(self, store: "AnyRecordStore", key: str, scope: str, lease_ms: int) -> None:
        self.store = check_store(store, "once() store", RECORD_METHODS)
        self.key = check_key(key, "once() key")
        self.scope = check_key(scope, "once() scope")
        self.lease_ms = lease_ms

    async def recorded(self) -> Optional[OnceRecord]:
        """The recorded result ({'result': ...}), or None when the effect has not completed."""
        text = await self.store.peek(self.scope, f"result:{self.key}")
        return None if text is None else cast(OnceRecord, json.loads(text))

    @overload
    async def __call__(self, effect: Callable[[str], Awaitable[T]]) -> T: ...

    @overload
    async def __call__(self, effect: Callable[[str], T]) -> T: ...

    async def __call__(self, effect: Effect) -> Any:
        """Runs ``effect(key)`` (a function or a coroutine function) at most once per
        key; its result as JSON keeps it (what a replay gets), typed as the effect's."""
        done = await self.recorded()
        if done is not None:
            return done["result"]
        lease = json_text({"lease": secrets.token_hex(8)}, "once() lease")
        claim = await self.store.claim(self.scope, f"lease:{self.key}", lease, self.lease_ms)
        if not claim.get("ok"):
            done = await self.recorded()  # it may have completed between the peek and the claim
            if done is not None:
                return done["result"]
            raise sync_error("run-active", f"once(): the effect for key {self.key!r} is running elsewhere")
        try:
            result = effect(self.key)
            if inspect.isawaitable(result):
                result = await result
            record = json_text({"result": result}, "once() result")
        except BaseException:
            await self._release(lease)
            raise
        written = await self.store.claim(self.scope, f"result:{self.key}", record)
        if not written.get("ok"):  # only if the lease lapsed and another run recorded first
            return json.loads(written["existing"])["result"]
        return json.loads(record)["result"]  # what a replay will get, not the effect's own object

    async def _release(self, lease: str) -> None:
        release = getattr(self.store, "release", None)
        if callable(release):
            await release(self.scope, f"lease:{self.key}", lease)


@overload
def once(store: "AnyRecordStore", key: str, *, scope: str = SCOPE, lease_ms: int = DEFAULT_LEASE_MS) -> Once: ...


@overload
def once(store: "AnyRecordStore", key: str, effect: Callable[[str], Awaitable[T]], *, scope: str = SCOPE,
         lease_ms: int = DEFAULT_LEASE_MS) -> Coroutine[Any, Any, T]: ...


@overload
def once(store: "AnyRecordStore", key: str, effect: Callable[[str], T], *, scope: str = SCOPE,
         lease_ms: int = DEFAULT_LEASE_MS) -> Coroutine[Any, Any, T]: ...


def once(store: "AnyRecordStore", key: str, effect: Optional[Effect] = None, *, scope: str = SCOPE,
         lease_ms: int = DEFAULT_LEASE_MS) -> Union[Once, Coroutine[Any, Any, Any]]:
    """``await once(store, key, effect)``, as in JS: runs ``effect(key)`` at most once per
    key in ``store`` (see the module doc). Without ``effect``: the guard for that key,
    ``await once(store, key)(effect)``."""
    guard = Once(store, key, scope, lease_ms)
    if effect is None:
        return guard
    if not callable(effect):
        raise sync_type_error("invalid-argument", "once() effect must be a function of the key")
    return guard(effect)


