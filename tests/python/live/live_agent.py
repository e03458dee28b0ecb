"""The agent of the live cross-language test (tests/python/live/server.py).

It yields the ag-ui-protocol SDK's own event classes, as LangGraphAgent.run()
does. Each thread holds a proposal {payee, amount} that the agent redrafts
over several runs; the last draft run ends with an interrupt asking a person
to approve it, and the run that resumes it verifies and consumes the approval
(consume_approval) and pays once (once()), against the agent's own
checkpoint, never against the state the client sent.

A run is a pure function of its runId and the checkpoint, so a run the client
re-sends after a cut yields the same states again: the server re-runs the
agent (a plain AG-UI server has no whole-stream resumption; that is the Node
proxy's job), which is exactly the case once() exists for.
"""

from __future__ import annotations

import random
from typing import Any, AsyncIterator, Dict, List

from ag_ui.core import (
    Interrupt,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

from agui_state_sync import consume_approval, memory_store, once

PAYEES = ["ACME Corp", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries"]
# Constant padding: a snapshot then costs more than a delta, so the emitter
# sends deltas and a cut mid-stream leaves the client with a gap to heal.
NOTES = "Quarterly vendor payment; the amount follows the signed quote. " * 12
DRAFT_STEPS = 5


class Thread:
    """What the server knows of one thread besides its emitter: the agent's
    checkpoint, every decision consume_approval gave, every call of the effect."""

    def __init__(self) -> None:
        self.checkpoint: Dict[str, Any] = {}
        self.decisions: List[Dict[str, Any]] = []
        self.payments: List[Dict[str, Any]] = []  # one entry per real run of the effect


class LiveAgent:
    def __init__(self) -> None:
        self.store = memory_store()
        self.threads: Dict[str, Thread] = {}

    def thread(self, thread_id: str) -> Thread:
        return self.threads.setdefault(thread_id, Thread())

    async def run(self, run_input: Dict[str, Any]) -> AsyncIterator[Any]:
        """The agent as a function of its (sequenced) RunAgentInput dict."""
        thread_id, run_id = run_input["threadId"], run_input["runId"]
        yield RunStartedEvent(thread_id=thread_id, run_id=run_id)
        resume = run_input.get("resume") or []
        steps = self._resume(thread_id, resume) if resume else self._draft(thread_id, run_id, run_input)
        async for event in steps:
            yield event
        props = run_input.get("forwardedProps") or {}
        if not resume and props.get("askApproval"):
            interrupt = Interrupt(id=f"approve-{run_id}", reason="approval", message="Pay this proposal?")
            yield RunFinishedEvent(thread_id=thread_id, run_id=run_id,
                                   outcome=RunFinishedInterruptOutcome(interrupts=[interrupt]))
        else:
            yield RunFinishedEvent(thread_id=thread_id, run_id=run_id)

    async def _draft(self, thread_id: str, run_id: str, run_input: Dict[str, Any]) -> AsyncIterator[Any]:
        """Redrafts the proposal: a STATE_SNAPSHOT at even steps (as LangGraph at
        a node exit), a STATE_DELTA of the agent's own ops at odd ones (as
        PydanticAI), chat text between them."""
        thread = self.thread(thread_id)
        rnd = random.Random(run_id)
        base = {**thread.checkpoint, "notes": NOTES, "round": run_id}
        for step in range(DRAFT_STEPS):
            proposal = {"payee": rnd.choice(PAYEES), "amount": rnd.randrange(100, 100000) / 100}
            for event in _say(f"{run_id}-{step}", f"Step {step}: proposing {proposal['payee']}. " * 4):
                yield event
            if step % 2 == 0:
                state = {**base, "proposal": proposal, "step": step}
                yield StateSnapshotEvent(snapshot=state)
            else:
                state = {**thread.checkpoint, "proposal": proposal, "step": step}
                yield StateDeltaEvent(delta=[{"op": "replace", "path": "/proposal", "value": proposal},
                                             {"op": "replace", "path": "/step", "value": step}])
            thread.checkpoint = state

    async def _resume(self, thread_id: str, resume: List[Dict[str, Any]]) -> AsyncIterator[Any]:
        """Acts on each approved interrupt: verified against the checkpoint and
        consumed once; the payment guarded by once() with the decision's key."""
        thread = self.thread(thread_id)
        for entry in resume:
            payload = entry.get("payload") if isinstance(entry.get("payload"), dict) else {}
            if entry.get("status") != "resolved" or payload.get("approved") is not True:
                continue
            held = thread.checkpoint
            decision = await consume_approval(payload.get("approval"), held, store=self.store,
                                              thread_id=thread_id, interrupt_id=entry.get("interruptId"))
            thread.decisions.append(decision)
            if not decision["ok"]:
                for event in _say(f"refused-{len(thread.decisions)}", f"Not paid: {decision['reason']}."):
                    yield event
                continue
            proposal = held.get("proposal")
            receipt = await once(self.store, decision["effectKey"])(lambda key: _pay(thread, key, proposal))
            thread.checkpoint = {**held, "proposal": None, "paid": receipt}
            yield StateSnapshotEvent(snapshot=thread.checkpoint)
            # A long confirmation: the resume's stream goes on well after the effect ran.
            for event in _say(f"paid-{decision['effectKey'][:8]}", f"Paid {receipt['payee']} {receipt['amount']}. " * 80):
                yield event


def _pay(thread: Thread, key: str, proposal: Any) -> Dict[str, Any]:
    """The effect: one call here is one payment (the test counts them)."""
    thread.payments.append({"key": key, "proposal": proposal})
    return {"payee": proposal["payee"], "amount": proposal["amount"], "ref": key[:16]}


def _say(message_id: str, text: str) -> List[Any]:
    chunks = [text[i:i + 40] for i in range(0, len(text), 40)]
    return [TextMessageStartEvent(message_id=message_id, role="assistant"),
            *(TextMessageContentEvent(message_id=message_id, delta=c) for c in chunks),
            TextMessageEndEvent(message_id=message_id)]
