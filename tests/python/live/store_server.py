"""The Python instance of the mixed-fleet test (not a test file;
tests/python/live/fleet.test.mjs starts it): an unchanged Starlette AG-UI
endpoint behind StateSyncMiddleware bound to a Redis store, so a Node proxy on
the same store serves the same threads. uvicorn on 127.0.0.1, a port the
kernel picks, printed as "listening <port>" once the socket listens.

  argv: <redis url> <key prefix>
  POST /agent   the agent: from RunAgentInput.state, `steps` state snapshots
                ({...state, python: n, last: runId}), then RUN_FINISHED
"""

from __future__ import annotations

import asyncio
import socket
import sys

import uvicorn
from agent_support import snapshot_agent
from starlette.applications import Starlette
from starlette.routing import Route

from agui_state_sync import StateSyncMiddleware, redis_store

STEPS = 3


async def states(run_input):
    state = dict(run_input.state or {})
    for _ in range(STEPS):
        state = {**state, "python": state.get("python", 0) + 1, "last": run_input.run_id}
        yield state


async def main() -> None:
    url, prefix = sys.argv[1], sys.argv[2]
    agent = snapshot_agent(states, headers={"connection": "close"})
    app = StateSyncMiddleware(Starlette(routes=[Route("/agent", agent, methods=["POST"])]), paths=["/agent"],
                              store=redis_store(url, prefix=prefix), heartbeat_s=None)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"listening {sock.getsockname()[1]}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
