"""sequence_state on a LangGraph-shaped stream (issue 23, section 4; not a
test: make bench, or build/venv/bin/python tests/python/bench/bench_sequence.py [KB ...]).

The workload: a STATE_SNAPSHOT at each of 500 node exits, each changing a few
fields (three rows' values, the step, the status), as ag_ui.core event
objects, for a 50 KB and a 500 KB state. Unchanged rows are shared between
consecutive states, as a reducer's new state shares them (jsonpatch gains
nothing from that: it walks every row either way).

Per size, in one process and on the same snapshots:
  - bytes out / bytes in: the sequenced SSE bytes against the SDK's
    EventEncoder text of every snapshot (goal <= 5%);
  - CPU per event (time.process_time): sequence_state, against what the
    framework spends anyway to encode that snapshot (EventEncoder.encode; a
    pydantic state model's model_dump_json, PydanticAI's case), and against
    jsonpatch.make_patch(previous, snapshot) (goal: sequence_state >= 20x
    faster). make_patch runs on the first pairs only (it takes ~0.1 s a
    pair at 500 KB);
  - memory per thread: the growth of the process's resident set per thread
    the sequencer keeps (its emitter: the state, the replay ring), over
    several threads after a run of 20 node exits each.
Where sequence_state's time goes: bench_sequence_parts.py.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List

import jsonpatch
from ag_ui.core import RunAgentInput, StateSnapshotEvent
from ag_ui.encoder import EventEncoder
from pydantic import BaseModel

from agui_state_sync import StateSequencer

NODES = 500
JSONPATCH_PAIRS = {50: 100, 500: 20}
MEMORY_THREADS = {50: 40, 500: 8}


class Row(BaseModel):
    id: int
    name: str
    value: float
    tags: List[str]


class State(BaseModel):
    rows: List[Row]
    step: int
    status: str


def first_state(kb: int) -> Dict[str, Any]:
    """A state whose JSON is about ``kb`` KB: rows of four fields."""
    def of(n: int) -> Dict[str, Any]:
        return {"rows": [{"id": i, "name": f"row {i}", "value": i * 0.5, "tags": ["x", "y"]} for i in range(n)],
                "step": 0, "status": "start"}
    guess = kb * 1024 // 70
    return of(guess * kb * 1024 // len(json.dumps(of(guess), separators=(",", ":"))))


def states(kb: int, rnd: random.Random, nodes: int = NODES) -> Iterator[Dict[str, Any]]:
    state = first_state(kb)
    rows = len(state["rows"])
    for node in range(nodes):
        rows_now = list(state["rows"])
        for _ in range(3):
            i = rnd.randrange(rows)
            rows_now[i] = {**rows_now[i], "value": rnd.random()}
        state = {**state, "rows": rows_now, "step": node, "status": f"node {node % 9}"}
        yield state


def run_input(thread: str) -> RunAgentInput:
    return RunAgentInput(thread_id=thread, run_id="r", state={}, messages=[], tools=[], context=[], forwarded_props={})


def cpu_us_per(items: List[Any], fn) -> float:
    t = time.process_time()
    for item in items:
        fn(item)
    return (time.process_time() - t) / len(items) * 1e6


async def sequenced(sequencer: StateSequencer, events: List[StateSnapshotEvent], thread: str) -> int:
    async def agent(_):
        for e in events:
            yield e
    out = 0
    async for chunk in sequencer.run(agent, run_input(thread), sse=True):
        out += len(chunk)
    return out


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def memory_per_thread(kb: int) -> float:
    """Measured in a fresh process (--memory KB), where the heap holds nothing
    this process freed before that the threads could reuse."""
    out = subprocess.run([sys.executable, __file__, "--memory", str(kb)], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


def measure_memory(kb: int) -> float:
    """Resident-set growth per thread: each thread a run of 20 node exits."""
    events = [StateSnapshotEvent(snapshot=s) for s in states(kb, random.Random(kb), 20)]
    sequencer, threads = StateSequencer(), MEMORY_THREADS.get(kb, 8)
    asyncio.run(sequenced(sequencer, events, "warm-up"))  # allocator pools, first-call caches
    gc.collect()
    before = rss_bytes()
    for i in range(threads):
        asyncio.run(sequenced(sequencer, events, f"thread-{i}"))
    gc.collect()
    assert sequencer.threads == threads + 1
    return (rss_bytes() - before) / threads


def figures(kb: int) -> Dict[str, float]:
    events = [StateSnapshotEvent(snapshot=s) for s in states(kb, random.Random(kb))]
    encoder = EventEncoder()
    texts = [encoder.encode(e) for e in events]
    fig: Dict[str, float] = {"first": len(texts[0]) / 1024, "last": len(texts[-1]) / 1024,
                             "bytes_in": sum(len(t) for t in texts)}
    fig["encode"] = cpu_us_per(events, encoder.encode)
    models = [State.model_validate(e.snapshot) for e in events[:100]]
    fig["model_dump_json"] = cpu_us_per(models, lambda m: m.model_dump_json())
    pairs = list(zip(events, events[1:]))[:JSONPATCH_PAIRS.get(kb, 20)]
    fig["jsonpatch"] = cpu_us_per(pairs, lambda p: jsonpatch.make_patch(p[0].snapshot, p[1].snapshot))
    t = time.process_time()
    fig["bytes_out"] = asyncio.run(sequenced(StateSequencer(), events, "t"))
    fig["sequence_state"] = (time.process_time() - t) / len(events) * 1e6
    fig["memory"] = memory_per_thread(kb)
    return fig


def table(rows: List[Dict[str, float]]) -> str:
    head = (f"{'state (KB)':>10} | {'out/in':>6} | {'sequence_state':>14} | {'EventEncoder':>12} | {'model_dump_json':>15} | "
            f"{'jsonpatch':>11} | {'jsonpatch/ours':>14} | {'memory/thread':>13}")
    load = os.getloadavg()[0]
    lines = ["LangGraph-shaped stream: a STATE_SNAPSHOT at each of 500 node exits (state: its first and last "
             f"snapshot's SSE size); CPU per event (us); load average {load:.1f} on {os.cpu_count()} CPUs", head,
             "-" * len(head)]
    for f in rows:
        lines.append(f"{f['first']:4.0f}..{f['last']:<4.0f} | {f['bytes_out'] / f['bytes_in']:6.2%} | {f['sequence_state']:14.0f} | "
                     f"{f['encode']:12.0f} | {f['model_dump_json']:15.0f} | {f['jsonpatch']:11.0f} | "
                     f"{f['jsonpatch'] / f['sequence_state']:13.1f}x | {f['memory'] / 1024:10.0f} KB")
    lines.append("goals: out/in <= 5%; jsonpatch/ours >= 20x (jsonpatch.make_patch on the first "
                 f"{'/'.join(str(JSONPATCH_PAIRS[k]) for k in sorted(JSONPATCH_PAIRS))} pairs)")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        print(measure_memory(int(sys.argv[2])))
    else:
        print(table([figures(int(a)) for a in sys.argv[1:]] or [figures(50), figures(500)]))
