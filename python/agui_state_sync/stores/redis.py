"""redis_store(): the store contract in Redis through redis-py's asyncio
client (the [redis] extra), with the same keys, Lua scripts and encodings as
the Node redisStore (js/src/server/store/redis-store.js), so a Python and a
Node instance can serve one thread and share approval and once() records.

One thread is a hash (seq, epoch, bytes, stateSeq), a string (the state) and
a stream (the event log) under one hash tag, ``<prefix>{<key>}:meta|state|log``;
a record is ``<prefix>{<scope>}:claim:<id>``. Every write is one Lua script,
so it is atomic, and PUBLISHes the new seq on the meta key's name
(watch()). An unreachable Redis is AguiSyncError 'store-unavailable'."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ..errors import sync_error, sync_type_error
from .contract import DEFAULT_APPROVAL_TTL_MS, DEFAULT_TTL_MS, positive_option
from ._layout import claim_key, thread_base
from ._redis_watch import RedisWatch
from .lua import LUA_DIR, script_text

if TYPE_CHECKING:
    from ..types import ClaimResult, StoreAnswer, StoredLine, StoreHead, StoreLine, StoreWrite

MAX_ID_LENGTH = 1024


class RedisStore:
    incremental_state = True  # append() may leave the state out: a delta costs its own bytes

    def __init__(self, client: Any, prefix: str, ttl_ms: int, approval_ttl_ms: int, owned: bool) -> None:
        self._client = client
        self._owned = owned  # a client passed in stays the app's to close
        self.prefix = prefix
        self._ttl_ms = ttl_ms
        self._approval_ttl_ms = approval_ttl_ms
        self._shas: Dict[str, str] = {}
        self._watch: Optional[RedisWatch] = None  # pub/sub, on the first watch()
        # close() is final, as Node's: a late write of a run being torn down fails
        # rather than opening a connection (redis-py's pool would) nobody closes.
        self._closed = False

    async def load(self, key: str) -> Optional[StoredLine]:
        reply = await self._script("load", self._keys(key), [])
        if reply is None:
            return None
        seq, epoch, state_seq, state, *events = reply
        return {"seq": int(seq), "epoch": epoch, "stateSeq": int(state_seq), "state": state, "events": events}

    async def init(self, key: str, line: StoreLine) -> StoreAnswer:
        args = [str(line["seq"]), line["epoch"], line["state"], str(self._ttl_ms)]
        return {"ok": await self._script("init", self._keys(key), args) == 1}

    async def append(self, key: str, write: StoreWrite) -> StoreAnswer:
        state = write.get("state")
        args = [str(write["baseSeq"]), write["epoch"], "" if state is None else state, str(self._ttl_ms),
                str(write["maxEvents"]), str(write["maxBytes"])]
        for event in write["events"]:
            args += [str(event["seq"]), "1" if event.get("snapshot") else "0", event["text"]]
        reply = await self._script("append", self._keys(key), args)
        return {"ok": reply[0] == 1}

    async def head(self, key: str) -> Optional[StoreHead]:
        seq, epoch = await self._command("HMGET", self._keys(key)[0], "seq", "epoch")
        return None if seq is None or epoch is None else {"seq": int(seq), "epoch": epoch}

    async def reset(self, key: str, expect: StoreHead, line: StoreLine) -> StoreAnswer:
        args = [str(expect["seq"]), expect["epoch"], str(line["seq"]), line["epoch"], line["state"], str(self._ttl_ms)]
        return {"ok": await self._script("reset", self._keys(key), args) == 1}

    async def claim(self, scope: str, id: str, value: str, ttl_ms: Optional[int] = None) -> ClaimResult:  # noqa: A002
        ttl = self._approval_ttl_ms if ttl_ms is None else ttl_ms
        existing = await self._script("claim", [self._claim_key(scope, id)], [value, str(ttl)])
        return {"ok": True} if existing is None else {"ok": False, "existing": existing}

    async def peek(self, scope: str, id: str) -> Optional[str]:  # noqa: A002
        return await self._command("GET", self._claim_key(scope, id))

    async def release(self, scope: str, id: str, value: str) -> bool:  # noqa: A002
        return await self._script("release", [self._claim_key(scope, id)], [value]) == 1

    def watch(self, key: str, on_change: Callable[[], None]) -> Callable[[], None]:
        """on_change() after every write to ``key`` by any instance (Node's
        too), heard over Redis pub/sub on a connection opened on first use.
        Returns unwatch()."""
        return self._watch_channel(self._keys(key)[0], on_change)

    def watching(self, key: str) -> bool:
        """True once Redis confirmed the subscription for ``key``."""
        return self._watch is not None and self._watch.watching(self._keys(key)[0])

    def _watch_channel(self, channel: str, on_change: Callable[[], None],
                       on_ready: Optional[Callable[[], None]] = None) -> Callable[[], None]:
        """on_change() after every PUBLISH on ``channel`` (a run log's meta key:
        stores/run_log.py); on_ready() once Redis confirmed the subscription.
        After close() nothing is heard."""
        if self._closed:
            return lambda: None
        self._watch = self._watch or RedisWatch(self._client)
        return self._watch.watch(channel, on_change, on_ready)

    async def client(self) -> Any:
        """The redis-py client: for an app's own commands next to ours."""
        return self._client

    async def close(self) -> None:
        """Closes the connections this store opened (a client passed in stays the
        app's), for good: any call after it is 'store-unavailable'."""
        self._closed = True
        if self._watch is not None:
            await self._watch.close()
            self._watch = None
        if self._owned:
            await self._client.aclose()

    def _claim_key(self, scope: str, id: str) -> str:  # noqa: A002
        if len(id) > MAX_ID_LENGTH:
            raise sync_type_error("invalid-argument", f"a claim id must be at most {MAX_ID_LENGTH} characters")
        return claim_key(self.prefix, scope, id)

    def _keys(self, key: str) -> List[str]:
        base = thread_base(self.prefix, key)
        return [f"{base}:meta", f"{base}:state", f"{base}:log"]

    async def _script(self, name: str, keys: List[str], args: List[str], folder: Path = LUA_DIR) -> Any:
        """EVALSHA of the script loaded once; EVAL when Redis forgot it (a restart).
        folder: where the script is (stores/run_log.py runs the proxy's run-*.lua)."""
        text = script_text(name, folder)
        if text not in self._shas:
            self._shas[text] = await self._command("SCRIPT", "LOAD", text)
        try:
            return await self._command("EVALSHA", self._shas[text], len(keys), *keys, *args)
        except _NoScript:
            return await self._command("EVAL", text, len(keys), *keys, *args)

    async def _command(self, *args: Any) -> Any:
        from redis import exceptions
        if self._closed:
            raise sync_error("store-unavailable", "the Redis store is unreachable (the store is closed)")
        try:
            return await self._client.execute_command(*args)
        except exceptions.NoScriptError:
            raise _NoScript() from None
        except (exceptions.ConnectionError, exceptions.TimeoutError, OSError) as error:
            raise sync_error("store-unavailable", f"the Redis store is unreachable ({error})") from error


