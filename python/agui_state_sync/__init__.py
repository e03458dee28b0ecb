"""agui-state-sync for Python: the AG-UI state-sync core (C++, the same one
the npm package compiles to WebAssembly) for Python agents and clients.

The names are the JS package's in snake_case, with the same semantics and
codes (python/README.md says where Python differs, and why). Every error is an
AguiSyncError with ``.code``; it is also a TypeError for misuse and for a value
of a type JSON has no form for (bytes, a set, a dict key that is not a str),
and a ValueError for a value of a JSON type that JSON still cannot hold (NaN,
a cycle, a lone surrogate, nesting too deep), as ``json.dumps`` raises them.

Typed: ``agui_state_sync.types`` has a TypedDict for every dict the API gives
or takes, and the codes as Literal types; ``Store`` is the store contract as a
Protocol.
"""

from ._codes import (
    ALL_CODES,
    EDIT_REASONS,
    ERROR_CODES,
    GUARD_REASONS,
    IGNORED_REASONS,
    REPLAY_REASONS,
    RESYNC_REASONS,
    SNAPSHOT_REASONS,
)
from .asgi import StateSyncMiddleware
from .operate import JsonLogFormatter, ops_app
from .approvals import consume_approval, effect_key
from .canonical import canonical_json, state_digest, verify_approval
from .durable import DurableStateEmitter
from .emitter import StateEmitter
from .errors import AguiSyncError, AguiSyncTypeError, AguiSyncValueError
from .once import once
from .prompt import prompt_message, prompt_preamble, render_state_for_prompt
from .receiver import StateSync, SyncEngine
from .resync import HEADER_CATCH_UP, catch_up, read_resync_request
from .sequence import StateSequencer, sequence_state
from .stores import RecordStore, Store, memory_store, redis_store
from ._wire import WIRE_KEY, wire_fields

__version__ = "0.1.0"

__all__ = [
    "ALL_CODES", "EDIT_REASONS", "ERROR_CODES", "GUARD_REASONS", "IGNORED_REASONS", "REPLAY_REASONS",
    "RESYNC_REASONS", "SNAPSHOT_REASONS",
    "AguiSyncError", "AguiSyncTypeError", "AguiSyncValueError",
    "SyncEngine", "StateSync", "StateEmitter", "DurableStateEmitter",
    "canonical_json", "state_digest", "verify_approval",
    "render_state_for_prompt", "prompt_message", "prompt_preamble",
    "memory_store", "redis_store", "Store", "RecordStore", "consume_approval", "effect_key", "once",
    "catch_up", "read_resync_request", "HEADER_CATCH_UP", "StateSequencer", "sequence_state",
    "StateSyncMiddleware", "ops_app", "JsonLogFormatter", "WIRE_KEY", "wire_fields",
]
