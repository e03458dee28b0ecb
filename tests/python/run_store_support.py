"""Support for test_run_store.py: a plain AG-UI backend whose runs stop mid-run
until the test releases their thread (so "mid-run" is a fact, not a race),
StateSyncMiddleware instances on a Redis store, each served by uvicorn on
127.0.0.1 (real sockets: a client's cut is a closed connection), an SSE
client that reads until told to cut, and the Node proxy's CLI.

Run as a script, it serves one instance in its own process, for a test that
kills it (SIGKILL): python run_store_support.py REDIS_URL PREFIX LEASE_MS GRACE_MS
prints "listening <port>" once it accepts connections."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
PROXY_BIN = REPO / "js" / "bin" / "agui-state-sync-proxy.js"
DEADLINE_S = 15.0  # a condition not met by then is a failure, never a wait


async def until(condition: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    """Waits for condition() to be truthy (checked every few ms), failing after the deadline."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


# -- the backend ----------------------------------------------------------------

def script(thread_id: str, run_id: str) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """A run's events: those sent at once, and those sent once the thread is released."""
    ids = {"threadId": thread_id, "runId": run_id}
    message = {"messageId": f"m-{run_id}"}
    head = [{"type": "RUN_STARTED", **ids},
            {"type": "STATE_SNAPSHOT", "snapshot": {"step": 1, "items": ["venue"], "note": "héllo"}},
            {"type": "TEXT_MESSAGE_START", **message, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", **message, "delta": "Planning the offsite: "},
            {"type": "TEXT_MESSAGE_CONTENT", **message, "delta": "venue first, "}]
    tail = [{"type": "STATE_SNAPSHOT", "snapshot": {"step": 2, "items": ["venue", "flights"], "note": "héllo"}},
            {"type": "TEXT_MESSAGE_CONTENT", **message, "delta": "then flights."},
            {"type": "TEXT_MESSAGE_END", **message},
            {"type": "RUN_FINISHED", **ids}]
    return head, tail


class Backend:
    """POST /agent: a plain AG-UI agent (raw ASGI, no sequencing of its own). Each run
    sends script()'s head, waits for its thread's release (forever, unless released),
    then sends the tail. Counts the runs it started and the ones stopped mid-run."""

    def __init__(self) -> None:
        self.runs: Counter = Counter()  # threadId -> runs started
        self.stopped: Counter = Counter()  # threadId -> runs cancelled while held
        self._gates: Dict[str, asyncio.Event] = {}

    def gate(self, thread_id: str) -> asyncio.Event:
        return self._gates.setdefault(thread_id, asyncio.Event())

    def release(self, thread_id: str) -> None:
        self.gate(thread_id).set()

    def release_all(self) -> None:
        for gate in self._gates.values():
            gate.set()

    async def __call__(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/agent" or scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        run_input = json.loads(body)
        thread_id, run_id = run_input["threadId"], run_input["runId"]
        self.runs[thread_id] += 1
        head, tail = script(thread_id, run_id)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]})
        for event in head:
            await send({"type": "http.response.body", "body": sse(event), "more_body": True})
        try:
            await self.gate(thread_id).wait()
        except asyncio.CancelledError:
            self.stopped[thread_id] += 1
            raise
        for event in tail:
            await send({"type": "http.response.body", "body": sse(event), "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def sse(event: Dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, ensure_ascii=False).encode("utf-8") + b"\n\n"


# -- instances ------------------------------------------------------------------

def instance(backend: Any, redis_url: str, prefix: str, **options: Any) -> Any:
    """A StateSyncMiddleware over ``backend`` keeping threads, grants and run logs in Redis."""
    from agui_state_sync import StateSyncMiddleware, redis_store
    store = redis_store(redis_url, prefix=prefix)
    return StateSyncMiddleware(backend, paths=["/agent"], store=store, approval_store=store, **options)


class Served:
    """An ASGI app served by uvicorn on 127.0.0.1 in this event loop (real sockets)."""

    def __init__(self, app: Any) -> None:
        import uvicorn
        self.app = app
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/agent"
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self._task: Optional[asyncio.Task] = None

    async def start(self) -> "Served":
        self._task = asyncio.ensure_future(self.server.serve(sockets=[self._sock]))
        await until(lambda: self.server.started or self._task.done(), "uvicorn to start")
        return self

    async def stop(self) -> None:
        self.server.should_exit = True
        self.server.force_exit = True
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=5)
        self._sock.close()


async def close_instance(mw: Any) -> None:
    """Ends what an in-process instance still runs (shutdown: 'closed') and closes its store."""
    await mw.runs.shutdown(2)  # every live run ended, and its commits landed
    for run in list(mw.runs._runs.values()):
        for task in list(run._tasks):
            await asyncio.wait({task}, timeout=2)
    await mw.store.close()


def start_holder_process(redis_url: str, prefix: str, lease_ms: int, grace_ms: int) -> Tuple[subprocess.Popen, str]:
    """This file as a script: one instance in a process of its own. Returns (process, its /agent URL)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen([sys.executable, __file__, redis_url, prefix, str(lease_ms), str(grace_ms)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    for line in child.stdout:  # type: ignore[union-attr]
        if line.startswith("listening "):
            return child, f"http://127.0.0.1:{int(line.split()[1])}/agent"
    raise AssertionError(f"the holder process exited with {child.wait()}")


class NodeProxy:
    """The Node proxy's CLI (js/bin/agui-state-sync-proxy.js) on Redis, in front of ``upstream``."""

    def __init__(self, upstream: str, redis_url: str, prefix: str, lease_ms: int, grace_ms: int) -> None:
        self.child = subprocess.Popen(
            [NODE, str(PROXY_BIN), "--upstream", upstream, "--port", "0", "--redis", redis_url, "--redis-prefix", prefix,
             "--run-lease-ms", str(lease_ms), "--grace-ms", str(grace_ms)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
        self.output = ""
        for line in self.child.stdout:  # type: ignore[union-attr]
            self.output += line
            if "listening on " in line:
                base = line.split("listening on ")[1].split()[0]
                self.url = base.rstrip("/") + "/agent"
                return
        raise AssertionError(f"agui-state-sync-proxy exited with {self.child.wait()}:\n{self.output}")

    def close(self) -> None:
        self.child.kill()
        self.child.wait()


# -- the client -----------------------------------------------------------------

class Read:
    def __init__(self, status: int, headers: Any, text: str, ended: bool) -> None:
        self.status = status
        self.headers = headers
        self.text = text
        self.ended = ended  # the server ended the stream (else the client cut it)

    @property
    def events(self) -> List[Dict[str, Any]]:
        return [json.loads(block.split("\ndata: ", 1)[1]) for block in frames(self.text)]

    @property
    def last_id(self) -> str:
        return frames(self.text)[-1].split("\n", 1)[0][len("id: "):]


def frames(text: str) -> List[str]:
    """The complete SSE events of a stream with an id, each as sent ("id: ...\\ndata: ...\\n\\n")."""
    complete = text[: text.rfind("\n\n") + 2] if "\n\n" in text else ""
    return [block + "\n\n" for block in complete.split("\n\n") if block.startswith("id: ")]


async def read(http: Any, method: str, url: str, *, body: Any = None, headers: Optional[Dict[str, str]] = None,
               cut: Optional[Callable[[str], bool]] = None, on_data: Optional[Callable[[str], None]] = None,
               deadline_s: float = DEADLINE_S) -> Read:
    """A request's response, read until the server ends it, or until cut(text so far) says to
    cut it (the connection is closed there). on_data(text) after every chunk."""
    async def go() -> Read:
        async with http.stream(method, url, json=body, headers=headers or {}) as response:
            text = ""
            async for chunk in response.aiter_raw():
                text += chunk.decode("utf-8")
                if on_data is not None:
                    on_data(text)
                if cut is not None and cut(text):
                    return Read(response.status_code, response.headers, text, False)
            return Read(response.status_code, response.headers, text, True)
    return await asyncio.wait_for(go(), deadline_s)


def has(event_type: str) -> Callable[[str], bool]:
    """cut= once a complete event of that type arrived."""
    return lambda text: any(f'"type":"{event_type}"' in block for block in frames(text))


def run_input(thread_id: str, run_id: str) -> Dict[str, Any]:
    return {"threadId": thread_id, "runId": run_id, "state": {}, "messages": [], "tools": [], "context": [],
            "forwardedProps": {}}


# -- the holder process ---------------------------------------------------------

async def _serve_alone(redis_url: str, prefix: str, lease_ms: int, grace_ms: int) -> None:
    served = await Served(instance(Backend(), redis_url, prefix, run_lease_ms=lease_ms, grace_ms=grace_ms)).start()
    print(f"listening {served.port}", flush=True)
    await asyncio.Event().wait()  # until killed


if __name__ == "__main__":
    asyncio.run(_serve_alone(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
