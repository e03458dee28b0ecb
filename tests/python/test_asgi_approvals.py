"""StateSyncMiddleware checks and consumes approvals (issue 24, section 2;
_asgi_approvals.py) for an endpoint that cannot: a stale approval never
reaches it, a re-sent resume does not run it again, another approval for a
consumed interrupt is refused. The endpoint counts the effect it performs."""

from __future__ import annotations

import json

import pytest

from agui_state_sync import StateSyncMiddleware, effect_key, memory_store, state_digest

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

PROPOSAL = {"payee": "ACME", "amount": 120}


def make_app(effects, approval_store=None):
    async def agent(request: Request):
        run_input = await request.json()
        paid = bool(run_input.get("resume"))
        if paid:
            effects.append(run_input["runId"])  # the effect an approval authorizes

        async def stream():
            t, r = run_input["threadId"], run_input["runId"]
            yield f'data: {json.dumps({"type": "RUN_STARTED", "threadId": t, "runId": r})}\n\n'
            # the proposal a run asks for (forwardedProps.proposal: another tab's request to change it)
            proposal = (run_input.get("forwardedProps") or {}).get("proposal", PROPOSAL)
            yield f'data: {json.dumps({"type": "STATE_SNAPSHOT", "snapshot": {"proposal": proposal, "paid": paid}})}\n\n'
            yield f'data: {json.dumps({"type": "RUN_FINISHED", "threadId": t, "runId": r})}\n\n'
        return StreamingResponse(stream(), media_type="text/event-stream")

    app = starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])
    app.add_middleware(StateSyncMiddleware, paths=["/agent"], approval_store=approval_store)
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
        assert answer[-1]["code"] == "approval-stale" and effects == []


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


async def test_the_record_is_consume_approvals_and_a_refusal_records_nothing():
    effects, store = [], memory_store()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(effects, store)), base_url="http://test") as client:
        await post(client, run_input("r1"))
        stale = resume({**PROPOSAL, "amount": 1})
        assert (await post(client, run_input("r2", stale)))[-1]["code"] == "approval-stale"
        assert await store.peek("t", "i1") is None, "a refusal consumes nothing"
        entry = resume(PROPOSAL)
        await post(client, run_input("r3", entry))
        record = json.loads(await store.peek("t", "i1"))
        # the same key consume_approval gives: an agent behind the middleware may share the store
        assert record["effectKey"] == effect_key(entry[0]["payload"]["approval"], thread_id="t", interrupt_id="i1")
        assert effects == ["r3"]


async def test_malformed_resume_entries_are_refused_or_passed_never_a_crash():
    effects = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(effects)), base_url="http://test") as client:
        await post(client, run_input("r1"))
        no_digest = [{"interruptId": "i1", "status": "resolved", "payload": {"approved": True, "approval": {"path": "/proposal"}}}]
        assert (await post(client, run_input("r2", no_digest)))[-1]["code"] == "invalid-request"
        twice = resume(PROPOSAL) + resume(PROPOSAL)
        assert (await post(client, run_input("r3", twice)))[-1]["code"] == "invalid-request"
        assert effects == []
        no_payload = [{"interruptId": "i1", "status": "resolved"}, 7]  # not ours: the endpoint judges it
        await post(client, run_input("r4", no_payload))
        assert effects == ["r4"]


async def test_two_tabs_b_moves_the_proposal_after_a_approved_it():
    effects = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(effects)), base_url="http://test") as client:
        await post(client, run_input("a1"))  # tab A sees the proposal, its person approves it
        moved = {"payee": "Other Travel", "amount": 9000}
        await post(client, {**run_input("b1"), "forwardedProps": {"proposal": moved}})  # tab B changes it
        answer = await post(client, run_input("a2", resume(PROPOSAL)))
        assert answer[-1]["code"] == "approval-stale" and effects == []
        assert [e["snapshot"]["proposal"] for e in answer if e["type"] == "STATE_SNAPSHOT"] == [moved], "A's guard is shown B's proposal"
        await post(client, run_input("a3", resume(moved)))  # A approves what B made: paid once
        assert effects == ["a3"]


def make_activity_app(effects):
    """An agent whose run renders a checkout form as activity m1 (docs/wire.md section 11)."""
    async def agent(request: Request):
        run_input = await request.json()
        if run_input.get("resume"):
            effects.append(run_input["runId"])

        async def stream():
            t, r = run_input["threadId"], run_input["runId"]
            form = (run_input.get("forwardedProps") or {}).get("form", PROPOSAL)
            for event in ({"type": "RUN_STARTED", "threadId": t, "runId": r},
                          {"type": "STATE_SNAPSHOT", "snapshot": {"proposal": PROPOSAL}},
                          {"type": "ACTIVITY_SNAPSHOT", "messageId": "m1", "activityType": "checkout", "content": form},
                          {"type": "RUN_FINISHED", "threadId": t, "runId": r}):
                yield f"data: {json.dumps(event)}\n\n"
        return StreamingResponse(stream(), media_type="text/event-stream")

    app = starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])
    app.add_middleware(StateSyncMiddleware, paths=["/agent"])
    return app


def activity_resume(value, message_id="m1", interrupt_id="i1"):
    approval = {"path": "", "seq": 0, "digest": state_digest(value), "epoch": None, "messageId": message_id}
    return [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True, "approval": approval}}]


async def test_an_activity_approval_is_judged_against_the_threads_activity():
    effects = []
    app = make_activity_app(effects)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        await post(client, run_input("r1"))
        # The state's /proposal has the same value, but the approval names activity m9: none held.
        missing = await post(client, run_input("r2", activity_resume(PROPOSAL, "m9")))
        assert missing[-1]["code"] == "approval-stale" and "no activity m9" in missing[-1]["message"]
        moved = {**PROPOSAL, "amount": 1}
        stale = await post(client, run_input("r3", activity_resume(moved)))
        assert stale[-1]["code"] == "approval-stale" and effects == []
        ok = await post(client, run_input("r4", activity_resume(PROPOSAL)))
        assert ok[-1]["type"] == "RUN_FINISHED" and effects == ["r4"]
