"""memory_store(): the store contract of the JS package (js/src/server/store/
contract.js) in this process's memory: consume_approval's and once()'s
records (claim/peek), and the thread methods a store-bound emitter uses
(load/init/append/head/reset). Every method is a coroutine that finishes
without awaiting anything, so each is atomic like a Redis script. Nothing
survives the process; share a redis_store to share decisions between
processes and with Node."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ..errors import sync_type_error
from .contract import DEFAULT_APPROVAL_TTL_MS, DEFAULT_TTL_MS, positive_option

if TYPE_CHECKING:
    from ..types import ClaimResult, StoreAnswer, StoredLine, StoreHead, StoreLine, StoreWrite

class MemoryStore:
    incremental_state = True  # append() may leave the state out (contract.js)

    def __init__(self, ttl_ms: int, now: Callable[[], float]) -> None:
        self._ttl_ms = ttl_ms
        self._now = now
        self._threads: Dict[str, Dict[str, Any]] = {}
        self._records: Dict[str, Dict[str, Any]] = {}
        self._watchers: Dict[str, List[Callable[[], None]]] = {}

    async def load(self, key: str) -> Optional[StoredLine]:
        t = self._live(key)
        if t is None:
            return None
        return {"epoch": t["epoch"], "seq": t["seq"], "stateSeq": t["stateSeq"], "state": t["state"],
                "events": [e["text"] for e in t["events"]]}

    async def init(self, key: str, line: StoreLine) -> StoreAnswer:
        if self._live(key) is not None:
            return {"ok": False}
        self._put(key, line)
        self._notify(key)
        return {"ok": True}

    async def append(self, key: str, write: StoreWrite) -> StoreAnswer:
        t = self._live(key)
        if t is None or t["seq"] != write["baseSeq"] or t["epoch"] != write["epoch"]:
            return {"ok": False}
        for event in write["events"]:
            if event.get("snapshot"):
                t["events"], t["bytes"] = [], 0
            t["events"].append({"seq": event["seq"], "text": event["text"]})
            t["bytes"] += len(event["text"].encode("utf-8"))
            t["seq"] = event["seq"]
        if write.get("state") is not None:
            t["state"], t["stateSeq"] = write["state"], t["seq"]
        # Oldest first, by count then by bytes; never an event after stateSeq.
        drop = 0
        while ((len(t["events"]) - drop > write["maxEvents"] or (t["bytes"] > write["maxBytes"] and drop < len(t["events"])))
               and t["events"][drop]["seq"] <= t["stateSeq"]):
            t["bytes"] -= len(t["events"][drop]["text"].encode("utf-8"))
            drop += 1
        del t["events"][:drop]
        t["expires"] = self._now() + self._ttl_ms
        self._notify(key)
        return {"ok": True}

    async def head(self, key: str) -> Optional[StoreHead]:
        t = self._live(key)
        return None if t is None else {"epoch": t["epoch"], "seq": t["seq"]}

    async def reset(self, key: str, expect: StoreHead, line: StoreLine) -> StoreAnswer:
        t = self._live(key)
        if t is not None and (t["seq"] != expect["seq"] or t["epoch"] != expect["epoch"]):
            return {"ok": False}
        self._put(key, line)
        self._notify(key)
        return {"ok": True}

    def watch(self, key: str, on_change: Callable[[], None]) -> Callable[[], None]:
        """on_change() after every write to ``key`` in this process. Returns unwatch()."""
        self._watchers.setdefault(key, []).append(on_change)

        def unwatch() -> None:
            watchers = self._watchers.get(key, [])
            if on_change in watchers:
                watchers.remove(on_change)
            if not watchers:
                self._watchers.pop(key, None)
        return unwatch

    def _notify(self, key: str) -> None:
        for on_change in list(self._watchers.get(key, ())):
            try:
                on_change()
            except Exception:  # noqa: BLE001 - a watcher's failure is its own
                logging.getLogger("agui_state_sync").exception("agui-state-sync: a store watcher failed")

    async def claim(self, scope: str, id: str, value: str, ttl_ms: int = DEFAULT_APPROVAL_TTL_MS) -> ClaimResult:  # noqa: A002
        name = f"{scope}\0{id}"
        existing = self._records.get(name)
        if existing is not None and existing["expires"] > self._now():
            return {"ok": False, "existing": existing["value"]}
        self._records[name] = {"value": value, "expires": self._now() + ttl_ms}
        return {"ok": True}

    async def peek(self, scope: str, id: str) -> Optional[str]:  # noqa: A002
        record = self._records.get(f"{scope}\0{id}")
        return record["value"] if record is not None and record["expires"] > self._now() else None

    async def release(self, scope: str, id: str, value: str) -> bool:  # noqa: A002
        """Drops the record if it still holds ``value`` (once()'s lease after a failed effect)."""
        name = f"{scope}\0{id}"
        record = self._records.get(name)
        if record is None or record["value"] != value:
            return False
        del self._records[name]
        return True

    async def close(self) -> None:
        """Nothing to release; for symmetry with redis_store()."""

    def _put(self, key: str, line: StoreLine) -> None:
        self._sweep()
        self._threads[key] = {"epoch": line["epoch"], "seq": line["seq"], "state": line["state"],
                              "stateSeq": line["seq"], "events": [], "bytes": 0,
                              "expires": self._now() + self._ttl_ms}

    def _live(self, key: str) -> Optional[Dict[str, Any]]:
        t = self._threads.get(key)
        if t is not None and t["expires"] <= self._now():
            del self._threads[key]
            return None
        return t

    # Expired threads and records go when a thread is created: bounded by what lives.
    def _sweep(self) -> None:
        now = self._now()
        for key in [k for k, t in self._threads.items() if t["expires"] <= now]:
            del self._threads[key]
        for name in [n for n, r in self._records.items() if r["expires"] <= now]:
            del self._records[name]


def memory_store(*, ttl_ms: Optional[int] = None, now: Optional[Callable[[], float]] = None) -> MemoryStore:
    """The in-process store. ttl_ms: a thread not written for this long is
    forgotten (1 day); now: the clock in milliseconds (default: time.time)."""
    if now is not None and not callable(now):
        raise sync_type_error("invalid-options", "memory_store() now must be a function")
    return MemoryStore(positive_option(ttl_ms, "memory_store() ttl_ms", DEFAULT_TTL_MS), now or (lambda: time.time() * 1000.0))
