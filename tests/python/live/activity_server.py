"""A Python AG-UI server whose agent changes activities (cards), for the
activity fault-link test (tests/js/activity-faults.test.mjs starts it; not a
test file): uvicorn on 127.0.0.1, printed as "listening <port>".

  POST /agent          the agent's ACTIVITY_SNAPSHOTs (a card's whole content
                       after each change, as Python frameworks send them)
                       through sequence_state(), SSE out; forwardedProps.seed
                       and .steps script the run
  GET  /threads/<id>   every content each card held (history), and the sender's
                       content of each (sent: its emitter's activities)

Each response closes its connection: each request is one connection of the
fault link, with its own seeded faults.
"""

from __future__ import annotations

import asyncio
import copy
import random
from typing import Any, AsyncIterator, Dict, List

from listen import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from agui_state_sync import StateSequencer, sequence_state

SEQUENCER = StateSequencer()
CARDS: Dict[str, Dict[str, List[Any]]] = {}  # threadId -> messageId -> every content it held
RUNS: Dict[str, int] = {}


def change(card: Dict[str, Any], rnd: random.Random, step: int) -> Dict[str, Any]:
    nxt = copy.deepcopy(card)
    nxt["counter"] += 1
    if rnd.random() < 0.4:
        nxt["items"].append({"id": f"i{step}", "label": "x" * rnd.randrange(1, 40)})
    elif nxt["items"] and rnd.random() < 0.3:
        nxt["items"].pop(0)
    return nxt


def agent_for(run_input: Dict[str, Any]):
    thread_id = run_input["threadId"]
    forwarded = run_input.get("forwardedProps") or {}
    run = RUNS[thread_id] = RUNS.get(thread_id, 0) + 1
    rnd = random.Random(int(forwarded.get("seed", 1)) * 1000 + run)
    steps = int(forwarded.get("steps", 20))
    cards = CARDS.setdefault(thread_id, {})

    async def agent(given: Dict[str, Any]) -> AsyncIterator[Dict[str, Any]]:
        yield {"type": "RUN_STARTED", "threadId": thread_id, "runId": given["runId"]}
        for step in range(steps):
            message_id = f"card-{rnd.randrange(2)}"
            held = cards.setdefault(message_id, [])
            nxt = change(held[-1] if held else {"title": "card", "counter": 0, "items": []}, rnd, step)
            held.append(nxt)  # recorded before it can leave
            yield {"type": "ACTIVITY_SNAPSHOT", "messageId": message_id, "activityType": "card", "content": nxt}
            await asyncio.sleep(0.002)
        yield {"type": "RUN_FINISHED", "threadId": thread_id, "runId": given["runId"]}
    return agent


async def agent_endpoint(request: Request) -> StreamingResponse:
    run_input = await request.json()
    chunks = sequence_state(agent_for(run_input), run_input, sequencer=SEQUENCER, sse=True)
    return StreamingResponse(chunks, media_type="text/event-stream",
                             headers={"cache-control": "no-cache", "connection": "close"})


async def thread_endpoint(request: Request) -> JSONResponse:
    thread_id = request.path_params["thread_id"]
    cards = CARDS.get(thread_id, {})
    emitter = SEQUENCER.emitter_for(thread_id)
    sent = {k: emitter.activities.content(k) for k in cards} if emitter is not None else {}
    return JSONResponse({"history": cards, "sent": {k: v for k, v in sent.items() if v is not None}})


app = Starlette(routes=[Route("/agent", agent_endpoint, methods=["POST"]),
                        Route("/threads/{thread_id}", thread_endpoint, methods=["GET"])])


if __name__ == "__main__":
    serve(app)
