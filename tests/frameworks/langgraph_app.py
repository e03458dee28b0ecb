"""A LangGraph graph served by ag-ui-langgraph, unchanged: plain nodes write a
proposal {payee, amount} and a growing document, a fake chat model (no LLM,
no key) streams one reply, one node calls interrupt() for approval, and the
node after it "pays" (the effect the tests count).

The content depends on ``state["seed"]`` so that every seed sends other
bytes, and the proposal's amount on the person's request when it names one
(a second tab edits the request to move the proposal). The effect counter lives in ``EFFECTS`` (thread -> count): the tests
read it through the tap (tap.py) to check that an approval acts once. A test
can hold a thread's effect (``hold``): ``pay`` then waits, before it acts,
until the test releases it, so that a client can be cut while the approved
run is surely still going.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Any, Dict, List, Optional

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from langchain_core.runnables import RunnableConfig
from typing_extensions import Annotated, TypedDict  # pydantic needs this one on Python < 3.12

EFFECTS: Counter = Counter()  # thread_id -> payments made
HOLDS: Dict[str, asyncio.Event] = {}  # thread_id -> set once the test releases the held effect
WAITING: Counter = Counter()  # thread_id -> runs of pay waiting at the hold now
PARAGRAPHS = 6


class State(TypedDict, total=False):
    messages: Annotated[List[Any], add_messages]
    seed: int
    proposal: dict
    document: List[str]
    decision: Optional[dict]
    paid: Optional[dict]


def _seed(state: State) -> int:
    return int(state.get("seed") or 1)


def _paragraph(seed: int, i: int) -> str:
    # Long enough that a whole-state snapshot costs far more than a change.
    return f"Section {i} (seed {seed}): " + ("terms and conditions of the offsite booking. " * (3 + (seed + i) % 4))


def _requested_amount(state: State) -> Optional[int]:
    # The person's latest request may name the amount ("... a payment of 250 ..."): a tab that edits the
    # request (ag-ui-langgraph forks the thread at an edited message, even one paused at interrupt())
    # moves the proposal.
    for message in reversed(state.get("messages") or []):
        if isinstance(message, HumanMessage):
            match = re.search(r"\bof (\d+)\b", str(message.content))
            return int(match.group(1)) if match else None
    return None


def draft(state: State) -> State:
    seed = _seed(state)
    amount = _requested_amount(state)
    return {"proposal": {"payee": f"ACME-{seed}", "amount": 100 + seed if amount is None else amount},
            "document": [_paragraph(seed, 0)]}


def write(state: State) -> State:
    seed = _seed(state)
    document = list(state.get("document") or [])
    for i in range(len(document), PARAGRAPHS):
        document.append(_paragraph(seed, i))
    return {"document": document}


def revise(state: State) -> State:
    seed = _seed(state)
    proposal = dict(state["proposal"])
    proposal["amount"] = proposal["amount"] + 10 * (1 + seed % 3)
    return {"proposal": proposal, "document": [*state["document"], f"Revised amount: {proposal['amount']}"]}


async def chat(state: State, config: RunnableConfig) -> State:
    seed = _seed(state)
    text = f"I drafted a payment of {state['proposal']['amount']} to {state['proposal']['payee']} (seed {seed}), " \
           "please approve it before I pay."
    model = GenericFakeChatModel(messages=iter([AIMessage(content=text)]))
    reply = await model.ainvoke([HumanMessage(content="summarize")], config)
    return {"messages": [reply]}


def approve(state: State) -> State:
    # Re-run from its start on resume: nothing before interrupt() may act.
    answer = interrupt({"reason": "approval", "message": "Approve the payment?", "proposal": state["proposal"]})
    return {"decision": answer if isinstance(answer, dict) else {"approved": bool(answer)}}


async def pay(state: State, config: RunnableConfig) -> State:
    decision = state.get("decision") or {}
    if not decision.get("approved"):
        return {"paid": None}
    thread_id = config["configurable"]["thread_id"]
    held = HOLDS.get(thread_id)
    if held is not None:  # a test holds the effect: wait for its release
        WAITING[thread_id] += 1
        try:
            await held.wait()
        finally:
            WAITING[thread_id] -= 1
    EFFECTS[thread_id] += 1  # the effect: must happen once per approval
    return {"paid": {"payee": state["proposal"]["payee"], "amount": state["proposal"]["amount"]},
            "document": [*state["document"], "Paid."]}


def build_graph():
    graph = StateGraph(State)
    for name, node in [("draft", draft), ("write", write), ("revise", revise), ("chat", chat),
                       ("approve", approve), ("pay", pay)]:
        graph.add_node(name, node)
    graph.add_edge(START, "draft")
    for a, b in [("draft", "write"), ("write", "revise"), ("revise", "chat"), ("chat", "approve"),
                 ("approve", "pay"), ("pay", END)]:
        graph.add_edge(a, b)
    return graph.compile(checkpointer=MemorySaver())


def make_app(path: str = "/agent") -> FastAPI:
    app = FastAPI()
    graph = build_graph()
    agent = LangGraphAgent(name="payments", graph=graph, emit_raw_events=False, emit_interrupt_outcome=True)
    add_langgraph_fastapi_endpoint(app, agent, path)
    app.state.graph = graph
    return app


async def framework_state(app: FastAPI, thread_id: str) -> Any:
    """The graph's own state of a thread, from its checkpointer (what the next run starts from)."""
    snapshot = await app.state.graph.aget_state({"configurable": {"thread_id": thread_id}})
    values = dict(snapshot.values or {})
    values.pop("messages", None)
    return values


async def framework_progress(app: FastAPI, thread_id: str) -> Any:
    """Where the graph stands on a thread: the nodes still to run ([] once it completed) and the
    interrupts it is paused at (0 once resumed past interrupt())."""
    snapshot = await app.state.graph.aget_state({"configurable": {"thread_id": thread_id}})
    return {"next": list(snapshot.next), "interrupts": sum(len(task.interrupts) for task in snapshot.tasks),
            "waiting": WAITING[thread_id]}


def hold(thread_id: str, on: bool) -> None:
    """on: the thread's next payments wait before they act; off: they go on (the waiting ones too)."""
    if on:
        HOLDS.setdefault(thread_id, asyncio.Event())
    elif thread_id in HOLDS:
        HOLDS.pop(thread_id).set()


def effects(thread_id: str) -> int:
    return EFFECTS[thread_id]
