"""Run logs in Redis (issue 39, item 2): StateSyncMiddleware keeps each run's
log in its redis_store() in the Node proxy's format (stores/run_log.py), so
any instance serves any run, and a run whose holder died ends with RUN_ERROR
run-lost. The run scripts are the bytes the Node proxy sends (one copy, js/src/proxy/lua/,
shipped in the wheel). Every instance here is a separate ASGI app on one real redis-server,
served by uvicorn on 127.0.0.1 (a client's cut is a closed socket); the
backend is a plain AG-UI agent whose runs stop mid-run until the test
releases them (run_store_support.Backend). Nothing waits on the clock: each
test waits for an outcome, with a deadline; leases and grace periods are
short only where a test is about their expiry.

- a client cut from instance A resumes on instance B byte for byte, follows
  the run live to its end, and A answers the same resume with the same bytes;
  the stored log holds exactly those bytes, in the Node proxy's encoding;
- GET X-AGUI-Attach on B joins A's run; a POST of the same runId on B joins it
  too, and the agent ran once;
- a holder killed (SIGKILL: its renewals stop, its tasks are gone) gives
  RUN_ERROR run-lost to its clients on B; a holder whose lease is lost ends its
  own clients' streams with the store's run-lost and stops the agent;
- an abort asked on B reaches the holder, whether or not B serves the run;
  anyone else's abort is a 404 and the run goes on;
- a requester the backend did not accept is refused (403) on B and gets nothing;
- the holder's grace period waits for its clients at B; B drops a copy nobody
  reads there for grace_ms (the run goes on), and a later client gets a fresh one;
- a stored log trimmed to max_run_events is resumed on B as 'lost' from before
  it (exact from within it) and expires grace_ms after the run; a store that
  cannot be reached when a run starts leaves its log in memory, the run goes on;
- with a Node proxy on the same Redis: a run the Node proxy holds is resumed
  (and attached) through the Python instance byte for byte, a run Python holds
  is resumed through the Node proxy byte for byte, and an abort asked at one
  reaches the other's holder (one requester digest in both languages).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from redis_support import redis_url  # noqa: F401 - the fixture
from run_store_support import (NODE, Backend, NodeProxy, Served, close_instance, frames, has, instance, read,
                               run_input, start_holder_process, until)

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
pytestmark = pytest.mark.anyio

ALICE = {"authorization": "Bearer alice"}
MALLORY = {"authorization": "Bearer mallory"}


def prefix() -> str:
    return f"rl{uuid.uuid4().hex[:8]}:"


class Fleet:
    """Instances A and B (separate middlewares, separate uvicorn servers) over one backend."""

    def __init__(self, redis_url: str, **options) -> None:  # noqa: F811
        self.backend = Backend()
        self.prefix = prefix()
        self.redis_url = redis_url
        self.options = options
        self.served = []

    async def start(self, count: int = 2):
        for _ in range(count):
            self.served.append(await Served(instance(self.backend, self.redis_url, self.prefix, **self.options)).start())
        return self

    def __getitem__(self, i: int) -> Served:
        return self.served[i]

    async def close(self) -> None:
        self.backend.release_all()
        await asyncio.gather(*(served.stop() for served in self.served))
        await asyncio.gather(*(close_instance(served.app) for served in self.served))


@pytest.fixture
async def fleet(redis_url):  # noqa: F811
    made = []

    async def make(count: int = 2, **options) -> Fleet:
        made.append(await Fleet(redis_url, **options).start(count))
        return made[-1]
    yield make
    for f in made:
        await f.close()


@pytest.fixture
async def http():
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def raw(redis_url: str):  # noqa: F811
    import redis.asyncio as aioredis
    return aioredis.Redis.from_url(redis_url, decode_responses=True)


async def stored_log(redis_url: str, prefix_: str, key: str):  # noqa: F811
    """The stored log of run ``key``, read with a plain Redis client: ([(n, fields)], meta)."""
    from agui_state_sync.stores._layout import run_base
    client = await raw(redis_url)
    try:
        base = run_base(prefix_, key)
        entries = await client.xrange(f"{base}:log", "-", "+")
        meta = await client.hgetall(f"{base}:meta")
        return [(int(i.split("-")[0]), fields) for i, fields in entries], meta
    finally:
        await client.aclose()


RUN_SCRIPTS = ("run-open", "run-append", "run-renew", "run-lose", "run-read", "run-abort")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_run_scripts_are_the_bytes_the_node_proxy_sends():
    import json
    import subprocess
    from agui_state_sync.stores.lua import RUN_LUA_DIR, script_text
    from conftest import REPO
    code = ("const { scriptText } = await import(process.argv[1]);\n"
            "const dir = new URL(process.argv[2]);\n"
            "const out = {};\n"
            f"for (const name of {json.dumps(list(RUN_SCRIPTS))}) out[name] = await scriptText(name, dir);\n"
            "process.stdout.write(JSON.stringify(out));")
    scripts = REPO / "js" / "src" / "server" / "store" / "redis-scripts.js"
    done = subprocess.run([NODE, "--input-type=module", "-e", code, scripts.as_uri(),
                           (REPO / "js" / "src" / "proxy" / "lua").as_uri() + "/"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    node = json.loads(done.stdout)
    assert {name: script_text(name, RUN_LUA_DIR) for name in RUN_SCRIPTS} == node  # as installed in the wheel


async def test_a_client_cut_from_a_resumes_on_b_byte_for_byte(fleet, http, redis_url):  # noqa: F811
    f = await fleet()
    a, b = f[0], f[1]
    first = await read(http, "POST", a.url, body=run_input("t-exact", "run-exact"), headers=ALICE,
                       cut=has("TEXT_MESSAGE_CONTENT"))
    assert first.status == 200 and not first.ended
    last = first.last_id
    key, n = last.split(":")[0], int(last.split(":")[1])
    # B serves the rest: what was sent after the id, as it was, then the run live (released once B's preamble is in).
    resumed = await read(http, "GET", b.url, headers={**ALICE, "last-event-id": last},
                         on_data=lambda text: f.backend.release("t-exact"))
    assert resumed.status == 200 and resumed.headers["x-agui-resume"] == "exact" and resumed.ended
    assert resumed.events[-1]["type"] == "RUN_FINISHED"
    # A, the holder, answers the same resume after the run: the same events, byte for byte.
    on_a = await read(http, "GET", a.url, headers={**ALICE, "last-event-id": last})
    assert on_a.headers["x-agui-resume"] == "exact"
    assert frames(resumed.text) == frames(on_a.text)
    numbers = [int(frame.split("\n")[0].split(":")[2]) for frame in frames(resumed.text)]
    assert numbers == list(range(n + 1, n + 1 + len(numbers)))  # every event after the id, each once, in order
    # The stored log: every event either client got, those bytes, in the Node proxy's encoding.
    entries, meta = await stored_log(redis_url, f.prefix, key)
    stored = {i: fields["t"] for i, fields in entries}
    for frame in frames(first.text) + frames(resumed.text):
        assert stored[int(frame.split("\n")[0].split(":")[2])] == frame
    assert meta["status"] == "finished" and meta["threadId"] == "t-exact" and meta["runId"] == "run-exact"
    assert int(meta["lastN"]) == len(entries) == n + len(frames(resumed.text))
    flags = {i: fields["f"] for i, fields in entries}
    assert flags[1] == "r" and flags[len(entries)] == "t" and set(fields["q"] for _, fields in entries) - {""}
    assert f.backend.runs["t-exact"] == 1


async def test_an_attach_on_b_joins_a_run_and_a_post_of_its_run_id_does_too(fleet, http):
    f = await fleet()
    a, b = f[0], f[1]
    texts = []
    starter = asyncio.ensure_future(read(http, "POST", a.url, body=run_input("t-attach", "run-attach"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("RUN_STARTED")(texts[-1]), "the run to start on A (its log in the store)")
    attached, again = [], []
    watching = asyncio.ensure_future(read(http, "GET", b.url, headers={**ALICE, "x-agui-attach": "t-attach"},
                                          on_data=lambda text: attached.append(text)))
    rejoined = asyncio.ensure_future(read(http, "POST", b.url, body=run_input("t-attach", "run-attach"), headers=ALICE,
                                          on_data=lambda text: again.append(text)))
    await until(lambda: attached and again and has("TEXT_MESSAGE_CONTENT")(attached[-1]) and has("TEXT_MESSAGE_CONTENT")(again[-1]),
                "both B clients to have the run's text")
    f.backend.release("t-attach")
    on_a, on_b, posted = await asyncio.gather(starter, watching, rejoined)
    assert on_b.headers["x-agui-attach"] == "run" and on_b.headers["x-agui-resume"] == "caught-up"
    types = [e["type"] for e in on_b.events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED" and types.count("RUN_STARTED") == 1
    text = "".join(e.get("delta", "") for e in on_b.events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Planning the offsite: venue first, then flights."
    # The same runId posted on B: the run joined from its start (not the agent run again), as the starter got it.
    assert posted.headers["x-agui-resume"] == "exact" and frames(posted.text) == frames(on_a.text)
    assert f.backend.runs["t-attach"] == 1


async def test_a_killed_holder_gives_run_lost_on_b(fleet, http, redis_url):  # noqa: F811
    lease = 900  # the test is about the lease's expiry
    f = await fleet(1, run_lease_ms=lease)
    b = f[0]
    holder, url = start_holder_process(redis_url, f.prefix, lease, 30000)
    try:
        first = await read(http, "POST", url, body=run_input("t-kill", "run-kill"), headers=ALICE,
                           cut=has("TEXT_MESSAGE_CONTENT"))
        texts = []
        on_b = asyncio.ensure_future(read(http, "GET", b.url, headers={**ALICE, "last-event-id": first.last_id},
                                          on_data=texts.append))
        await until(lambda: texts, "B's preamble")
        holder.kill()  # its renewals stop, its tasks are gone: the lease expires in Redis
        holder.wait()
        resumed = await on_b
    finally:
        holder.kill()
        holder.wait()
    assert resumed.ended and resumed.headers["x-agui-resume"] == "exact"
    # One RUN_ERROR run-lost, last (written to the store by B, which found the lease expired), and no RUN_FINISHED.
    assert [e.get("code") for e in resumed.events if e["type"] in ("RUN_ERROR", "RUN_FINISHED")] == ["run-lost"]
    assert resumed.events[-1]["type"] == "RUN_ERROR"
    entries, meta = await stored_log(redis_url, f.prefix, first.last_id.split(":")[0])
    assert meta["status"] == "lost" and entries[-1][1]["t"] == frames(resumed.text)[-1]
    # Another client coming back later gets the same end.
    late = await read(http, "GET", b.url, headers={**ALICE, "last-event-id": first.last_id})
    assert frames(late.text) == frames(resumed.text)


async def test_a_holder_whose_lease_is_lost_ends_its_clients_with_the_stores_run_lost(fleet, http, redis_url):  # noqa: F811
    f = await fleet(1, run_lease_ms=900)
    a = f[0]
    texts = []
    starter = asyncio.ensure_future(read(http, "POST", a.url, body=run_input("t-lease", "run-lease"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("TEXT_MESSAGE_CONTENT")(texts[-1]), "the run's text")
    key = frames(texts[-1])[0].split("\n")[0][len("id: "):].split(":")[0]
    from agui_state_sync.stores._layout import run_base
    client = await raw(redis_url)
    try:
        await client.delete(f"{run_base(f.prefix, key)}:lease")  # as if this instance had stalled past its lease
    finally:
        await client.aclose()
    ended = await starter
    assert ended.ended and ended.events[-1]["type"] == "RUN_ERROR" and ended.events[-1]["code"] == "run-lost"
    assert "instance that held the run" in ended.events[-1]["message"]  # the store's event, as Node writes it
    entries, meta = await stored_log(redis_url, f.prefix, key)
    assert meta["status"] == "lost" and entries[-1][1]["t"] == frames(ended.text)[-1]
    await until(lambda: f.backend.stopped["t-lease"] == 1, "the agent to be stopped")


async def test_an_abort_asked_on_b_reaches_the_holder(fleet, http):
    f = await fleet(run_lease_ms=900)  # the holder sees an abort at its next renewal (every lease / 3)
    a, b = f[0], f[1]
    # B serves none of the run's clients: the abort is asked of the holder through the store.
    texts = []
    starter = asyncio.ensure_future(read(http, "POST", a.url, body=run_input("t-abort", "run-abort"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("RUN_STARTED")(texts[-1]), "the run to start on A (its log in the store)")
    refused = await http.post(b.url, headers={**MALLORY, "x-agui-abort": "run-abort"})
    assert refused.status_code == 404 and refused.json() == {"aborted": False}
    asked = await http.post(b.url, headers={**ALICE, "x-agui-abort": "run-abort"})
    assert asked.status_code == 202 and asked.json() == {"aborted": True}
    aborted = await starter
    assert [e.get("code") for e in aborted.events if e["type"] == "RUN_ERROR"] == ["run-aborted"]
    await until(lambda: f.backend.stopped["t-abort"] == 1, "the agent to be stopped")
    # B serves a client of the run (a followed copy): the abort goes through it, and reaches both clients.
    texts.clear()
    starter = asyncio.ensure_future(read(http, "POST", a.url, body=run_input("t-abort2", "run-abort2"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("TEXT_MESSAGE_CONTENT")(texts[-1]), "the run's text")
    seen = []
    follower = asyncio.ensure_future(read(http, "GET", b.url, headers={**ALICE, "x-agui-attach": "t-abort2"},
                                          on_data=seen.append))
    await until(lambda: seen and has("TEXT_MESSAGE_CONTENT")(seen[-1]), "B's attached client to have the text")
    assert (await http.post(b.url, headers={**MALLORY, "x-agui-abort": "run-abort2"})).status_code == 404
    assert (await http.post(b.url, headers={**ALICE, "x-agui-abort": "run-abort2"})).status_code == 202
    for stream in await asyncio.gather(starter, follower):
        assert stream.ended and stream.events[-1]["type"] == "RUN_ERROR" and stream.events[-1]["code"] == "run-aborted"
    assert f.backend.runs["t-abort2"] == 1 and (await http.post(b.url, headers={**ALICE, "x-agui-abort": "nope"})).status_code == 404


async def test_a_requester_the_backend_did_not_accept_is_refused_on_b(fleet, http):
    f = await fleet()
    a, b = f[0], f[1]
    first = await read(http, "POST", a.url, body=run_input("t-trust", "run-trust"), headers=ALICE,
                       cut=has("TEXT_MESSAGE_CONTENT"))
    for request in ({"method": "GET", "headers": {**MALLORY, "last-event-id": first.last_id}},
                    {"method": "POST", "headers": {**MALLORY, "last-event-id": first.last_id},
                     "body": run_input("t-trust", "run-trust")},
                    {"method": "GET", "headers": {**MALLORY, "x-agui-attach": "t-trust"}}):
        refused = await read(http, request["method"], b.url, body=request.get("body"), headers=request["headers"])
        assert refused.status == 403 and refused.headers["content-type"] == "application/json", request
        assert '"not-authorized"' in refused.text and "data:" not in refused.text and frames(refused.text) == []
    # The starter, accepted by the backend at A, is served at B (the grant is in the store).
    texts = []
    resumed = asyncio.ensure_future(read(http, "GET", b.url, headers={**ALICE, "last-event-id": first.last_id},
                                         on_data=texts.append))
    await until(lambda: texts, "B's preamble")
    f.backend.release("t-trust")
    assert (await resumed).events[-1]["type"] == "RUN_FINISHED"
    assert f.backend.runs["t-trust"] == 1


async def test_the_holders_grace_period_waits_for_its_clients_at_b(fleet, http):
    f = await fleet(grace_ms=300)  # the test is about the grace period's end
    a, b = f[0], f[1]
    first = await read(http, "POST", a.url, body=run_input("t-grace", "run-grace"), headers=ALICE,
                       cut=has("TEXT_MESSAGE_CONTENT"))
    run = a.app.runs.lookup(first.last_id.split(":")[0])
    asked = []
    present = run.log.present

    async def counted():
        answer = await present()
        asked.append(answer)
        return answer
    run.log.present = counted
    texts = []
    resumed = asyncio.ensure_future(read(http, "GET", b.url, headers={**ALICE, "last-event-id": first.last_id},
                                         on_data=texts.append))
    # A's grace period ends twice with no client of its own; both times B says it serves one: the run goes on.
    await until(lambda: len(asked) >= 2, "A's grace period to end twice")
    assert asked[:2] == [True, True] and not run.over.is_set()
    f.backend.release("t-grace")
    assert (await resumed).events[-1]["type"] == "RUN_FINISHED" and f.backend.stopped["t-grace"] == 0


class Mixed:
    """A Node proxy (its CLI) and a Python instance on one Redis prefix, over one backend
    (served by uvicorn here: the Node proxy's upstream)."""

    def __init__(self, redis_url: str, lease_ms: int) -> None:  # noqa: F811
        self.backend = Backend()
        self.prefix = prefix()
        self.redis_url = redis_url
        self.lease_ms = lease_ms

    async def start(self) -> "Mixed":
        self.upstream = await Served(self.backend).start()
        self.python = await Served(instance(self.backend, self.redis_url, self.prefix, run_lease_ms=self.lease_ms)).start()
        self.node = NodeProxy(self.upstream.url, self.redis_url, self.prefix, self.lease_ms, 30000)
        return self

    async def close(self) -> None:
        self.node.close()
        self.backend.release_all()
        await asyncio.gather(self.python.stop(), self.upstream.stop())
        await close_instance(self.python.app)


@pytest.fixture
async def mixed(redis_url):  # noqa: F811
    if NODE is None:
        pytest.skip("node is not installed")
    made = []

    async def make(lease_ms: int = 1000) -> Mixed:
        made.append(await Mixed(redis_url, lease_ms).start())
        return made[-1]
    yield make
    for m in made:
        await m.close()


async def test_a_run_the_node_proxy_holds_is_resumed_and_attached_through_python(mixed, http, redis_url):  # noqa: F811
    m = await mixed()
    first = await read(http, "POST", m.node.url, body=run_input("t-node", "run-node"), headers=ALICE,
                       cut=has("TEXT_MESSAGE_CONTENT"))
    assert first.status == 200 and not first.ended
    resumed_texts, attached_texts = [], []
    resumed = asyncio.ensure_future(read(http, "GET", m.python.url, headers={**ALICE, "last-event-id": first.last_id},
                                         on_data=resumed_texts.append))
    attached = asyncio.ensure_future(read(http, "GET", m.python.url, headers={**ALICE, "x-agui-attach": "t-node"},
                                          on_data=attached_texts.append))
    await until(lambda: resumed_texts and attached_texts and has("TEXT_MESSAGE_CONTENT")(attached_texts[-1]),
                "the Python instance's clients to be served")
    m.backend.release("t-node")
    resumed, attached = await resumed, await attached
    assert resumed.headers["x-agui-resume"] == "exact" and resumed.events[-1]["type"] == "RUN_FINISHED"
    # The Node proxy, the run's holder, answers the same resume after the run: the same events, byte for byte.
    on_node = await read(http, "GET", m.node.url, headers={**ALICE, "last-event-id": first.last_id})
    assert on_node.headers["x-agui-resume"] == "exact" and frames(on_node.text) == frames(resumed.text)
    entries, meta = await stored_log(redis_url, m.prefix, first.last_id.split(":")[0])
    stored = {i: fields["t"] for i, fields in entries}
    assert [stored[int(frame.split("\n")[0].split(":")[2])] for frame in frames(resumed.text)] == frames(resumed.text)
    # The attach through Python: one RUN_STARTED first, the run's text once, its end.
    assert attached.headers["x-agui-attach"] == "run"
    types = [e["type"] for e in attached.events]
    assert types[0] == "RUN_STARTED" and types.count("RUN_STARTED") == 1 and types[-1] == "RUN_FINISHED"
    assert "".join(e["delta"] for e in attached.events if e["type"] == "TEXT_MESSAGE_CONTENT") == \
        "Planning the offsite: venue first, then flights."
    assert m.backend.runs["t-node"] == 1 and meta["status"] == "finished"


async def test_a_run_python_holds_is_resumed_through_the_node_proxy(mixed, http, redis_url):  # noqa: F811
    m = await mixed()
    first = await read(http, "POST", m.python.url, body=run_input("t-py", "run-py"), headers=ALICE,
                       cut=has("TEXT_MESSAGE_CONTENT"))
    texts = []
    resumed = asyncio.ensure_future(read(http, "GET", m.node.url, headers={**ALICE, "last-event-id": first.last_id},
                                         on_data=texts.append))
    await until(lambda: texts, "the Node proxy's preamble")
    m.backend.release("t-py")
    resumed = await resumed
    assert resumed.status == 200 and resumed.headers["x-agui-resume"] == "exact"
    assert resumed.events[-1]["type"] == "RUN_FINISHED"
    # Python, the run's holder, answers the same resume after the run: the same events, byte for byte.
    on_python = await read(http, "GET", m.python.url, headers={**ALICE, "last-event-id": first.last_id})
    assert on_python.headers["x-agui-resume"] == "exact" and frames(on_python.text) == frames(resumed.text)
    entries, meta = await stored_log(redis_url, m.prefix, first.last_id.split(":")[0])
    stored = {i: fields["t"] for i, fields in entries}
    assert [stored[i] for i in sorted(stored)] == frames(first.text) + frames(resumed.text)
    assert meta["status"] == "finished" and m.backend.runs["t-py"] == 1


async def test_an_abort_asked_at_either_reaches_the_other_languages_holder(mixed, http):
    m = await mixed(lease_ms=900)  # the holder sees an abort at its next renewal (every lease / 3)
    # Asked at the Python instance, of a run the Node proxy holds: one requester digest in both languages.
    texts = []
    starter = asyncio.ensure_future(read(http, "POST", m.node.url, body=run_input("t-halt", "run-halt"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("RUN_STARTED")(texts[-1]), "the Node proxy's run to start")
    assert (await http.post(m.python.url, headers={**MALLORY, "x-agui-abort": "run-halt"})).status_code == 404
    assert (await http.post(m.python.url, headers={**ALICE, "x-agui-abort": "run-halt"})).status_code == 202
    aborted = await starter
    assert [e.get("code") for e in aborted.events if e["type"] == "RUN_ERROR"] == ["run-aborted"]
    # Asked at the Node proxy, of a run Python holds.
    texts = []
    starter = asyncio.ensure_future(read(http, "POST", m.python.url, body=run_input("t-stop", "run-stop"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("RUN_STARTED")(texts[-1]), "the run to start (its log in the store)")
    assert (await http.post(m.node.url, headers={**MALLORY, "x-agui-abort": "run-stop"})).status_code == 404
    assert (await http.post(m.node.url, headers={**ALICE, "x-agui-abort": "run-stop"})).status_code == 202
    aborted = await starter
    assert [e.get("code") for e in aborted.events if e["type"] == "RUN_ERROR"] == ["run-aborted"]
    await until(lambda: m.backend.stopped["t-stop"] == 1, "the agent to be stopped")


async def test_a_copy_nobody_reads_is_dropped_at_b_and_the_run_goes_on(fleet, http):
    f = await fleet(grace_ms=300)  # the test is about the grace period's end
    a, b = f[0], f[1]
    texts = []
    starter = asyncio.ensure_future(read(http, "POST", a.url, body=run_input("t-drop", "run-drop"), headers=ALICE,
                                         on_data=texts.append))
    await until(lambda: texts and has("TEXT_MESSAGE_CONTENT")(texts[-1]), "the run's text")
    last = frames(texts[-1])[-1].split("\n")[0][len("id: "):]
    cut = await read(http, "GET", b.url, headers={**ALICE, "last-event-id": last}, cut=lambda text: ": hb" in text)
    assert cut.headers["x-agui-resume"] == "exact"
    copy = b.app.runs.lookup(last.split(":")[0])
    assert copy is not None and copy.followed
    await until(lambda: copy.over.is_set(), "B to drop its copy (no client for grace_ms)")
    assert b.app.runs.lookup(copy.key) is None and not a.app.runs.lookup(copy.key).over.is_set()
    # A later client at B gets a fresh copy, and the run to its end.
    again = []
    resumed = asyncio.ensure_future(read(http, "GET", b.url, headers={**ALICE, "last-event-id": last}, on_data=again.append))
    await until(lambda: again, "B's preamble")
    f.backend.release("t-drop")
    resumed, on_a = await resumed, await starter
    assert resumed.headers["x-agui-resume"] == "exact" and frames(resumed.text) == frames(on_a.text)[int(last.split(":")[1]):]
    assert b.app.runs.lookup(copy.key) is not copy and f.backend.runs["t-drop"] == 1


async def test_a_trimmed_stored_log_is_resumed_on_b_as_lost_and_expires_after_the_run(fleet, http, redis_url):  # noqa: F811
    f = await fleet(max_run_events=3)
    a, b = f[0], f[1]
    first = await read(http, "POST", a.url, body=run_input("t-trim", "run-trim"), headers=ALICE,
                       cut=has("TEXT_MESSAGE_CONTENT"))
    key = first.last_id.split(":")[0]
    texts = []
    rest = asyncio.ensure_future(read(http, "GET", a.url, headers={**ALICE, "last-event-id": first.last_id},
                                      on_data=texts.append))
    await until(lambda: texts, "A's preamble")
    f.backend.release("t-trim")
    rest = await rest
    last_n = int(rest.last_id.split(":")[1])
    entries, meta = await stored_log(redis_url, f.prefix, key)
    assert [i for i, _ in entries] == [last_n - 2, last_n - 1, last_n] and meta["status"] == "finished"
    assert meta["trimmedSeq"] != "" and int(meta["startedN"]) == 1 and "RUN_STARTED" in meta["startedText"]
    # From the first event, dropped since: B's copy starts where the stored log does, and says what was lost.
    resumed = await read(http, "GET", b.url, headers={**ALICE, "last-event-id": f"{key}:1"})
    assert resumed.headers["x-agui-resume"] == "lost" and resumed.ended
    lost = [e for e in resumed.events if e["type"] == "CUSTOM" and e["name"] == "agui-state-sync.events-lost"]
    assert [e["value"] for e in lost] == [{"after": 1, "resumedAt": last_n - 2}]
    assert resumed.events[-1]["type"] == "RUN_FINISHED" and frames(resumed.text)[-1] == frames(rest.text)[-1]
    # From the newest event: exact, the run's end repeated, as A answers it.
    at_end = await read(http, "GET", b.url, headers={**ALICE, "last-event-id": rest.last_id})
    on_a = await read(http, "GET", a.url, headers={**ALICE, "last-event-id": rest.last_id})
    assert at_end.headers["x-agui-resume"] == "exact" and frames(at_end.text) == frames(on_a.text) == frames(rest.text)[-1:]
    from agui_state_sync.stores._layout import run_base
    client = await raw(redis_url)
    try:
        assert 0 < await client.pttl(f"{run_base(f.prefix, key)}:meta") <= 30000  # kept grace_ms after the run
    finally:
        await client.aclose()


async def test_a_store_unreachable_when_the_run_starts_keeps_its_log_in_memory():
    from agui_state_sync import redis_store
    from agui_state_sync._run_holder import HeldRun, RunBook
    from agui_state_sync.stores.run_log import StoredRunLog, run_store_for
    from redis_support import free_port
    store = redis_store(f"redis://127.0.0.1:{free_port()}", timeout_ms=500)  # nothing listens there
    runs = run_store_for(store, owner="o", lease_ms=900, keep_ms=1800, ended_ms=900, max_events=10, max_bytes=1 << 20)
    book = RunBook()
    log = StoredRunLog(runs)
    run = HeldRun(book, thread_id="t", run_id="r", credentials=[None, None], log=log)
    book.add(run)
    log.start(run)
    client = run.join({"starter": True})
    run.feed(b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
             b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n')
    run.ended(None)
    got = b""
    while True:
        kind, value = await asyncio.wait_for(client.queue.get(), 5)
        if kind == "close":
            break
        got += value
    assert got == (f'id: {run.key}:1\ndata: {{"type":"RUN_STARTED","threadId":"t","runId":"r"}}\n\n'
                   f'id: {run.key}:2\ndata: {{"type":"RUN_FINISHED","threadId":"t","runId":"r"}}\n\n').encode()
    await until(lambda: run.over.is_set(), "the run to be over")
    await store.close()
