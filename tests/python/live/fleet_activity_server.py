"""The Python instance of the mixed fleet's activity test (not a test file;
tests/python/live/fleet-activities.test.mjs starts it): an unchanged Starlette
AG-UI endpoint behind StateSyncMiddleware bound to a Redis store, so that a
Node proxy on the same store serves the same threads. uvicorn on 127.0.0.1,
printed as "listening <port>".

  argv: <redis url> <key prefix>
  POST /agent               the agent, written by the AG-UI SDK's encoder:
                            RUN_STARTED, a STATE_SNAPSHOT of RunAgentInput.state
                            with {counter, last: runId}, then per beat of
                            forwardedProps.script its ACTIVITY_SNAPSHOT (a beat
                            with content) or ACTIVITY_DELTA (a beat with patch)
                            and a STATE_DELTA of /counter, then RUN_FINISHED.
                            At beat forwardedProps.hold it waits for a release.
  GET  /holding/<runId>     {"holding": true} while that run waits
  POST /release/<runId>     lets that run go on (before or while it waits)

The script comes from the test, which holds the card contents both fleets'
agents share (as two replicas of one backend share a database): the test
knows every content an agent held. Each response closes its connection, so
each request is one connection of the fault link.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Dict, Set

from ag_ui.core import (ActivityDeltaEvent, ActivitySnapshotEvent, RunAgentInput, RunFinishedEvent, RunStartedEvent,
                        StateDeltaEvent, StateSnapshotEvent)
from ag_ui.encoder import EventEncoder
from listen import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from agui_state_sync import StateSyncMiddleware, redis_store

RELEASES: Dict[str, asyncio.Event] = {}  # runId -> set once the test lets the run go on
HOLDING: Set[str] = set()


def release_of(run_id: str) -> asyncio.Event:
    return RELEASES.setdefault(run_id, asyncio.Event())


async def agent(request: Request) -> StreamingResponse:
    run_input = RunAgentInput.model_validate(await request.json())
    props = run_input.forwarded_props or {}
    script, hold = props.get("script", []), props.get("hold")
    encoder = EventEncoder(accept=request.headers.get("accept"))
    ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}

    async def stream():
        yield encoder.encode(RunStartedEvent(**ids))
        state = dict(run_input.state or {})
        state.update(counter=state.get("counter", 0), last=run_input.run_id)
        yield encoder.encode(StateSnapshotEvent(snapshot=state))
        for i, beat in enumerate(script):
            if i == hold:  # the test attaches a client elsewhere meanwhile
                HOLDING.add(run_input.run_id)
                await release_of(run_input.run_id).wait()
                HOLDING.discard(run_input.run_id)
            if "content" in beat:
                yield encoder.encode(ActivitySnapshotEvent(message_id=beat["messageId"], activity_type="card",
                                                           content=beat["content"]))
            else:
                yield encoder.encode(ActivityDeltaEvent(message_id=beat["messageId"], activity_type="card",
                                                        patch=beat["patch"]))
            state["counter"] += 1
            counter = {"op": "replace", "path": "/counter", "value": state["counter"]}
            yield encoder.encode(StateDeltaEvent(delta=[counter]))
        yield encoder.encode(RunFinishedEvent(**ids))
    return StreamingResponse(stream(), media_type=encoder.get_content_type(),
                             headers={"cache-control": "no-cache", "connection": "close"})


async def holding(request: Request) -> JSONResponse:
    return JSONResponse({"holding": request.path_params["run_id"] in HOLDING})


async def release(request: Request) -> JSONResponse:
    release_of(request.path_params["run_id"]).set()
    return JSONResponse({"released": True})


def main() -> None:
    url, prefix = sys.argv[1], sys.argv[2]
    routes = [Route("/agent", agent, methods=["POST"]),
              Route("/holding/{run_id}", holding, methods=["GET"]),
              Route("/release/{run_id}", release, methods=["POST"])]
    serve(StateSyncMiddleware(Starlette(routes=routes), paths=["/agent"], store=redis_store(url, prefix=prefix),
                              heartbeat_s=None))


if __name__ == "__main__":
    main()
