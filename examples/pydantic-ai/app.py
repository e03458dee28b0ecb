"""A PydanticAI agent served over AG-UI with agui-state-sync in-process.

The agent books a team offsite: `set_proposal` (a state tool) writes the
payment it proposes, `pay` (requires_approval=True) stops the run until a
person approves, and pays once, only for an approval of the value the agent
itself last sent. The shared state reaches the model through the
instructions, as one data block.

Runs with no API key: the model is a FunctionModel that follows a script
(see `agent = Agent(...)` for where a real one goes).
Run it: uvicorn app:app --port 8000 (README.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, List, Optional

from ag_ui.core import EventType, StateSnapshotEvent
from fastapi import FastAPI, Request
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter

from agui_state_sync import StateSyncMiddleware, consume_approval, memory_store, once, prompt_message

# Approval records and effect results. One process: memory. Several workers
# or restarts: redis_store("redis://...") so a re-sent resume meets the record.
STORE = memory_store()
PAYMENTS: List[dict] = []  # stands in for the payment provider's ledger
# thread -> the state this agent last sent. PydanticAI keeps none between
# requests and sets deps.state from the request, i.e. from the client: an
# approval is checked against what the agent said, never what the client says.
SENT: Dict[str, dict] = {}


class Proposal(BaseModel):
    payee: str = ""
    amount: int = 0


class Offsite(BaseModel):
    proposal: Proposal = Proposal()
    notes: str = ""            # typed by the user in the UI: untrusted in the prompt
    paid: Optional[dict] = None


@dataclass
class Deps(StateDeps[Offsite]):
    thread_id: str = ""
    approved: Dict[str, str] = field(default_factory=dict)  # tool_call_id -> effect key of a verified approval


async def script(messages: List[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The fake model: propose, then pay, then say so (one step per turn)."""
    done = [p.tool_name for m in messages if isinstance(m, ModelRequest)
            for p in m.parts if isinstance(p, ToolReturnPart)]
    if "set_proposal" not in done:
        yield {0: DeltaToolCall(name="set_proposal", json_args='{"payee": "ACME Travel", "amount": 1200}',
                                tool_call_id="call-propose")}
    elif "pay" not in done:
        yield {0: DeltaToolCall(name="pay", json_args="{}", tool_call_id="call-pay")}
    else:
        yield "Paid, as approved."


# A real model instead of FunctionModel: Agent("openai:gpt-4o-mini", ...) with OPENAI_API_KEY set.
agent = Agent(FunctionModel(stream_function=script), deps_type=Deps,
              output_type=[str, DeferredToolRequests])  # DeferredToolRequests: a run may stop for approval


@agent.instructions
def shared_state(ctx: RunContext[Deps]) -> str:
    # The state as one escaped, size-capped data block, never json.dumps(state):
    # notes are the user's words, marked untrusted so the model treats them as data.
    return prompt_message(ctx.deps.state.model_dump(), untrusted=["/notes"])["content"]


def sent(ctx: RunContext[Deps]) -> StateSnapshotEvent:
    """Remember what the agent holds and send it (AGUIAdapter emits a tool's returned event)."""
    SENT[ctx.deps.thread_id] = ctx.deps.state.model_dump()
    return StateSnapshotEvent(type=EventType.STATE_SNAPSHOT, snapshot=SENT[ctx.deps.thread_id])


@agent.tool
async def set_proposal(ctx: RunContext[Deps], payee: str, amount: int) -> StateSnapshotEvent:
    ctx.deps.state.proposal = Proposal(payee=payee, amount=amount)
    return sent(ctx)


def send_payment(proposal: dict, idempotency_key: str, thread_id: str) -> dict:
    """The effect. A real provider takes the key too, for the crash once() cannot see."""
    PAYMENTS.append({**proposal, "key": idempotency_key, "threadId": thread_id})
    return {**proposal, "receipt": idempotency_key[:12]}


@agent.tool(requires_approval=True)
async def pay(ctx: RunContext[Deps]) -> Any:
    key = ctx.deps.approved.get(ctx.tool_call_id)
    if key is None:  # a bare {"approved": true} proves nothing about which value was seen
        return "Not paid: the approval was not verified against the proposal."
    proposal = SENT[ctx.deps.thread_id]["proposal"]  # the value the approval was verified against
    # once(): a resume sent twice, or a retried run, gets the first receipt, not a second payment.
    ctx.deps.state.paid = await once(STORE, key)(lambda k: send_payment(proposal, k, ctx.deps.thread_id))
    return sent(ctx)


async def consume_approvals(run_input: dict) -> Dict[str, str]:
    """Each resume entry's approval (StateSyncHttpAgent puts it in payload.approval),
    checked against what the agent sent and recorded once: tool_call_id -> effect key.
    PydanticAI hands a tool only approved/denied, so this runs before the adapter."""
    thread_id, approved = str(run_input.get("threadId") or ""), {}
    for entry in run_input.get("resume") or []:
        approval, interrupt_id = (entry.get("payload") or {}).get("approval"), entry.get("interruptId")
        if entry.get("status") != "resolved" or not isinstance(approval, dict) or not isinstance(interrupt_id, str) \
                or not interrupt_id or thread_id not in SENT:
            continue  # nothing verifiable: pay() refuses
        verdict = await consume_approval(approval, SENT[thread_id], store=STORE, thread_id=thread_id,
                                         interrupt_id=interrupt_id)
        if verdict["ok"]:  # else 'changed' or 'already-consumed': pay() refuses
            approved[interrupt_id.removeprefix("int-")] = verdict["effectKey"]  # PydanticAI's id: "int-" + call id
    return approved


def make_app(state_sync: bool = True) -> FastAPI:
    app = FastAPI()

    @app.post("/agent")
    async def run(request: Request) -> Any:
        run_input = json.loads(await request.body())  # Starlette caches it: the adapter reads it again
        deps = Deps(state=Offsite(), thread_id=str(run_input.get("threadId") or ""),
                    approved=await consume_approvals(run_input))
        return await AGUIAdapter.dispatch_request(request, agent=agent, deps=deps)

    @app.get("/state")
    async def own_state(threadId: str) -> dict:  # noqa: N803 (AG-UI's spelling)
        """What the agent last sent for a thread (the state it acts on) and the payments
        made for it: what examples/heal.mjs compares the client's healed state with."""
        return {"state": SENT.get(threadId), "payments": [p for p in PAYMENTS if p["threadId"] == threadId]}

    if state_sync:  # the one line: seq/epoch/digest on state events, catch-ups, approvals checked
        app.add_middleware(StateSyncMiddleware, paths=["/agent"])
    return app


app = make_app()                         # uvicorn app:app
unchanged = make_app(state_sync=False)   # uvicorn app:unchanged, behind agui-state-sync-proxy
