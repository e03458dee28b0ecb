"""A user's program against agui_state_sync's public API, as a newcomer would
write it: checked with ``mypy --strict`` (it must have no error: no "Returning
Any" from approve(), consume_approval()'s effectKey or once()) and run, by
tests/python/test_typing.py. It only uses what the package exports: its
functions, its classes and the shapes in ``agui_state_sync.types``.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, List, Optional

from agui_state_sync import (
    AguiSyncError,
    AguiSyncTypeError,
    DurableStateEmitter,
    StateEmitter,
    StateSyncMiddleware,
    SyncEngine,
    catch_up,
    consume_approval,
    effect_key,
    memory_store,
    once,
    prompt_message,
    read_resync_request,
    render_state_for_prompt,
    sequence_state,
    verify_approval,
)
from agui_state_sync.stores import MemoryStore, RecordStore, RedisStore, Store
from agui_state_sync.types import (
    ActivityWrite,
    AguiEvent,
    Approval,
    CatchUp,
    ClaimResult,
    ConsumedApproval,
    DurableEmitterStats,
    ErrorCode,
    GuardReason,
    Outcome,
    PromptMessage,
    PromptRender,
    ResumeEntry,
    ResyncPosition,
    ResyncReason,
    StateEvent,
    StateSnapshotEvent,
    StoreAnswer,
    StoredLine,
    StoreHead,
    StoreLine,
    StoreWrite,
    ViewToken,
)


# --- a store of one's own, checked against the contract (the Store Protocol) -----------
class DictStore:
    """A toy store in a dict: what a user writes for their own database."""

    def __init__(self) -> None:
        self.lines: Dict[str, StoredLine] = {}
        self.records: Dict[str, str] = {}

    async def load(self, key: str) -> Optional[StoredLine]:
        return self.lines.get(key)

    async def init(self, key: str, line: StoreLine) -> StoreAnswer:
        if key in self.lines:
            return {"ok": False}
        self.lines[key] = {"epoch": line["epoch"], "seq": line["seq"], "state": line["state"], "events": []}
        return {"ok": True}

    async def append(self, key: str, write: StoreWrite) -> StoreAnswer:
        line = self.lines.get(key)
        if line is None or line["seq"] != write["baseSeq"] or line["epoch"] != write["epoch"]:
            return {"ok": False}
        events = [*line["events"], *(e["text"] for e in write["events"])][-write["maxEvents"]:]
        state = line["state"] if write["state"] is None else write["state"]
        self.lines[key] = {"epoch": line["epoch"], "seq": write["events"][-1]["seq"], "state": state, "events": events}
        return {"ok": True}

    async def head(self, key: str) -> Optional[StoreHead]:
        line = self.lines.get(key)
        return None if line is None else {"epoch": line["epoch"], "seq": line["seq"]}

    async def reset(self, key: str, expect: StoreHead, line: StoreLine) -> StoreAnswer:
        return {"ok": False}

    async def claim(self, scope: str, id: str, value: str, ttl_ms: int = 0) -> ClaimResult:  # noqa: A002
        name = f"{scope}/{id}"
        if name in self.records:
            return {"ok": False, "existing": self.records[name]}
        self.records[name] = value
        return {"ok": True}

    async def peek(self, scope: str, id: str) -> Optional[str]:  # noqa: A002
        return self.records.get(f"{scope}/{id}")


MY_STORE: Store = DictStore()  # mypy checks DictStore against the Protocol here
MY_RECORDS: RecordStore = MY_STORE
# Any store consume_approval() and once() take: the package's stores are RecordStores too.
Records = RecordStore


def the_package_stores(memory: MemoryStore, redis: RedisStore) -> List[Store]:
    return [memory, redis]  # mypy checks MemoryStore and RedisStore against the Protocol here


# --- the functions whose answers were Any before ------------------------------------------
def approved(engine: SyncEngine, token: ViewToken, interrupt_id: str) -> Approval:
    result = engine.approve(token, interrupt_id=interrupt_id)
    if not result["ok"]:
        reason: GuardReason = result["reason"]
        raise RuntimeError(f"not approvable: {reason}")
    return result["approval"]


async def key_of(approval: Approval, state: Any, store: Records, thread_id: str) -> str:
    decision: ConsumedApproval = await consume_approval(approval, state, store=store, thread_id=thread_id)
    if not decision["ok"]:
        raise RuntimeError(f"refused: {decision['reason']}")
    return decision["effectKey"]


async def pay(key: str) -> Dict[str, str]:
    return {"receipt": f"paid:{key[:8]}"}


async def pay_once(store: Records, key: str) -> Dict[str, str]:
    return await once(store, key, pay)


async def pay_once_curried(store: Records, key: str) -> Dict[str, str]:
    return await once(store, key)(pay)


def retry_later(error: AguiSyncError) -> bool:
    code: ErrorCode = error.code
    return code in ("store-unavailable", "run-active")


def resync_reasons(outcomes: List[Outcome]) -> List[ResyncReason]:
    return [o["reason"] for o in outcomes if o["kind"] == "resync"]


# --- an agent for sequence_state, and an ASGI app for the middleware -------------------------
async def agent(run_input: Dict[str, Any]) -> AsyncIterator[Dict[str, Any]]:
    thread, run = run_input["threadId"], run_input["runId"]
    yield {"type": "RUN_STARTED", "threadId": thread, "runId": run}
    yield {"type": "STATE_SNAPSHOT", "snapshot": {"order": {"amount": 42}}}
    yield {"type": "RUN_FINISHED", "threadId": thread, "runId": run}


async def app(scope: Dict[str, Any], receive: Any, send: Any) -> None:
    return None


async def main() -> None:
    store = memory_store()

    # An emitter, a receiver fed its bytes, and the approval guard.
    emitter = StateEmitter(initial_state={"order": {"amount": 42}})
    engine = SyncEngine()
    outcomes: List[Outcome] = []
    for event in emitter.update({"order": {"amount": 42, "currency": "EUR"}}):
        outcomes += engine.feed(emitter.encode(event))
    assert engine.status == "synced" and not resync_reasons(outcomes), outcomes
    view = engine.view("/order")
    assert view["ok"], view
    approval = approved(engine, view["token"], "interrupt-1")
    entry: ResumeEntry = engine.resume_entry(approval, {"note": "ok"})
    assert entry["interruptId"] == "interrupt-1" and entry["payload"]["approved"] is True
    assert verify_approval(approval, emitter.state)
    assert len(effect_key(approval, thread_id="t1")) == 64

    # Act on it once: the package's memory store, and one's own.
    key = await key_of(approval, emitter.state, store, "t1")
    assert await pay_once(store, key) == await pay_once_curried(store, key) == await pay(key)
    assert (await key_of(approval, emitter.state, MY_RECORDS, "t1")) == key
    assert await pay_once(MY_RECORDS, key) == {"receipt": f"paid:{key[:8]}"}

    # Catch-ups and where a client says it is.
    where: ResyncPosition = read_resync_request({"headers": {"X-AGUI-State-Seq": "0"}})
    answer: CatchUp = catch_up(emitter, {"headers": {"X-AGUI-State-Seq": "0"}})
    assert where["lastSeq"] == 0 and answer["mode"] in ("replay", "snapshot")

    # A prompt.
    rendered: PromptRender = render_state_for_prompt(emitter.state, untrusted=["/order"])
    message: PromptMessage = prompt_message(emitter.state)
    assert rendered["untrustedPaths"] == ["/order"] and message["role"] == "user"

    # A store-bound emitter (its own store), then one on a store of one's own.
    durable: DurableStateEmitter = await StateEmitter.open(store=store, key="t2", initial_state={})
    events: List[StateEvent] = await durable.update({"n": 1})
    assert events and durable.seq >= 1
    snapshot: StateSnapshotEvent = await durable.snapshot()
    assert snapshot["type"] == "STATE_SNAPSHOT" and snapshot["snapshot"] == {"n": 1}
    stats: DurableEmitterStats = durable.stats()
    assert stats["store"]["commits"] >= 1 and not stats["store"]["degraded"]

    # Its activities, stored with the thread: each write returns once the store holds it.
    plan: List[AguiEvent] = await durable.activities.snapshot("plan-1", "plan", {"steps": ["draft"]})
    assert plan and plan[0]["type"] == "ACTIVITY_SNAPSHOT"
    delta = {"type": "ACTIVITY_DELTA", "messageId": "plan-1", "activityType": "plan",
             "patch": [{"op": "add", "path": "/steps/-", "value": "send"}]}
    written: ActivityWrite = await durable.activities.write(delta)
    assert written["dropped"] is None and written["error"] is None, written
    assert durable.activities.content("plan-1") == {"steps": ["draft", "send"]}
    mine: DurableStateEmitter = await StateEmitter.open(store=MY_STORE, key="t3", initial_state={})
    await mine.update({"n": 2})
    assert MY_STORE is not None and (await MY_STORE.head("t3")) is not None

    # sequence_state and the middleware.
    run_input = {"threadId": "t4", "runId": "r1", "state": {}, "messages": [], "tools": [], "context": [],
                 "forwardedProps": {}}
    sent: List[AguiEvent] = [event async for event in sequence_state(agent, run_input)]
    assert any(e["type"] == "STATE_SNAPSHOT" for e in sent)
    framed: List[bytes] = [chunk async for chunk in sequence_state(agent, {**run_input, "threadId": "t5"}, sse=True)]
    assert all(chunk.endswith(b"\n\n") for chunk in framed)
    middleware = StateSyncMiddleware(app, paths=["/agent"], store=store)
    assert middleware.stats() is not None

    # Errors: a value JSON cannot hold.
    try:
        emitter.update({"raw": b"bytes"})
    except AguiSyncTypeError as error:
        assert isinstance(error, TypeError) and error.code == "invalid-argument"
        assert not retry_later(error)


if __name__ == "__main__":
    asyncio.run(main())
    print("sample_user: ok")
