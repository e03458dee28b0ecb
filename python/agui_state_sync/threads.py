"""The threads' emitters of a StateSequencer: one StateEmitter per threadId,
least recently used first, at most ``max_threads`` idle ones kept and none
idle longer than ``idle_ttl_ms``. An emitter in use by a run is never
evicted. With a store, each thread's emitter is bound to its threadId there
(StateEmitter.open), so a restart or another instance continues it.
(js/src/ag-ui/sequence-state.js ThreadEmitters.)"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple

from .emitter import StateEmitter

if TYPE_CHECKING:
    from .stores.protocol import Store


class ThreadEntry:
    __slots__ = ("emitter", "ready", "users", "last_used")

    def __init__(self, emitter: Any, now: float, ready: "Optional[asyncio.Future[Any]]" = None) -> None:
        self.emitter = emitter  # None while a store-bound one is being opened (ready)
        self.ready = ready
        self.users = 0
        self.last_used = now


class ThreadEmitters:
    def __init__(self, emitter_options: Dict[str, Any], max_threads: int, idle_ttl_ms: int,
                 now: Optional[Callable[[], float]] = None, store: Optional["Store"] = None) -> None:
        self._options = emitter_options
        self._store = store
        self._max = max_threads
        self._ttl = idle_ttl_ms
        self._now = now or (lambda: time.monotonic() * 1000.0)
        self._entries: "OrderedDict[str, ThreadEntry]" = OrderedDict()

    async def acquire(self, thread_id: str, initial_state: Any) -> Tuple[ThreadEntry, bool]:
        """The thread's entry, created from ``initial_state`` if new, in use until
        release(): (entry, fresh). A store that cannot open it raises, and nothing is kept."""
        self._sweep()
        entry = self._entries.pop(thread_id, None)
        fresh = entry is None
        if entry is None:
            entry = self._create(thread_id, {} if initial_state is None else initial_state)
        self._entries[thread_id] = entry  # most recently used last
        entry.users += 1
        if entry.emitter is None and entry.ready is not None:
            try:
                entry.emitter = await asyncio.shield(entry.ready)  # one open, however many runs wait for it
            except BaseException:
                entry.users -= 1
                if self._entries.get(thread_id) is entry and entry.emitter is None:
                    del self._entries[thread_id]
                raise
        return entry, fresh

    def _create(self, thread_id: str, initial_state: Any) -> ThreadEntry:
        if self._store is None:
            return ThreadEntry(StateEmitter(**self._options, initial_state=initial_state), self._now())
        opening = StateEmitter.open(store=self._store, key=thread_id, **self._options, initial_state=initial_state)
        return ThreadEntry(None, self._now(), asyncio.ensure_future(opening))

    def release(self, entry: ThreadEntry) -> None:
        entry.users -= 1
        entry.last_used = self._now()
        self._sweep()

    def get(self, thread_id: str) -> Any:
        entry = self._entries.get(thread_id)
        return None if entry is None else entry.emitter

    def __len__(self) -> int:
        return len(self._entries)

    def _sweep(self) -> None:
        now = self._now()
        idle = [k for k, e in self._entries.items() if e.users == 0 and e.emitter is not None]
        expired = {k for k in idle if now - self._entries[k].last_used >= self._ttl}
        over = max(0, len(idle) - len(expired) - self._max)
        for key in idle:  # oldest first
            if key in expired or over > 0:
                if key not in expired:
                    over -= 1
                dispose = getattr(self._entries.pop(key).emitter, "dispose", None)
                if dispose is not None:
                    dispose()