class _NoScript(Exception):
    pass


def redis_store(url: Optional[str] = None, *, client: Any = None, prefix: str = "agui:", ttl_ms: Optional[int] = None,
                approval_ttl_ms: Optional[int] = None, timeout_ms: Optional[int] = None) -> RedisStore:
    """The Redis store: ``url`` ('redis://127.0.0.1:6379', 'unix:///path'), or
    ``client`` (a redis.asyncio client you own); prefix ('agui:', as Node's);
    ttl_ms (threads, 1 day); approval_ttl_ms (records, 7 days); timeout_ms
    (per command and connect, 2000). Needs redis-py: pip install agui-state-sync[redis]."""
    if url is not None and not isinstance(url, str):
        raise sync_type_error("invalid-options", "redis_store() url must be a str")
    if not isinstance(prefix, str):
        raise sync_type_error("invalid-options", "redis_store() prefix must be a str")
    timeout = positive_option(timeout_ms, "redis_store() timeout_ms", 2000) / 1000.0
    owned = client is None
    if owned:
        try:
            import redis.asyncio as aioredis
        except ImportError:
            raise sync_error("load-failed", "redis_store() needs redis-py (pip install agui-state-sync[redis])") from None
        client = aioredis.Redis.from_url(url or "redis://127.0.0.1:6379", decode_responses=True,
                                         socket_timeout=timeout, socket_connect_timeout=timeout)
    elif not callable(getattr(client, "execute_command", None)):
        raise sync_type_error("invalid-options", "redis_store() client must be a redis.asyncio client")
    return RedisStore(client, prefix, positive_option(ttl_ms, "redis_store() ttl_ms", DEFAULT_TTL_MS),
                      positive_option(approval_ttl_ms, "redis_store() approval_ttl_ms", DEFAULT_APPROVAL_TTL_MS), owned)
