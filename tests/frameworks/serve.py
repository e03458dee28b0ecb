"""Serves one framework app on 127.0.0.1 for the tests (and by hand):

    python tests/frameworks/serve.py langgraph|pydantic-snapshot|pydantic-delta|crewai [--wrap none|middleware] [--port 0]

--wrap none: the framework's server unchanged (set-up (a): the Node proxy goes
in front); --wrap middleware: the same server with the Python package in-process
(StateSyncMiddleware, set-up (b)). The tap (tap.py) sits innermost in both.
Prints "listening on http://127.0.0.1:PORT/agent" once it accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys

import uvicorn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

PATH = "/agent"


def build(kind: str, wrap: str):
    if kind == "langgraph":
        import langgraph_app as module
        app = module.make_app(PATH)

        async def state_of(thread_id: str):
            return await module.framework_state(app, thread_id)

        async def facts_of(thread_id: str):
            return await module.framework_progress(app, thread_id)
        hold = module.hold
    elif kind in ("pydantic-snapshot", "pydantic-delta"):
        import pydantic_app as module
        app = module.make_app(kind.split("-")[1], PATH)

        async def state_of(thread_id: str):
            return module.framework_state(thread_id)

        async def facts_of(thread_id: str):
            return {"toolCalls": module.tool_calls(thread_id)}
        hold = None
    elif kind == "crewai":  # its own venv (build/venv-crewai): CrewAI pins another FastAPI
        import crewai_app as module
        app = module.make_app(PATH)

        async def state_of(thread_id: str):
            return module.framework_state(thread_id)
        facts_of = hold = None
    else:
        raise SystemExit(f"unknown app {kind!r}")
    tapped = Tap(app, path=PATH, state_of=state_of, effects_of=module.effects, facts_of=facts_of, hold=hold)
    if wrap == "none":
        return tapped
    from agui_state_sync import StateSyncMiddleware
    return StateSyncMiddleware(tapped, paths=[PATH])


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("app")
    parser.add_argument("--wrap", choices=["none", "middleware"], default="none")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    config = uvicorn.Config(build(args.app, args.wrap), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started and not task.done():  # bound and accepting: say where
        await asyncio.sleep(0.01)
    if server.started:
        print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}{PATH}", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(main())
