"""sequence_state on a LangGraph-shaped stream (not a test; run by hand:
build/venv/bin/python tests/python/bench/bench_sequence.py [KB ...]).

A STATE_SNAPSHOT at each of 500 node exits, each changing a few fields, as
ag_ui.core event objects. Reports bytes out / bytes in (in: the SDK's
EventEncoder text of each snapshot), CPU per event of sequence_state, and
beside it the SDK's own cost of encoding that snapshot."""

from __future__ import annotations

import asyncio
import random
import sys
import time

from ag_ui.core import RunAgentInput, StateSnapshotEvent
from ag_ui.encoder import EventEncoder

from agui_state_sync import StateSequencer

NODES = 500


def states(kb: int, rnd: random.Random):
    rows = kb * 1024 // 80
    state = {"rows": [{"id": i, "name": f"row {i}", "value": i * 0.5, "tags": ["x", "y"]} for i in range(rows)],
             "step": 0, "status": "start"}
    for node in range(NODES):
        rows_now = list(state["rows"])
        for _ in range(3):
            i = rnd.randrange(rows)
            rows_now[i] = {**rows_now[i], "value": rnd.random()}
        state = {**state, "rows": rows_now, "step": node, "status": f"node {node % 9}"}
        yield StateSnapshotEvent(snapshot=state)


async def run(kb: int) -> None:
    events = list(states(kb, random.Random(kb)))
    encoder = EventEncoder()
    t = time.process_time()
    bytes_in = sum(len(encoder.encode(e)) for e in events)
    encode_us = (time.process_time() - t) / NODES * 1e6
    run_input = RunAgentInput(thread_id="t", run_id="r", state={}, messages=[], tools=[], context=[], forwarded_props={})

    async def agent(_):
        for e in events:
            yield e
    bytes_out = 0
    t = time.process_time()
    async for chunk in StateSequencer().run(agent, run_input, sse=True):
        bytes_out += len(chunk)
    per_event = (time.process_time() - t) / NODES * 1e6
    print(f"{kb:4d} KB state: bytes out / in = {bytes_out / bytes_in:6.2%} ({bytes_out} / {bytes_in}); "
          f"sequence_state {per_event:8.0f} us/event; EventEncoder.encode {encode_us:8.0f} us/event")


if __name__ == "__main__":
    for kb in [int(a) for a in sys.argv[1:]] or [50]:
        asyncio.run(run(kb))
