"""Stores: where a store-bound emitter's threads (StateEmitter.open) and
consume_approval's and once()'s records live. memory_store() for one process,
redis_store() to share them with other processes and with Node. A store of
your own implements Store (stores/protocol.py: the contract as a Protocol)."""

from .contract import RECORD_METHODS, STORE_METHODS, check_key, check_store
from .memory import MemoryStore, memory_store
from .protocol import RecordStore, ReleasingStore, Store, WatchableStore
from .redis import RedisStore, redis_store

__all__ = ["MemoryStore", "RedisStore", "RECORD_METHODS", "STORE_METHODS", "RecordStore", "ReleasingStore", "Store",
           "WatchableStore", "check_key", "check_store", "memory_store", "redis_store"]
