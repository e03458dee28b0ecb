"""The shapes of the dicts that cross the public API, as ``TypedDict``s: what
the engine (SyncEngine), the emitter, approvals, once(), catch-ups and the
stores give and take. Each is the Python twin of the JS package's type of the
same name (js/types/index.d.ts, server.d.ts), with the wire's camelCase keys:
the dicts are the core's answers, not Python objects of their own.

The codes are ``Literal`` types generated from the C++ code table
(``_codes_types.py``, as js/types/codes.d.ts is): ``ResyncReason``,
``IgnoredReason``, ``ErrorCode``, ``GuardReason``, ``EditReason``, ``Code``.

Results that succeed or refuse are unions tagged by ``ok`` (or an outcome's
``kind``), so a type checker narrows them::

    result = engine.approve(token)
    if result["ok"]:
        approval = result["approval"]        # Approval
    else:
        why = result["reason"]               # GuardReason

A state is the application's own shape: it is typed ``Any`` (JSON values).
Only for type checkers: nothing here is checked at run time.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

from ._codes_types import Code, EditReason, ErrorCode, GuardReason, IgnoredReason, ResyncReason

__all__ = [
    # codes (generated)
    "Code", "EditReason", "ErrorCode", "GuardReason", "IgnoredReason", "ResyncReason",
    # JSON and events
    "JsonValue", "JsonPatchOperation", "ValueOperation", "RemoveOperation", "FromOperation",
    "StateSnapshotEvent", "StateDeltaEvent", "StateEvent", "AguiEvent", "SyncStatus", "CatchUpMode",
    # the receiver (SyncEngine)
    "AppliedOutcome", "ResyncOutcome", "EventOutcome", "IgnoredOutcome", "ErrorOutcome", "EditAckedOutcome",
    "EditRejectedOutcome", "ConflictOutcome", "Outcome", "ResyncRequest", "SyncMetrics", "PendingEdit",
    "EditAccepted", "EditRefusal", "LocalEditResult", "RunInput", "RunInputForwardedProps", "RunInputStateSync",
    "ActivityPosition", "ActivityMirror", "ActivityResync", "ActivityWrite",
    # the approval guard, approvals, once()
    "ViewToken", "ViewAccepted", "ViewResult", "Approval", "ApproveAccepted", "GuardRefusal", "ApproveResult",
    "ResumeEntry", "ConsumeRefusalReason", "ConsumedApproved", "ConsumedRefused", "ConsumedApproval",
    "OnceRecord",
    # the emitter
    "EditRequest", "EditResult", "AppliedEdits", "ClientWrite", "EmitterStats", "StoreStats", "DurableEmitterStats",
    "CatchUp", "ActivityCatchUp",
    "ResyncPosition", "PromptTruncation", "PromptRender", "PromptMessage",
    # stores (stores/protocol.py)
    "StoreLine", "StoredLine", "StoreHead", "StoredEvent", "StoreWrite", "StoreAnswer", "ClaimWon", "ClaimLost",
    "ClaimResult",
]

# --- JSON and events ------------------------------------------------------------

JsonValue = Union[None, bool, int, float, str, List["JsonValue"], Dict[str, "JsonValue"]]
"""Any JSON value (for annotations of your own; the package types states as Any)."""

SyncStatus = Literal["synced", "unverified", "resyncing"]
CatchUpMode = Literal["current", "replay", "snapshot"]


class ValueOperation(TypedDict):
    """An RFC 6902 add, replace or test."""
    op: Literal["add", "replace", "test"]
    path: str
    value: Any


class RemoveOperation(TypedDict):
    op: Literal["remove"]
    path: str


# "from" is a keyword: the functional form.
FromOperation = TypedDict("FromOperation", {"op": Literal["move", "copy"], "from": str, "path": str})
"""An RFC 6902 move or copy."""

JsonPatchOperation = Union[ValueOperation, RemoveOperation, FromOperation]


class _SnapshotEventBase(TypedDict):
    type: Literal["STATE_SNAPSHOT"]
    snapshot: Any


class StateSnapshotEvent(_SnapshotEventBase, total=False):
    """A STATE_SNAPSHOT as sent; metadata['agui-state-sync'] holds the wire fields (docs/wire.md)."""
    metadata: Dict[str, Any]


class _DeltaEventBase(TypedDict):
    type: Literal["STATE_DELTA"]
    delta: List[JsonPatchOperation]


class StateDeltaEvent(_DeltaEventBase, total=False):
    metadata: Dict[str, Any]


StateEvent = Union[StateSnapshotEvent, StateDeltaEvent]
AguiEvent = Dict[str, Any]
"""Any AG-UI event as parsed JSON (``type`` and the event's own fields)."""

# --- the receiver: SyncEngine.feed() / end() outcomes ---------------------------------


class _AppliedBase(TypedDict):
    kind: Literal["applied"]
    type: Literal["STATE_SNAPSHOT", "STATE_DELTA", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"]
    seq: Optional[int]
    changedPaths: List[str]
    event: AguiEvent


class AppliedOutcome(_AppliedBase, total=False):
    """The event was applied. Unlike JS it carries no ``state``: read ``engine.state``.
    ``messageId``: an activity's event (type ACTIVITY_*)."""
    messageId: str


class _ResyncBase(TypedDict):
    kind: Literal["resync"]
    reason: ResyncReason
    lastSeq: Optional[int]
    lastEventId: Optional[str]
    detail: str


class ResyncOutcome(_ResyncBase, total=False):
    messageId: str


class EventOutcome(TypedDict):
    """A pass-through AG-UI event (RUN_STARTED, TEXT_MESSAGE_CONTENT, ...)."""
    kind: Literal["event"]
    event: AguiEvent


class _IgnoredBase(TypedDict):
    kind: Literal["ignored"]
    reason: IgnoredReason
    seq: Optional[int]


class IgnoredOutcome(_IgnoredBase, total=False):
    messageId: str


class _ErrorBase(TypedDict):
    kind: Literal["error"]
    code: ErrorCode
    message: str


class ErrorOutcome(_ErrorBase, total=False):
    messageId: str


class EditAckedOutcome(TypedDict):
    kind: Literal["edit-acked"]
    editId: str
    seq: Optional[int]


class EditRejectedOutcome(TypedDict):
    kind: Literal["edit-rejected"]
    editId: str
    reason: EditReason


class _ConflictBase(TypedDict):
    kind: Literal["conflict"]
    editId: str
    seq: Optional[int]
    path: str
    resolution: Literal["agent-wins", "user-wins"]


class ConflictOutcome(_ConflictBase, total=False):
    """``mine`` absent: the edit removed the value; ``theirs`` absent: the agent did."""
    mine: Any
    theirs: Any


Outcome = Union[AppliedOutcome, ResyncOutcome, EventOutcome, IgnoredOutcome, ErrorOutcome, EditAckedOutcome,
                EditRejectedOutcome, ConflictOutcome]
"""One of SyncEngine.feed()'s / end()'s answers; narrow on ``outcome["kind"]``."""


class ResyncRequest(TypedDict):
    """SyncEngine.resync_request(): what to tell the server."""
    reason: ResyncReason
    lastSeq: Optional[int]
    lastEventId: Optional[str]
    held: List[int]


class SyncMetrics(TypedDict):
    """SyncEngine.metrics()."""
    anchors: int
    deltaBytes: int
    deltaSavedBytes: int
    deltasApplied: int
    digestChecks: int
    duplicates: int
    errors: int
    events: int
    heartbeats: int
    held: int
    netSavedBytes: int
    reordersHealed: int
    replayHeals: int
    resyncSnapshotBytes: int
    resyncSnapshots: int
    resyncs: int
    resyncsByReason: Dict[str, int]
    snapshotBytes: int
    snapshots: int
    staleSnapshots: int
    stateBytes: int
    taxRate: float


class PendingEdit(TypedDict):
    editId: str
    baseSeq: Optional[int]
    ops: List[JsonPatchOperation]


class EditAccepted(TypedDict):
    ok: Literal[True]
    editId: str


class _EditRefusalBase(TypedDict):
    ok: Literal[False]
    reason: EditReason
    code: EditReason
    message: str


class EditRefusal(_EditRefusalBase, total=False):
    """SyncEngine.edit() refused the edit: nothing changed. ``opIndex``: the op at fault."""
    opIndex: int


LocalEditResult = Union[EditAccepted, EditRefusal]


class RunInputStateSync(TypedDict):
    edits: List[PendingEdit]


class RunInputForwardedProps(TypedDict):
    stateSync: RunInputStateSync


class RunInput(TypedDict):
    """SyncEngine.run_input(): the parts of the next RunAgentInput."""
    state: Any
    forwardedProps: RunInputForwardedProps


class ActivityPosition(TypedDict):
    """Where a client's activity is (SyncEngine.activity_positions(), docs/wire.md section 11)."""
    messageId: str
    lastSeq: Optional[int]
    epoch: Optional[str]
    reason: Optional[str]


class ActivityResync(TypedDict):
    reason: ResyncReason
    lastSeq: Optional[int]
    lastEventId: Optional[str]


class _ActivityMirrorBase(TypedDict):
    messageId: str
    activityType: str
    content: Any
    status: SyncStatus
    lastSeq: Optional[int]
    held: int
    resync: Optional[ActivityResync]


class ActivityMirror(_ActivityMirrorBase, total=False):
    """One activity as SyncEngine.activities holds it."""
    epoch: Optional[str]


class ActivityWrite(TypedDict):
    """emitter.activities.write(event): the events to send ({events: [event]} for
    an event that is not an activity's); ``dropped``: why none was sent (a code),
    or None; ``error``: the refusal behind ``dropped`` (an exception), or None."""
    events: List[AguiEvent]
    dropped: Optional[str]
    error: Optional[Exception]


# --- the approval guard, approvals, once() ----------------------------------------------


class _ViewTokenBase(TypedDict):
    path: str
    seq: Optional[int]
    digest: str


class ViewToken(_ViewTokenBase, total=False):
    """What the person was shown: hand it back to approve(). ``messageId``: a value in that activity."""
    messageId: str


class ViewAccepted(TypedDict):
    ok: Literal[True]
    token: ViewToken


class GuardRefusal(TypedDict):
    ok: Literal[False]
    reason: GuardReason


ViewResult = Union[ViewAccepted, GuardRefusal]


class _ApprovalBase(TypedDict):
    path: str
    seq: Optional[int]
    viewedSeq: Optional[int]
    digest: str
    epoch: Optional[str]


class Approval(_ApprovalBase, total=False):
    """An approval the agent checks against its own state (verify_approval, consume_approval).
    ``interruptId``: the AG-UI interrupt it answers (approve(token, interrupt_id=...))."""
    messageId: str
    interruptId: str


class ApproveAccepted(TypedDict):
    ok: Literal[True]
    approval: Approval


ApproveResult = Union[ApproveAccepted, GuardRefusal]


class ResumeEntry(TypedDict):
    """An AG-UI RunAgentInput.resume entry answering an interrupt with an approval
    (SyncEngine.resume_entry()): payload is {approved: True, approval, **extra}."""
    interruptId: str
    status: Literal["resolved"]
    payload: Dict[str, Any]


ConsumeRefusalReason = Literal["changed", "invalid-token", "already-consumed", "missing"]


class ConsumedApproved(TypedDict):
    """consume_approval(): act, with ``effectKey`` as the effect's idempotency key."""
    ok: Literal[True]
    decision: Literal["approved"]
    replayed: bool
    effectKey: str


class ConsumedRefused(TypedDict):
    ok: Literal[False]
    decision: Literal["refused"]
    replayed: bool
    effectKey: None
    reason: ConsumeRefusalReason


ConsumedApproval = Union[ConsumedApproved, ConsumedRefused]


class OnceRecord(TypedDict):
    """What once() records for a key (Once.recorded()): the effect's result as JSON keeps it."""
    result: Any


# --- the emitter -----------------------------------------------------------------------


class _EditRequestBase(TypedDict):
    editId: str
    ops: List[JsonPatchOperation]


class EditRequest(_EditRequestBase, total=False):
    """One user edit as it travels in RunAgentInput.forwardedProps.stateSync.edits."""
    baseSeq: Optional[int]


class _EditResultBase(TypedDict):
    editId: str
    status: Literal["applied", "rejected"]


class EditResult(_EditResultBase, total=False):
    reason: EditReason
    seq: int


class AppliedEdits(TypedDict):
    """StateEmitter.apply_edits()."""
    events: List[StateEvent]
    results: List[EditResult]


class ClientWrite(TypedDict):
    """StateEmitter.provenance(): a pointer whose value a client edit wrote."""
    path: str
    writer: Literal["client"]
    origin: str
    seq: int


class EmitterStats(TypedDict):
    deltas: int
    snapshots: int
    digests: int
    repaired: int
    rejected: int
    replays: int
    replaySnapshots: int


class StoreStats(TypedDict):
    commits: int
    stateWrites: int
    conflicts: int
    reloads: int
    degradations: int
    recoveries: int
    degraded: bool


class DurableEmitterStats(EmitterStats):
    """DurableStateEmitter.stats(): EmitterStats plus what the store did."""
    store: StoreStats


class ActivityCatchUp(TypedDict):
    messageId: str
    mode: CatchUpMode


class _CatchUpBase(TypedDict):
    mode: CatchUpMode
    events: List[StateEvent]


class CatchUp(_CatchUpBase, total=False):
    """catch_up() / emitter.catch_up(): what to send a (re)connecting client first."""
    activities: List[ActivityCatchUp]


class ResyncPosition(TypedDict):
    """read_resync_request(): where the client says it is. ``activities``: its
    activity positions as they came (a list, or the header's text), or None."""
    lastSeq: Optional[int]
    epoch: Optional[str]
    reason: Optional[str]
    lastEventId: Optional[str]
    held: List[int]
    activities: Union[List[Any], str, None]


class PromptTruncation(TypedDict):
    path: str
    reason: Literal["string", "array", "depth", "budget", "key"]
    droppedBytes: int


class PromptRender(TypedDict):
    """render_state_for_prompt()."""
    text: str
    bytes: int
    truncated: List[PromptTruncation]
    untrustedPaths: List[str]


class PromptMessage(TypedDict):
    """prompt_message(): a lower-trust chat message for the agent's model."""
    role: Literal["user"]
    content: str


# --- stores (the records of stores/protocol.py's Store) -------------------------------


class StoreLine(TypedDict):
    """A new line: init(key, line), reset(key, expect, line). ``state`` is JSON text."""
    epoch: str
    seq: int
    state: str


class _StoredLineBase(TypedDict):
    epoch: str
    seq: int
    state: str
    events: List[str]


class StoredLine(_StoredLineBase, total=False):
    """load(key): the state's JSON text at stateSeq (default seq) and the log's
    JSON texts, oldest first, a consecutive run of seqs ending at seq."""
    stateSeq: int


class StoreHead(TypedDict):
    epoch: str
    seq: int


class StoredEvent(TypedDict):
    seq: int
    text: str
    snapshot: bool


class StoreWrite(TypedDict):
    """append(key, write): lands only if the key is still at baseSeq/epoch; ``state``
    None keeps the stored one (sent only to a store with incremental_state)."""
    baseSeq: int
    epoch: str
    state: Optional[str]
    events: List[StoredEvent]
    maxEvents: int
    maxBytes: int


class StoreAnswer(TypedDict):
    """init / append / reset: whether it landed (a lost race is ok False, never an error)."""
    ok: bool


class ClaimWon(TypedDict):
    ok: Literal[True]


class ClaimLost(TypedDict):
    ok: Literal[False]
    existing: str


ClaimResult = Union[ClaimWon, ClaimLost]
