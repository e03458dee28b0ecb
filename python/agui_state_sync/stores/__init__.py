"""Stores: where a store-bound emitter's threads (StateEmitter.open) and
consume_approval's and once()'s records live. memory_store() for one process,
redis_store() to share them with other processes and with Node."""

from .contract import RECORD_METHODS, STORE_METHODS, check_key, check_store
from .memory import MemoryStore, memory_store
from .redis import RedisStore, redis_store

__all__ = ["MemoryStore", "RedisStore", "RECORD_METHODS", "STORE_METHODS", "check_key", "check_store", "memory_store",
           "redis_store"]
