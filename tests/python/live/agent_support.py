"""An unchanged AG-UI endpoint for the live servers (not a test file): each
run is RUN_STARTED, a STATE_SNAPSHOT per state the server's ``states(run_input)``
(an async iterator) yields, then RUN_FINISHED, written by the SDK's encoder."""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Dict

from ag_ui.core import RunAgentInput, RunFinishedEvent, RunStartedEvent, StateSnapshotEvent
from ag_ui.encoder import EventEncoder
from starlette.requests import Request
from starlette.responses import StreamingResponse

States = Callable[[RunAgentInput], AsyncIterator[Dict[str, Any]]]


def snapshot_agent(states: States, **response: Any) -> Callable[[Request], Any]:
    async def agent(request: Request) -> StreamingResponse:
        run_input = RunAgentInput.model_validate(await request.json())
        encoder = EventEncoder()

        async def stream():
            yield encoder.encode(RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
            async for state in states(run_input):
                yield encoder.encode(StateSnapshotEvent(snapshot=state))
            yield encoder.encode(RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id))
        return StreamingResponse(stream(), media_type="text/event-stream", **response)
    return agent
