"""StateSyncMiddleware checks and consumes approvals (issue 24, section 2;
_asgi_approvals.py) for an endpoint that cannot: a stale approval never
reaches it, a re-sent resume does not run it again, another approval for a
consumed interrupt is refused. The endpoint counts the effect it performs."""

from __future__ import annotations

import json

import pytest

from agui_state_sync import StateSyncMiddleware, state_digest

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

PROPOSAL = {"payee": "ACME", "amount": 120}


def make_app(effects):
    async def agent(request: Request):
        run_input = await request.json()
        paid = bool(run_input.get("resume"))
        if paid:
            effects.append(run_input["runId"])  # the effect an approval authorizes

        async def stream():
            t, r = run_input["threadId"], run_input["runId"]
            yield f'data: {json.dumps({"type": "RUN_STARTED", "threadId": t, "runId": r})}\n\n'
            yield f'data: {json.dumps({"type": "STATE_SNAPSHOT", "snapshot": {"proposal": PROPOSAL, "paid": paid}})}\n\n'
            yield f'data: {json.dumps({"type": "RUN_FINISHED", "threadId": t, "runId": r})}\n\n'
        return StreamingResponse(stream(), media_type="text/event-stream")

    app = starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])
    app.add_middleware(StateSyncMiddleware, paths=["/agent"])
    return app


def run_input(run_id, resume=None):
    body = {"threadId": "t", "runId": run_id, "state": {}, "messages": [], "tools": [], "context": [], "forwardedProps": {}}
    return {**body, "resume": resume} if resume is not None else body


def events(text):
    return [json.loads(line[6:]) for line in text.split("\n") if line.startswith("data: ")]


def resume(value, interrupt_id="i1"):
    approval = {"path": "/proposal", "seq": 1, "digest": state_digest(value), "epoch": None}
    return [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True, "approval": approval}}]


async def post(client, body):
    return events((await client.post("/agent", json=body)).text)


async def test_a_stale_approval_never_reaches_the_endpoint():
    effects = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(effects)), base_url="http://test") as client:
        await post(client, run_input("r1"))
        answer = await post(client, run_input("r2", resume({**PROPOSAL, "amount": 100})))
        assert answer[0]["type"] == "RUN_STARTED" and answer[-1]["type"] == "RUN_ERROR"
        assert answer[-1]["code"] == "changed" and effects == []


async def test_a_resume_sent_again_acts_once_and_another_approval_is_refused():
    effects = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(effects)), base_url="http://test") as client:
        await post(client, run_input("r1"))
        first = await post(client, run_input("r2", resume(PROPOSAL)))
        again = await post(client, run_input("r2", resume(PROPOSAL)))
        later = await post(client, run_input("r3", resume(PROPOSAL)))
        assert effects == ["r2"], "the endpoint acted once"
        assert first[-1]["type"] == "RUN_FINISHED" and again[-1]["type"] == "RUN_FINISHED" and later[-1]["type"] == "RUN_FINISHED"
        other = await post(client, run_input("r4", resume({"payee": "ACME", "amount": 120, "note": "x"})))
        assert other[-1]["code"] == "already-consumed" and effects == ["r2"]


async def test_resume_entries_without_our_approval_pass_unchecked():
    effects = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(effects)), base_url="http://test") as client:
        plain = [{"interruptId": "i1", "status": "resolved", "payload": {"approved": True}}]
        await post(client, run_input("r1", plain))
        await post(client, run_input("r2", plain))
        assert effects == ["r1", "r2"]
