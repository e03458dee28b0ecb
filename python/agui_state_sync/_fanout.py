"""The listeners of a store-bound emitter (DurableStateEmitter.subscribe) and
how other instances' writes are found while anyone listens: the store's
notification when it has one (watch: Redis pub/sub, memory_store's own), and
a poll every poll_ms without one, as a slow safety net with one (at least
once a second). The twin of js/src/server/store/fanout.js; one task, running
only while someone listens."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, List, Optional

from .errors import sync_type_error

WATCHED_POLL_S = 1.0  # the safety-net poll when the store notifies
Listener = Callable[[List[Any]], None]
log = logging.getLogger("agui_state_sync")


class Fanout:
    def __init__(self) -> None:
        self._listeners: List[Listener] = []
        self._task: Optional[asyncio.Task] = None
        self._unwatch: Optional[Callable[[], None]] = None
        self._kick = asyncio.Event()  # a notification came: poll now (several: once)

    def add(self, listener: Listener, poll_ms: Any, poll: Callable[[], Awaitable[None]],
            watch: Optional[Callable[[Callable[[], None]], Callable[[], None]]]) -> Callable[[], None]:
        """Adds listener(events); while any is left, poll() runs on every
        notification of watch(on_change) and every poll_ms. Returns the remover."""
        if not callable(listener):
            raise sync_type_error("invalid-argument", "subscribe() needs a function")
        if isinstance(poll_ms, bool) or not isinstance(poll_ms, (int, float)) or not poll_ms > 0:
            raise sync_type_error("invalid-argument", "subscribe() poll_ms must be a positive number")
        self._listeners.append(listener)
        if self._task is None:
            self._unwatch = watch(self._kick.set) if watch is not None else None
            every = max(poll_ms / 1000.0, WATCHED_POLL_S) if watch is not None else poll_ms / 1000.0
            self._task = asyncio.ensure_future(self._polls(poll, every))

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
            if not self._listeners:
                self.clear()
        return remove

    def publish(self, events: List[Any]) -> None:
        """Every listener gets ``events`` (a failing one is logged, the others still get them)."""
        if not events:
            return
        for listener in list(self._listeners):
            try:
                listener(events)
            except Exception:  # noqa: BLE001 - a listener's failure is its own
                log.exception("agui-state-sync: a DurableStateEmitter listener failed")

    @property
    def active(self) -> bool:
        return bool(self._listeners)

    def clear(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._unwatch is not None:
            self._unwatch()
        self._task, self._unwatch = None, None
        self._listeners.clear()

    async def _polls(self, poll: Callable[[], Awaitable[None]], every: float) -> None:
        # One poll at a time; notifications during it make one more, not one each.
        while True:
            try:
                await asyncio.wait_for(self._kick.wait(), every)
            except asyncio.TimeoutError:
                pass
            self._kick.clear()
            try:
                await poll()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the next notification or poll tries again
                pass
