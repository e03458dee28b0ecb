"""Smoke test of examples/langgraph and examples/pydantic-ai (make frameworks-test):
each app imported as an adopter would run it, driven in-process over httpx's
ASGI transport (no network, no LLM): a run to the approval interrupt, the
client's engine converges, its guard approves, the resume pays once, and the
same resume sent again pays nothing more. Then the apps without the
middleware (what the proxy would front), on their own checks: a stale
approval pays nothing (consume_approval), a resume sent twice pays once."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

import httpx
import pytest

from agui_state_sync import SyncEngine, state_digest

HERE = Path(__file__).resolve().parent
PROPOSAL = {"payee": "ACME Travel", "amount": 1200}


def load(folder: str):
    # By path: "pydantic-ai" is no module name. Registered in sys.modules
    # first, because LangGraph resolves the State annotations through it.
    name = "example_" + folder.replace("-", "_")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / folder / "app.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def events(body: bytes):
    return [json.loads(line[6:]) for line in body.decode().split("\n") if line.startswith("data: ")]


def fold(messages, evs):
    """The chat history a client keeps from a run's events (PydanticAI resumes
    from the messages the client sends, LangGraph from its checkpointer)."""
    out, by_id, calls = list(messages), {}, {}
    for e in evs:
        kind = e["type"]
        if kind == "TEXT_MESSAGE_START":
            by_id[e["messageId"]] = {"id": e["messageId"], "role": "assistant", "content": ""}
            out.append(by_id[e["messageId"]])
        elif kind == "TEXT_MESSAGE_CONTENT" and e["messageId"] in by_id:
            by_id[e["messageId"]]["content"] += e["delta"]
        elif kind == "TOOL_CALL_START":
            calls[e["toolCallId"]] = {"id": e["toolCallId"], "type": "function",
                                      "function": {"name": e["toolCallName"], "arguments": ""}}
            by_id[e["parentMessageId"]].setdefault("toolCalls", []).append(calls[e["toolCallId"]])
        elif kind == "TOOL_CALL_ARGS":
            calls[e["toolCallId"]]["function"]["arguments"] += e["delta"]
        elif kind == "TOOL_CALL_RESULT":
            out.append({"id": e["messageId"], "role": "tool", "toolCallId": e["toolCallId"], "content": e["content"]})
    return out


async def run_to_interrupt(client, thread_id):
    """First run: returns the request body, the client's engine, its events and the interrupt."""
    body = {"threadId": thread_id, "runId": f"{thread_id}-1", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "u1", "role": "user", "content": "Book the offsite."}]}
    response = await client.post("/agent", json=body)
    assert response.status_code == 200, response.text
    engine = SyncEngine(now=lambda: 0.0)  # a fixed clock: the guard's staleness never depends on timing
    engine.feed(response.content)
    evs = events(response.content)
    assert evs[-1]["type"] == "RUN_FINISHED" and evs[-1]["outcome"]["type"] == "interrupt", evs[-1]
    return body, engine, evs, evs[-1]["outcome"]["interrupts"][0]


def resume_body(body, engine, evs, interrupt, approval, run):
    """The resume a StateSyncHttpAgent sends: guard.resumeEntry(approval) (docs/wire.md section 7)."""
    entry = {"interruptId": interrupt["id"], "status": "resolved",
             "payload": {"approved": True, "approval": {**approval, "interruptId": interrupt["id"]}}}
    return {**body, "runId": f"{body['threadId']}-{run}", "state": engine.state,
            "messages": fold(body["messages"], evs), "resume": [entry]}


def client_for(app):
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://example")


@pytest.mark.parametrize("folder", ["langgraph", "pydantic-ai"])
def test_a_run_converges_and_the_approval_pays_once(folder):
    example = load(folder)

    async def scenario():
        async with client_for(example.app) as client:
            body, engine, evs, interrupt = await run_to_interrupt(client, f"{folder}-synced")
            assert engine.status == "synced" and engine.state["proposal"] == PROPOSAL
            approved = engine.approve(engine.view("/proposal")["token"])
            assert approved["ok"], approved
            resume = resume_body(body, engine, evs, interrupt, approved["approval"], 2)
            paid_before = len(example.PAYMENTS)
            response = await client.post("/agent", json=resume)
            engine.feed(response.content)
            assert events(response.content)[-1]["type"] == "RUN_FINISHED"
            assert engine.status == "synced" and engine.state["paid"]["amount"] == PROPOSAL["amount"]
            assert len(example.PAYMENTS) == paid_before + 1
            again = await client.post("/agent", json=resume)  # a client that lost the answer sends it again
            assert events(again.content)[-1]["type"] == "RUN_FINISHED"
            assert len(example.PAYMENTS) == paid_before + 1, "the re-sent resume paid again"

    asyncio.run(scenario())


@pytest.mark.parametrize("folder", ["langgraph", "pydantic-ai"])
def test_without_the_middleware_the_app_refuses_a_stale_approval(folder):
    example = load(folder)

    async def scenario():
        async with client_for(example.unchanged) as client:
            body, engine, evs, interrupt = await run_to_interrupt(client, f"{folder}-stale")
            # Unsequenced here (the proxy would number it), so the approval is made by
            # hand: the person saw another amount than the agent holds.
            stale = {"path": "/proposal", "seq": 1, "epoch": None, "digest": state_digest({**PROPOSAL, "amount": 900})}
            paid_before = len(example.PAYMENTS)
            response = await client.post("/agent", json=resume_body(body, engine, evs, interrupt, stale, 2))
            assert response.status_code == 200
            assert len(example.PAYMENTS) == paid_before, "a stale approval paid"

    asyncio.run(scenario())


@pytest.mark.parametrize("folder", ["langgraph", "pydantic-ai"])
def test_without_the_middleware_a_resume_sent_twice_pays_once(folder):
    example = load(folder)

    async def scenario():
        async with client_for(example.unchanged) as client:
            body, engine, evs, interrupt = await run_to_interrupt(client, f"{folder}-twice")
            approval = {"path": "/proposal", "seq": 1, "epoch": None, "digest": state_digest(PROPOSAL)}
            resume = resume_body(body, engine, evs, interrupt, approval, 2)
            paid_before = len(example.PAYMENTS)
            for _ in range(2):  # the app's own record and once(): the second gets the first receipt
                response = await client.post("/agent", json=resume)
                assert events(response.content)[-1]["type"] == "RUN_FINISHED", events(response.content)[-1]
            assert len(example.PAYMENTS) == paid_before + 1

    asyncio.run(scenario())
