"""The trust boundary in StateSyncMiddleware (issue 38, SECURITY.md): the
wrapped app answers 401 unless ``Authorization: Bearer alice``. Mallory knows
alice's threadId: a bogus approval, edits and a copy of alice's approval get
403 and change nothing; the app never sees them. Alice, with the same
credentials on another connection, edits and approves once. Hostile bodies
(too large, nested too deep) get 413 and 400, never an exception."""

from __future__ import annotations

import json

import pytest

from agui_state_sync import StateSyncMiddleware, memory_store, state_digest

pytestmark = pytest.mark.anyio
httpx = pytest.importorskip("httpx")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

ALICE = {"authorization": "Bearer alice"}
MALLORY = {"authorization": "Bearer mallory"}
PAYEE = "alice-payee"


def make_app(seen, effects, approvals=None, **options):
    async def agent(request: Request):
        run_input = await request.json()
        seen.append(run_input["runId"])
        if request.headers.get("authorization") != ALICE["authorization"]:
            return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"www-authenticate": "Bearer"})
        if run_input.get("resume"):
            effects.append(run_input["runId"])
        payee = (run_input.get("state") or {}).get("payee", PAYEE)

        async def stream():
            ids = {"threadId": run_input["threadId"], "runId": run_input["runId"]}
            yield f'data: {json.dumps({"type": "RUN_STARTED", **ids})}\n\n'
            yield f'data: {json.dumps({"type": "STATE_SNAPSHOT", "snapshot": {"payee": payee}})}\n\n'
            yield f'data: {json.dumps({"type": "RUN_FINISHED", **ids})}\n\n'
        return StreamingResponse(stream(), media_type="text/event-stream")

    app = starlette_apps.Starlette(routes=[Route("/agent", agent, methods=["POST"])])
    app.add_middleware(StateSyncMiddleware, paths=["/agent"], approval_store=approvals or memory_store(), **options)
    return app


def run_input(run_id, **extra):
    return {"threadId": "t", "runId": run_id, "state": {}, "messages": [], "tools": [], "context": [],
            "forwardedProps": {}, **extra}


def approval(value):
    entry = {"path": "/payee", "seq": 1, "digest": state_digest(value), "epoch": None}
    return [{"interruptId": "pay", "status": "resolved", "payload": {"approved": True, "approval": entry}}]


def edits(payee, base_seq=None):
    return {"stateSync": {"edits": [{"editId": f"c1:{payee}", "baseSeq": base_seq,
                                     "ops": [{"op": "replace", "path": "/payee", "value": payee}]}]}}


def client_of(app):
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def assert_refused(response):
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not-authorized"
    assert PAYEE not in response.text


async def test_mallory_reads_writes_and_consumes_nothing_and_alice_approves_once():
    seen, effects = [], []
    async with client_of(make_app(seen, effects)) as client:
        first = await client.post("/agent", json=run_input("r0"), headers=ALICE)
        assert first.status_code == 200 and PAYEE in first.text
        before = list(seen)
        assert_refused(await client.post("/agent", json=run_input("r1", resume=approval("nobody")), headers=MALLORY))
        assert_refused(await client.post("/agent", json=run_input("r3", resume=approval(PAYEE)), headers=MALLORY))
        assert_refused(await client.post("/agent", json=run_input("r3", resume=approval(PAYEE))))
        assert seen == before and effects == [], "the app never saw them"
        # Her edits are not applied: the app gets her own state, and its 401 reaches her.
        edited = await client.post("/agent", json=run_input("r2", forwardedProps=edits("mallory")), headers=MALLORY)
        assert edited.status_code == 401 and PAYEE not in edited.text
        view = await client.post("/agent", json=run_input("r2b"), headers=ALICE)
        assert PAYEE in view.text and "mallory" not in view.text, "alice's state is hers"
        genuine = await client.post("/agent", json=run_input("r4", resume=approval(PAYEE)), headers=ALICE)
        assert genuine.status_code == 200 and effects == ["r4"], "alice's approved action ran"
        again = await client.post("/agent", json=run_input("r5", resume=approval(PAYEE)), headers=ALICE)
        assert again.status_code == 200 and effects == ["r4"], "once"
        seq = max(int(line[4:]) for line in again.text.split("\n") if line.startswith("id: "))
        mine = await client.post("/agent", json=run_input("r6", state={"payee": PAYEE}, forwardedProps=edits("bob", seq)),
                                 headers=ALICE)
        assert mine.status_code == 200 and '"bob"' in mine.text, "alice's edit applies"


async def test_a_refused_plain_run_passes_the_apps_answer_and_creates_nothing():
    seen, effects = [], []
    store = memory_store()
    app = make_app(seen, effects, store)
    async with client_of(app) as client:
        refused = await client.post("/agent", json=run_input("r1"), headers=MALLORY)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert refused.json() == {"error": "unauthorized"}
        # the same requester's approval is still refused: a 401 grants nothing
        assert_refused(await client.post("/agent", json=run_input("r2", resume=approval(PAYEE)), headers=MALLORY))


async def test_the_authorize_option_only_true_authorizes():
    seen, effects = [], []

    def authorize(kind, thread_id, headers):
        return headers.get("authorization") == "Bearer bob" or None

    async with client_of(make_app(seen, effects, authorize=authorize)) as client:
        await client.post("/agent", json=run_input("r0"), headers=ALICE)
        assert_refused(await client.post("/agent", json=run_input("r1", resume=approval("x")), headers=MALLORY))
        bob = await client.post("/agent", json=run_input("r2", resume=approval("nobody")), headers={"authorization": "Bearer bob"})
        assert bob.status_code == 200 and "approval-stale" in bob.text, "bob may read the verdict: the hook said so"


async def test_hostile_bodies_get_a_status_not_an_exception():
    seen, effects = [], []
    async with client_of(make_app(seen, effects, max_body_bytes=1024)) as client:
        big = await client.post("/agent", content=b"{" + b" " * 4096 + b"}", headers={"content-type": "application/json"})
        assert big.status_code == 413
        deep = b'{"threadId":"t","x":' + b"[" * 100000 + b"]" * 100000 + b"}"
    async with client_of(make_app(seen, effects, max_body_bytes=1 << 20)) as client:
        answer = await client.post("/agent", content=deep, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "limit-exceeded"
        assert seen == []


async def test_a_thread_id_naming_the_librarys_own_keys_is_refused_before_anything():
    # A threadId names the thread's store key; a key starting with a NUL is the library's own
    # (a thread's activity record): no requester may name it, and nothing of it changes.
    from agui_state_sync import StateEmitter, _core
    seen, effects = [], []
    store = memory_store()
    victim = await StateEmitter.open(store=store, key="victim")
    await victim.activities.snapshot("m1", "form", {"payee": PAYEE})
    record_key = _core.activity_record_key("victim")
    before = await store.load(record_key)
    async with client_of(make_app(seen, effects, store, store=store)) as client:
        body = run_input("r1") | {"threadId": record_key}
        answer = await client.post("/agent", json=body, headers=ALICE)
    assert answer.status_code == 400 and answer.json()["code"] == "invalid-request"
    assert PAYEE not in answer.text
    assert seen == [] and effects == []
    assert await store.load(record_key) == before
    victim.dispose()
