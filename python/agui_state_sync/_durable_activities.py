"""A store-bound thread's activities (docs/wire.md section 11), what
``emitter.activities`` is for ``StateEmitter.open(store=..., key=...)``: stored
with the thread, so an attach on another instance, a resume or a restart starts
each activity with its snapshot or its exact replay, and no instance (Node or
Python) overwrites another's write of an activity. The twin of Node's
js/src/server/store/durable-activities.js.

The core decides (src/emit/activity_record.h): the local ActivityEmitter
(option record) computes each write's events and the ops that carry them onto
the thread's activity record, a store line of its own under
activity_record_key(key), guarded by tests of the line each activity
continues. This module does the I/O: a write is returned once the record holds
it; one that lost a race to another instance's write of the same activity
adopts the record and is written again; a catch-up first adopts the record."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Optional, TypeVar

from .activities import ActivityEmitter, Event
from .errors import AguiSyncError, failure_error
from .types import ActivityWrite

if TYPE_CHECKING:
    from .durable import DurableStateEmitter

T = TypeVar("T")


class DurableActivities:
    """``snapshot``, ``patch`` and ``write`` are coroutines, one at a time, that
    return once the store holds the write; the rest is the local ActivityEmitter's."""

    def __init__(self, local: ActivityEmitter, open_record: Callable[[], Awaitable["DurableStateEmitter"]]) -> None:
        self.local = local
        self._open = open_record
        self._record: Optional["DurableStateEmitter"] = None
        self._lock = asyncio.Lock()

    async def snapshot(self, message_id: str, activity_type: str, content: Any, *, replace: bool = True) -> List[Event]:
        async with self._lock:
            return await self._commit(lambda local: local.snapshot(message_id, activity_type, content, replace=replace))

    async def patch(self, message_id: str, activity_type: str, ops: Any) -> List[Event]:
        async with self._lock:
            return await self._commit(lambda local: local.patch(message_id, activity_type, ops))

    async def write(self, event: Event, **options: Any) -> ActivityWrite:
        """As ActivityEmitter.write(); dropped 'store-unavailable' / 'store-conflict'
        when it could not be stored (nothing was sent)."""
        async with self._lock:
            try:
                return await self._commit(lambda local: local.write(event, **options))
            except AguiSyncError as error:
                return {"events": [], "dropped": error.code, "error": error}
            except Exception as error:  # the store's own failure
                return {"events": [], "dropped": "store-unavailable", "error": error}

    async def sync(self) -> None:
        """Brings the activities to the stored record (another instance's writes, a restart)."""
        async with self._lock:
            await self._adopt()

    def content(self, message_id: str) -> Any:
        return self.local.content(message_id)

    def seq(self, message_id: str) -> Optional[int]:
        return self.local.seq(message_id)

    @property
    def epoch(self) -> str:
        return self.local.epoch

    @property
    def size(self) -> int:
        return self.local.size

    def encode(self, event: Any) -> bytes:
        return self.local.encode(event)

    def _catch_up(self, activities: Any, stream: Any = None) -> Dict[str, Any]:
        return self.local._catch_up(activities, stream)

    def _stream(self) -> Any:
        return self.local._stream()

    def dispose(self) -> None:
        if self._record is not None:
            self._record.dispose()

    async def _record_line(self) -> "DurableStateEmitter":
        if self._record is None:
            self._record = await self._open()
        return self._record

    async def _adopt(self) -> None:
        record = await self._record_line()
        await record.refresh()
        self.local._adopt_record(record._committed_text().encode("utf-8"))

    async def _commit(self, write: Callable[[ActivityEmitter], T]) -> T:
        """write(local) computes the events (a refusal raises, nothing changed); returned once
        stored. What follows the record's answer is the core's (RecordCommits, src/emit/activity_record.h)."""
        if self.local._record_stale():
            await self._adopt()
        while True:
            out = write(self.local)
            ops = self.local._take_record_ops()
            if not ops:
                return out
            record = await self._record_line()
            failure: Optional[BaseException] = None
            try:
                await record.patch(ops)
            except Exception as error:  # the store's own failure, or a lost race (its code says)
                failure = error
            step = self.local._settle_record(None if failure is None else str(getattr(failure, "code", None)
                                                                            or "store-unavailable"))
            if step["next"] == "done":
                return out
            if step["next"] == "raise":
                assert failure is not None
                raise failure
            if step["next"] == "fail":
                raise failure_error(step, "store-conflict", step["message"]) from failure
            await self._adopt()
