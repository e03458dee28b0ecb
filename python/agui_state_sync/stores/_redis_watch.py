"""redis_store().watch(): on_change() after every write to a thread by any
instance, Node's or Python's. The Lua scripts PUBLISH the new seq on the
thread's meta key name (js/src/server/store/lua/); one PubSub connection of
the store's client, opened on the first watch, is read by one task. While
Redis is unreachable nothing is heard; a subscribed emitter's safety-net poll
still finds the writes (as in Node's redisStore)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Dict, List, Optional, Set

RETRY_S = 1.0  # after a failed read (Redis away), the next try
READ_S = 1.0  # a read returns empty after this long idle (redis-py's own run() pace)
log = logging.getLogger("agui_state_sync")


class RedisWatch:
    def __init__(self, client: Any) -> None:
        self._client = client
        self._watchers: Dict[str, List[Callable[[], None]]] = {}
        self._ready: Dict[str, List[Callable[[], None]]] = {}  # on_ready()s waiting for their subscription
        self._subscribed: Set[str] = set()
        self._pubsub: Any = None
        self._reader: Optional[asyncio.Task] = None
        self._lock = asyncio.Lock()  # one SUBSCRIBE / UNSUBSCRIBE at a time
        self._pending: Set[asyncio.Task] = set()

    def watch(self, channel: str, on_change: Callable[[], None],
              on_ready: Optional[Callable[[], None]] = None) -> Callable[[], None]:
        """on_change() after every message on ``channel``; on_ready() once the
        subscription is confirmed (what was published before it was not heard)."""
        watchers = self._watchers.setdefault(channel, [])
        watchers.append(on_change)
        if on_ready is not None:
            if channel in self._subscribed:
                asyncio.get_running_loop().call_soon(on_ready)
            else:
                self._ready.setdefault(channel, []).append(on_ready)
        if len(watchers) == 1:
            self._later(self._sync(channel))

        def unwatch() -> None:
            current = self._watchers.get(channel)
            if current is None or on_change not in current:
                return
            current.remove(on_change)
            if not current:
                del self._watchers[channel]
                self._ready.pop(channel, None)
                self._later(self._sync(channel))
        return unwatch

    def watching(self, channel: str) -> bool:
        """True once Redis confirmed the subscription (what a test waits for)."""
        return channel in self._subscribed

    async def close(self) -> None:
        self._watchers.clear()
        self._ready.clear()
        for task in [*self._pending, *([self._reader] if self._reader else [])]:
            task.cancel()
        if self._pubsub is not None:
            await self._pubsub.aclose()
        self._pubsub, self._reader = None, None
        self._subscribed.clear()

    def _later(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _sync(self, channel: str) -> None:
        """Subscribes or unsubscribes ``channel`` as its watchers say; a
        failure (Redis away) is tried again when the reader gets through."""
        async with self._lock:
            want, have = channel in self._watchers, channel in self._subscribed
            try:
                if want and not have:
                    self._pubsub = self._pubsub or self._client.pubsub(ignore_subscribe_messages=True)
                    await self._pubsub.subscribe(channel)
                    self._subscribed.add(channel)
                    for on_ready in self._ready.pop(channel, ()):
                        self._call(on_ready)
                elif have and not want:
                    self._subscribed.discard(channel)
                    await self._pubsub.unsubscribe(channel)
            except Exception as error:  # noqa: BLE001 - Redis away: the reader retries
                log.debug("agui-state-sync: (un)subscribing %s failed (%s)", channel, error)
            if self._reader is None and self._subscribed:
                self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=READ_S)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - unreachable: redis-py reconnects and re-subscribes on the next read
                await asyncio.sleep(RETRY_S)
                for channel in [c for c in self._watchers if c not in self._subscribed]:
                    self._later(self._sync(channel))
                continue
            if message is not None and message.get("type") == "message":
                self._changed(message["channel"])

    def _changed(self, channel: str) -> None:
        for on_change in list(self._watchers.get(channel, ())):
            self._call(on_change)

    @staticmethod
    def _call(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - a watcher's failure is its own
            log.exception("agui-state-sync: a store watcher failed")
