"""A LangGraph agent served over AG-UI with agui-state-sync in-process.

The graph books a team offsite: `draft` proposes a payment, `chat` asks the
model to summarize it (the shared state goes into the prompt as one data
block), `approve` stops at interrupt() until a person approves, and `pay`
makes the payment once, only for an approval of the value the graph holds.

Runs with no API key: the model is a fake chat model (see `chat` for where
a real one goes). Run it: uvicorn app:app --port 8000 (README.md).
"""

from __future__ import annotations

from typing import Any, List, Optional

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import Annotated, TypedDict  # pydantic needs this TypedDict on Python < 3.12

from agui_state_sync import StateSyncMiddleware, consume_approval, memory_store, once, prompt_message

# Approval records and effect results. One process: memory. Several workers
# or restarts: redis_store("redis://...") so a re-sent resume meets the record.
STORE = memory_store()
PAYMENTS: List[dict] = []  # stands in for the payment provider's ledger


class State(TypedDict, total=False):
    messages: Annotated[List[Any], add_messages]
    proposal: dict          # {payee, amount}: what the person approves
    notes: str              # typed by the user in the UI: untrusted in the prompt
    decision: Optional[dict]
    paid: Optional[dict]


def draft(state: State) -> State:
    return {"proposal": {"payee": "ACME Travel", "amount": 1200}}


async def chat(state: State, config: RunnableConfig) -> State:
    # The state as one escaped, size-capped data block in a user-role message,
    # never json.dumps(state) in the system prompt: notes are the user's words.
    shared = prompt_message({"proposal": state.get("proposal"), "notes": state.get("notes", "")},
                            untrusted=["/notes"])
    model = GenericFakeChatModel(messages=iter([AIMessage(
        content=f"I propose paying {state['proposal']['amount']} to {state['proposal']['payee']}. Approve?")]))
    # A real model goes here instead, e.g. (pip install langchain-openai, OPENAI_API_KEY set):
    #   from langchain_openai import ChatOpenAI; model = ChatOpenAI(model="gpt-4o-mini")
    prompt = [SystemMessage(content="You book team offsites."), HumanMessage(content=shared["content"]),
              *state.get("messages", [])]
    return {"messages": [await model.ainvoke(prompt, config)]}


def approve(state: State) -> State:
    # On resume the node runs again from its start: nothing before interrupt() may act.
    answer = interrupt({"reason": "approval", "message": "Approve the payment?", "proposal": state["proposal"]})
    # The client's resume payload: {approved, approval} from its guard (StateSyncHttpAgent).
    return {"decision": answer if isinstance(answer, dict) else {"approved": bool(answer)}}


def send_payment(proposal: dict, idempotency_key: str, thread_id: str) -> dict:
    """The effect. A real provider takes the key too, for the crash once() cannot see."""
    PAYMENTS.append({**proposal, "key": idempotency_key, "threadId": thread_id})
    return {**proposal, "receipt": idempotency_key[:12]}


async def pay(state: State, config: RunnableConfig) -> State:
    decision = state.get("decision") or {}
    approval = decision.get("approval")
    if not decision.get("approved") or not isinstance(approval, dict):
        return {"paid": None}  # a bare "yes" proves nothing about which value was seen
    held = {k: v for k, v in state.items() if k != "messages"}  # the graph's own state, not the client's
    thread_id = config["configurable"]["thread_id"]
    verdict = await consume_approval(approval, held, store=STORE, thread_id=thread_id)
    if not verdict["ok"]:  # 'changed': the proposal moved since the person saw it
        return {"paid": None}
    # once(): a retried node or a resume sent twice gets the first receipt, not a second payment.
    receipt = await once(STORE, verdict["effectKey"])(lambda key: send_payment(state["proposal"], key, thread_id))
    return {"paid": receipt}


def build_graph():
    graph = StateGraph(State)
    nodes = [("draft", draft), ("chat", chat), ("approve", approve), ("pay", pay)]
    for name, node in nodes:
        graph.add_node(name, node)
    for a, b in zip([START] + [n for n, _ in nodes], [n for n, _ in nodes] + [END]):
        graph.add_edge(a, b)
    return graph.compile(checkpointer=MemorySaver())  # interrupt() needs a checkpointer


def make_app(state_sync: bool = True) -> FastAPI:
    app = FastAPI()
    # emit_interrupt_outcome: the interrupt arrives as RUN_FINISHED's outcome, what the guard binds to.
    agent = LangGraphAgent(name="offsite", graph=build_graph(), emit_interrupt_outcome=True,
                           emit_raw_events=False)  # RAW copies of every event would double the bytes
    add_langgraph_fastapi_endpoint(app, agent, "/agent")

    @app.get("/state")
    async def own_state(threadId: str) -> dict:  # noqa: N803 (AG-UI's spelling)
        """What the graph itself holds for a thread (its checkpoint) and the payments made
        for it: what examples/heal.mjs compares the client's healed state with."""
        snapshot = await agent.graph.aget_state({"configurable": {"thread_id": threadId}})
        held = {k: v for k, v in (snapshot.values or {}).items() if k != "messages"}
        return {"state": held, "payments": [p for p in PAYMENTS if p["threadId"] == threadId]}
    if state_sync:  # the one line: seq/epoch/digest on state events, catch-ups, approvals checked
        app.add_middleware(StateSyncMiddleware, paths=["/agent"])
    return app


app = make_app()                         # uvicorn app:app
unchanged = make_app(state_sync=False)   # uvicorn app:unchanged, behind agui-state-sync-proxy
