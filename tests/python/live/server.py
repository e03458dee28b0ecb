"""The Python AG-UI server of the live cross-language test (not a test file;
tests/python/live/live.test.mjs starts it): uvicorn on 127.0.0.1, a port the
kernel picks, printed as "listening <port>" once the socket listens.

  POST /agent          the AG-UI endpoint: the SDK's RunAgentInput, the agent
                       (live_agent.py) through sequence_state(), SSE out
  GET  /threads/<id>   what the server held, for the test to compare against:
                       every state its emitter had when an event left it, the
                       final state and seq, the agent's decisions and payments,
                       and each request (runId, whether it carried a resume)

Each response closes its connection, so each request of the client is one
connection of the fault link and gets its own seeded faults.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Dict, List

from ag_ui.core import RunAgentInput
from listen import serve
from live_agent import LiveAgent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from agui_state_sync import StateSequencer, canonical_json, sequence_state

AGENT = LiveAgent()
SEQUENCER = StateSequencer()
HELD: Dict[str, Dict[str, Any]] = {}  # threadId -> canonical JSON -> state, every state its emitter held
REQUESTS: Dict[str, List[Dict[str, Any]]] = {}


def note_held(thread_id: str) -> None:
    """Records the thread's current state: called before each event leaves, so
    any state a client can reach is recorded before it could be seen."""
    emitter = SEQUENCER.emitter_for(thread_id)
    if emitter is not None:
        state = emitter.state
        HELD.setdefault(thread_id, {})[canonical_json(state)] = state


async def recorded(chunks: AsyncIterator[bytes], thread_id: str) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        note_held(thread_id)
        yield chunk


async def agent_endpoint(request: Request) -> StreamingResponse:
    run_input = RunAgentInput.model_validate(await request.json())  # the SDK's own input class
    thread_id = run_input.thread_id
    REQUESTS.setdefault(thread_id, []).append({"runId": run_input.run_id, "resume": bool(run_input.resume)})
    note_held(thread_id)
    chunks = sequence_state(AGENT.run, run_input, sequencer=SEQUENCER, sse=True)
    return StreamingResponse(recorded(chunks, thread_id), media_type="text/event-stream",
                             headers={"cache-control": "no-cache", "connection": "close"})


async def thread_endpoint(request: Request) -> JSONResponse:
    thread_id = request.path_params["thread_id"]
    emitter = SEQUENCER.emitter_for(thread_id)
    thread = AGENT.thread(thread_id)
    return JSONResponse({
        "held": list(HELD.get(thread_id, {}).values()),
        "state": emitter.state if emitter else None,
        "seq": emitter.seq if emitter else None,
        "checkpoint": thread.checkpoint,
        "decisions": thread.decisions,
        "payments": thread.payments,
        "requests": REQUESTS.get(thread_id, []),
    })


app = Starlette(routes=[Route("/agent", agent_endpoint, methods=["POST"]),
                        Route("/threads/{thread_id}", thread_endpoint, methods=["GET"])])


if __name__ == "__main__":
    serve(app)
