"""redis_store() on a real redis-server: the same Lua bytes as Node (pinned
SHA1s, as tests/js/redis-scripts.test.mjs pins them), consume_approval and
once() records, and a Node redisStore and a Python redis_store sharing them."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import uuid

import pytest

from agui_state_sync import AguiSyncError, consume_approval, effect_key, once, redis_store, state_digest
from agui_state_sync.stores.lua import SCRIPTS, script_text
from conftest import REPO
from redis_support import redis_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio
NODE = shutil.which("node")
SCRIPT_SHA1 = {
    "append": "f0a09f002fec29bbee80941aab8a85e9c2181911",
    "claim": "73774fcc2d5f7e4e7f4d40cbca021873848ad7e4",
    "init": "cd5afdf889abd01159d06f3cdda1d4213f49990f",
    "load": "c164f87e47ebdb907c9ae7abceeb8727ff9b7b8e",
    "release": "e876afdcebb60a802b548226f5062f38af226366",
    "reset": "be99eab3a82568914a08f206572091aa04501457",
}


def test_each_script_assembles_to_the_bytes_node_sends():
    assert set(SCRIPTS) == set(SCRIPT_SHA1)
    for name, sha in SCRIPT_SHA1.items():
        assert hashlib.sha1(script_text(name).encode("utf-8")).hexdigest() == sha, name


def node(script: str, *args: str) -> str:
    """Runs an ES module script with the npm package's server entry as `server`."""
    exports = json.loads((REPO / "js" / "package.json").read_text())["exports"]["./server"]
    entry = REPO / "js" / (exports["default"] if isinstance(exports, dict) else exports)
    code = f"const server = await import({json.dumps(entry.as_uri())});\n{script}"
    done = subprocess.run([NODE, "--input-type=module", "-e", code, *args], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_records_and_the_thread_contract_on_redis(redis_url):  # noqa: F811
    store = redis_store(redis_url, prefix=f"t{uuid.uuid4().hex[:6]}:")
    try:
        assert await store.claim("s", "i", "v1") == {"ok": True}
        assert await store.claim("s", "i", "v2") == {"ok": False, "existing": "v1"}
        assert await store.peek("s", "i") == "v1" and await store.peek("s", "x") is None
        assert await store.release("s", "i", "v2") is False and await store.release("s", "i", "v1") is True
        line = {"epoch": "e", "seq": 0, "state": '{"a":1}'}
        assert await store.init("k", line) == {"ok": True} and await store.init("k", line) == {"ok": False}
        event = {"seq": 1, "snapshot": False, "text": '{"type":"STATE_DELTA"}'}
        write = {"baseSeq": 0, "epoch": "e", "state": None, "events": [event], "maxEvents": 10, "maxBytes": 1 << 20}
        assert await store.append("k", write) == {"ok": True} and await store.append("k", write) == {"ok": False}
        assert await store.head("k") == {"seq": 1, "epoch": "e"}
        loaded = await store.load("k")
        assert loaded == {"seq": 1, "epoch": "e", "stateSeq": 0, "state": '{"a":1}', "events": [event["text"]]}
    finally:
        await store.close()


async def test_once_and_consume_approval_on_redis(redis_url):  # noqa: F811
    store = redis_store(redis_url)
    calls = []
    try:
        key = f"pay-{uuid.uuid4().hex}"
        assert await once(store, key)(lambda k: calls.append(k) or {"id": 7}) == {"id": 7}
        assert await once(store, key)(lambda k: calls.append(k)) == {"id": 7} and calls == [key]
        approval = {"path": "/p", "seq": 1, "digest": "sha256:x", "epoch": "e"}
        answer = await consume_approval(approval, {}, store=store, thread_id="t")
        assert answer["reason"] == "changed"  # the digest is not the state's: nothing recorded
    finally:
        await store.close()


async def test_an_unreachable_redis_is_store_unavailable():
    store = redis_store("redis://127.0.0.1:1", timeout_ms=200)
    with pytest.raises(AguiSyncError) as caught:
        await store.peek("s", "i")
    assert caught.value.code == "store-unavailable"
    await store.close()


async def test_close_is_final_and_leaves_no_connection(redis_url):  # noqa: F811
    """As Node's: a call after close() (a run's late write as its server shuts
    down) is 'store-unavailable' and opens no connection (redis-py's pool would)."""
    admin = redis_store(redis_url, prefix="admin:")
    client = await admin.client()

    async def connections() -> int:
        return len(await client.client_list())

    try:
        before = await connections()  # the admin's own, and any a fixture holds
        store = redis_store(redis_url, prefix=f"t{uuid.uuid4().hex[:6]}:")
        unwatch = store.watch("k", lambda: None)
        assert await store.head("k") is None
        assert await connections() > before
        await store.close()
        for late in (store.head("k"), store.claim("s", "i", "v"), store.peek("s", "i")):
            with pytest.raises(AguiSyncError) as caught:
                await late
            assert caught.value.code == "store-unavailable"
        store.watch("k2", lambda: None)()  # a watch after close subscribes nowhere
        unwatch()
        assert await connections() == before
    finally:
        await admin.close()


@pytest.mark.skipif(NODE is None, reason="node not installed")
async def test_node_and_python_share_approval_and_once_records(redis_url):  # noqa: F811
    thread, key = f"t-{uuid.uuid4().hex[:8]}", f"k-{uuid.uuid4().hex[:8]}"
    state = {"proposal": {"payee": "alice"}}
    digest = state_digest({"payee": "alice"})  # the same C++ as Node's (the wire vectors pin it)
    approval = {"path": "/proposal", "seq": 3, "digest": digest, "epoch": "e", "interruptId": "int-1"}
    # Node consumes the approval and runs the effect under once().
    out = node("const store = server.redisStore({ url: process.argv[1] });"
               "const [approval, state, thread, key] = JSON.parse(process.argv[2]);"
               "const a = await server.consumeApproval(approval, state, { store, threadId: thread });"
               "const r = await server.once(store, key, (k) => ({ paidWith: k }));"
               "process.stdout.write(JSON.stringify([a, r])); await store.close();",
               redis_url, json.dumps([approval, state, thread, key]))
    node_answer, node_result = json.loads(out)
    assert node_answer["ok"] and not node_answer["replayed"]
    store = redis_store(redis_url)
    try:
        # Python sees Node's decision as a replay with the same effect key, and Node's recorded result.
        again = await consume_approval(approval, {"proposal": {"payee": "mallory"}}, store=store, thread_id=thread)
        assert again == {**node_answer, "replayed": True}
        assert again["effectKey"] == effect_key(approval, thread_id=thread, interrupt_id="int-1")
        assert await once(store, key)(lambda k: pytest.fail("the effect ran twice")) == node_result == {"paidWith": key}
    finally:
        await store.close()
