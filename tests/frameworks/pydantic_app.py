"""A PydanticAI v2 agent served by AGUIAdapter.dispatch_request, unchanged,
on a FunctionModel (a scripted model: no LLM, no key) with StateDeps.

The script: set the proposal {payee, amount}, add sections to a growing
document (tools that change state and return it as a STATE_SNAPSHOT, or as
a JSON Patch STATE_DELTA: ``variant``), then call ``pay``, a tool with
requires_approval=True; once approved, ``pay`` runs and the model says a few
words. The content depends on ``state.seed``. ``EFFECTS`` counts the runs of
``pay``'s body per thread: the effect an approval must cause once; ``TOOL_CALLS``
counts the runs of every tool's body per thread: side effects a run replayed
from its start would repeat.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, AsyncIterator, List, Optional

from ag_ui.core import EventType, StateDeltaEvent, StateSnapshotEvent
from fastapi import FastAPI, Request
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter

EFFECTS: Counter = Counter()  # thread_id -> payments made
TOOL_CALLS: Counter = Counter()  # thread_id -> tool bodies run (set_proposal, add_section, pay)
STATES: dict = {}  # thread_id -> the agent's own state after its last tool
SECTIONS = 5
REPLY = ["Paid ", "as ", "approved, ", "thank ", "you."]


class Proposal(BaseModel):
    payee: str = ""
    amount: int = 0


class Payments(BaseModel):
    seed: int = 1
    proposal: Proposal = Proposal()
    document: List[str] = []
    paid: Optional[Proposal] = None


def _section(seed: int, i: int) -> str:
    # Long enough that a whole-state snapshot costs far more than a change.
    return f"Section {i} (seed {seed}): " + ("terms and conditions of the offsite booking. " * (3 + (seed + i) % 4))


def _returned(messages: List[ModelMessage]) -> List[str]:
    """The tools that returned so far, in order: where the script stands."""
    return [part.tool_name for m in messages if isinstance(m, ModelRequest)
            for part in m.parts if isinstance(part, ToolReturnPart)]


def _next_tool(done: List[str]) -> Optional[str]:
    if "set_proposal" not in done:
        return "set_proposal"
    if done.count("add_section") < SECTIONS:
        return "add_section"
    return None if "pay" in done else "pay"


async def script(messages: List[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The model: one tool call per turn until ``pay`` returned, then the reply."""
    done = _returned(messages)
    tool = _next_tool(done)
    if tool is None:
        for word in REPLY:
            yield word
        return
    yield {0: DeltaToolCall(name=tool, json_args="{}", tool_call_id=f"call-{tool}-{len(done)}")}


def make_agent(variant: str) -> Agent:
    agent = Agent(FunctionModel(stream_function=script), deps_type=StateDeps[Payments],
                  output_type=[str, DeferredToolRequests])

    def changed(ctx: RunContext[StateDeps[Payments]], ops: List[dict]) -> Any:
        # The tool has already changed ctx.deps.state; what goes out is the variant's event.
        TOOL_CALLS[ctx.deps.thread_id] += 1  # every tool ends here: its side effect counted
        STATES[ctx.deps.thread_id] = ctx.deps.state.model_dump()
        if variant == "delta":
            return StateDeltaEvent(type=EventType.STATE_DELTA, delta=ops)
        return StateSnapshotEvent(type=EventType.STATE_SNAPSHOT, snapshot=ctx.deps.state.model_dump())

    @agent.tool
    async def set_proposal(ctx: RunContext[StateDeps[Payments]]) -> Any:
        state = ctx.deps.state
        state.proposal = Proposal(payee=f"ACME-{state.seed}", amount=100 + state.seed)
        return changed(ctx, [{"op": "replace", "path": "/proposal", "value": state.proposal.model_dump()}])

    @agent.tool
    async def add_section(ctx: RunContext[StateDeps[Payments]]) -> Any:
        state = ctx.deps.state
        state.document.append(_section(state.seed, len(state.document)))
        ops = [{"op": "add", "path": "/document/-", "value": state.document[-1]}]
        if len(state.document) == 3:  # a revision halfway, as agents do
            state.proposal.amount += 10 * (1 + state.seed % 3)
            ops.append({"op": "replace", "path": "/proposal/amount", "value": state.proposal.amount})
        return changed(ctx, ops)

    @agent.tool(requires_approval=True)
    async def pay(ctx: RunContext[StateDeps[Payments]]) -> Any:
        state = ctx.deps.state
        EFFECTS[ctx.deps.thread_id] += 1  # the effect: must happen once per approval
        state.paid = state.proposal.model_copy()
        return changed(ctx, [{"op": "add", "path": "/paid", "value": state.paid.model_dump()}])

    return agent


class Deps(StateDeps[Payments]):
    """StateDeps plus the thread (for the effect counter)."""
    thread_id: str = ""


def make_app(variant: str = "snapshot", path: str = "/agent") -> FastAPI:
    if variant not in ("snapshot", "delta"):
        raise ValueError("variant is 'snapshot' or 'delta'")
    app = FastAPI()
    agent = make_agent(variant)

    @app.post(path)
    async def run(request: Request) -> Any:
        body = json.loads(await request.body())
        deps = Deps(state=Payments())  # fresh per request: the adapter sets deps.state from the input
        deps.thread_id = str(body.get("threadId") or "")
        return await AGUIAdapter.dispatch_request(request, agent=agent, deps=deps)

    return app


def framework_state(thread_id: str) -> Any:
    """The agent's own state of a thread after its last tool (PydanticAI keeps none between requests)."""
    return STATES.get(thread_id)


def effects(thread_id: str) -> int:
    return EFFECTS[thread_id]


def tool_calls(thread_id: str) -> int:
    return TOOL_CALLS[thread_id]
