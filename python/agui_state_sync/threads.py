"""The threads' emitters of a StateSequencer: one StateEmitter per threadId,
least recently used first, at most ``max_threads`` idle ones kept and none
idle longer than ``idle_ttl_ms``. An emitter in use by a run is never
evicted. (js/src/ag-ui/sequence-state.js ThreadEmitters.)"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional, Tuple

from .emitter import StateEmitter


class ThreadEntry:
    __slots__ = ("emitter", "users", "last_used")

    def __init__(self, emitter: StateEmitter, now: float) -> None:
        self.emitter = emitter
        self.users = 0
        self.last_used = now


class ThreadEmitters:
    def __init__(self, emitter_options: Dict[str, Any], max_threads: int, idle_ttl_ms: int,
                 now: Optional[Callable[[], float]] = None) -> None:
        self._options = emitter_options
        self._max = max_threads
        self._ttl = idle_ttl_ms
        self._now = now or (lambda: time.monotonic() * 1000.0)
        self._entries: "OrderedDict[str, ThreadEntry]" = OrderedDict()

    def acquire(self, thread_id: str, initial_state: Any) -> Tuple[ThreadEntry, bool]:
        """The thread's entry, created from ``initial_state`` if new, in use until
        release(): (entry, fresh)."""
        self._sweep()
        entry = self._entries.pop(thread_id, None)
        fresh = entry is None
        if entry is None:
            emitter = StateEmitter(**self._options, initial_state={} if initial_state is None else initial_state)
            entry = ThreadEntry(emitter, self._now())
        self._entries[thread_id] = entry  # most recently used last
        entry.users += 1
        return entry, fresh

    def release(self, entry: ThreadEntry) -> None:
        entry.users -= 1
        entry.last_used = self._now()
        self._sweep()

    def get(self, thread_id: str) -> Optional[StateEmitter]:
        entry = self._entries.get(thread_id)
        return None if entry is None else entry.emitter

    def __len__(self) -> int:
        return len(self._entries)

    def _sweep(self) -> None:
        now = self._now()
        idle = [k for k, e in self._entries.items() if e.users == 0]
        expired = {k for k in idle if now - self._entries[k].last_used >= self._ttl}
        over = max(0, len(idle) - len(expired) - self._max)
        for key in idle:  # oldest first
            if key in expired or over > 0:
                if key not in expired:
                    over -= 1
                del self._entries[key]
