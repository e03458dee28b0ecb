"""The Python instance of the SIGTERM test (not a test file;
tests/python/live/sigterm.test.mjs starts it): StateSyncMiddleware on a Redis
store in front of an unchanged Starlette AG-UI endpoint, served by uvicorn
with its graceful shutdown, as an operator runs it. Prints "listening <port>".

  argv: <redis url> <key prefix> held|free <graceful shutdown seconds>
  POST /agent   RUN_STARTED, a snapshot {brief, ..., step: n + 1, last: runId}, then,
                once released (free: at once; held: when the process gets
                SIGUSR1), {..., step: n + 2} and RUN_FINISHED (a run in
                progress for as long as the test wants)
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys

import uvicorn
from agent_support import snapshot_agent
from starlette.applications import Starlette
from starlette.routing import Route

from agui_state_sync import StateSyncMiddleware, redis_store


def states_for(released: asyncio.Event):
    async def states(run_input):
        # A state whose deltas are smaller than its snapshot (a catch-up by snapshot is then visible).
        state = {"brief": "plan " * 800, **(run_input.state or {})}
        state = {**state, "step": state.get("step", 0) + 1, "last": run_input.run_id}
        yield state
        await released.wait()
        yield {**state, "step": state["step"] + 1}
    return states


async def main() -> None:
    url, prefix, hold, grace = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    released = asyncio.Event()
    if hold == "free":
        released.set()
    # uvicorn takes SIGINT and SIGTERM; SIGUSR1 is the test's, to end the held run.
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, released.set)
    agent = snapshot_agent(states_for(released))
    app = StateSyncMiddleware(Starlette(routes=[Route("/agent", agent, methods=["POST"])]), paths=["/agent"],
                              store=redis_store(url, prefix=prefix), heartbeat_s=None)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=grace)
    print(f"listening {sock.getsockname()[1]}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
