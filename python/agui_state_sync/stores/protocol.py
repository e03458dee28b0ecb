"""The store contract (stores/contract.py, js/src/server/store/contract.js) as
``typing.Protocol``s, for a type checker: a store of your own is checked
against them where you annotate it (``store: Store = MyStore()``).

Every method is a coroutine that raises only when the store cannot be
reached; a lost race is an ordinary answer (``{"ok": False}``). ``watch`` and
``release`` are optional: a store without them is still a store (the emitter
then polls, and once()'s lease lapses after its TTL instead of being given
back), so they are their own protocols (``WatchableStore``, ``ReleasingStore``).

``RecordStore`` is the part consume_approval() and once() use (claim, peek);
``Store`` is what a store-bound emitter (StateEmitter.open, StateSequencer's
and the middleware's ``store=``) needs, and includes it.

Nothing here is checked at run time beyond what stores.check_store() checks
(that the methods exist).
"""

from __future__ import annotations

from typing import Callable, Optional, Protocol, runtime_checkable

from ..types import ClaimResult, StoreAnswer, StoredLine, StoreHead, StoreLine, StoreWrite

__all__ = ["RecordStore", "Store", "WatchableStore", "ReleasingStore", "Unwatch"]

Unwatch = Callable[[], None]


@runtime_checkable
class RecordStore(Protocol):
    """Records once per (scope, id): consume_approval()'s and once()'s."""

    async def claim(self, scope: str, id: str, value: str, ttl_ms: int = ...) -> ClaimResult:  # noqa: A002
        """Records ``value`` under (scope, id) unless a record is there:
        {"ok": True}, or {"ok": False, "existing": <the record>}."""
        ...

    async def peek(self, scope: str, id: str) -> Optional[str]:  # noqa: A002
        """The value recorded under (scope, id), or None."""
        ...


@runtime_checkable
class Store(RecordStore, Protocol):
    """A store-bound emitter's threads, plus the records (RecordStore)."""

    async def load(self, key: str) -> Optional[StoredLine]:
        """None, or the key's line: {epoch, seq, state, stateSeq?, events}."""
        ...

    async def init(self, key: str, line: StoreLine) -> StoreAnswer:
        """Creates the line unless the key exists."""
        ...

    async def append(self, key: str, write: StoreWrite) -> StoreAnswer:
        """Lands only if the key is still at write's baseSeq and epoch."""
        ...

    async def head(self, key: str) -> Optional[StoreHead]:
        """None, or {epoch, seq}."""
        ...

    async def reset(self, key: str, expect: StoreHead, line: StoreLine) -> StoreAnswer:
        """A new line if the key is still at ``expect``, or gone."""
        ...


@runtime_checkable
class WatchableStore(Store, Protocol):
    """A store that says when a key was written (optional): ``on_change()``
    after every write; returns the function that stops it. Not a coroutine."""

    def watch(self, key: str, on_change: Callable[[], None]) -> Unwatch:
        ...


@runtime_checkable
class ReleasingStore(RecordStore, Protocol):
    """A store that can give a record back (optional): True when the record
    under (scope, id) held ``value`` and is gone."""

    async def release(self, scope: str, id: str, value: str) -> bool:  # noqa: A002
        ...
