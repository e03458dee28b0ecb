"""Where the time goes at the Python boundary (not a test; run by hand:
build/venv/bin/python tests/python/bench/bench_boundary.py).

One case, a LangGraph-shaped update: a ~50 KB state, three fields changed
per step, through StateEmitter.update(); and the receiver side, a ~500 byte
STATE_DELTA through SyncEngine.feed(). For each, the boundary's parts:
  - Python value -> JSON bytes: the native writer (bindings/python/py_json.cpp,
    JSON.stringify's bytes) vs the stdlib's C-accelerated json.dumps;
  - the facade call itself (C++ parse, diff or apply, event JSON);
  - the facade's JSON text -> Python objects: json.loads.
Median of 7 runs of N calls each; microseconds per call.
"""

from __future__ import annotations

import json
import statistics
import time

from agui_state_sync import StateEmitter, SyncEngine, _core
from agui_state_sync._json import MAX_DEPTH


def state_of(size_kb: int, step: int):
    items = [{"id": i, "title": f"item {i}", "done": i % 3 == 0, "score": i * 1.25, "tags": ["a", "b"]}
             for i in range(size_kb * 1024 // 75)]
    return {"items": items, "step": step, "status": f"node {step}", "cursor": {"node": step % 7}}


def per_call(fn, n: int) -> float:
    runs = []
    for _ in range(7):
        t = time.perf_counter()
        for i in range(n):
            fn(i)
        runs.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(runs)


def emitter_case(n: int = 200) -> None:
    states = [state_of(50, i) for i in range(n)]
    text = json.dumps(states[0], separators=(",", ":")).encode()
    print(f"state: {len(text) / 1024:.0f} KB JSON, {n} updates")
    native = per_call(lambda i: _core.to_json(states[i], MAX_DEPTH), n)
    stdlib = per_call(lambda i: json.dumps(states[i], separators=(",", ":"), ensure_ascii=False).encode(), n)
    print(f"  Python -> JSON bytes: native writer {native:8.1f} us   json.dumps {stdlib:8.1f} us")
    texts = [_core.to_json(s, MAX_DEPTH)[0] for s in states]
    facade = _core.EmitterFacade('{"epoch":"e"}')
    facade.update(texts[0])
    facade_us = per_call(lambda i: facade.update(texts[i]), n)
    print(f"  facade.update (C++ parse + diff + event JSON): {facade_us:8.1f} us")
    result = facade.update(texts[1])
    loads = per_call(lambda i: json.loads(result), n)
    print(f"  json.loads of the result ({len(result)} bytes): {loads:8.1f} us")
    em = StateEmitter(epoch="e", initial_state=states[0])
    total = per_call(lambda i: em.update(states[i]), n)
    print(f"  StateEmitter.update, all of it: {total:8.1f} us")
    state_text = facade.state_json()
    print(f"  reading the whole state back (json.loads of {len(state_text) / 1024:.0f} KB): "
          f"{per_call(lambda i: json.loads(state_text), 50):8.1f} us")


def receiver_case(n: int = 2000) -> None:
    # A state of constant size (~4 KB), so that the figures are per event, not per state byte.
    em = StateEmitter(epoch="e", initial_state={"todos": [{"id": 0, "text": "", "done": False}] * 10, "n": 0},
                      snapshot_ratio=100)
    frames = [em.encode(em.snapshot())]
    for i in range(n):
        frames += [em.encode(e) for e in em.patch([{"op": "replace", "path": f"/todos/{i % 10}", "value": {
            "id": i, "text": "x" * 300, "done": False}}, {"op": "replace", "path": "/n", "value": i}])]
    size = statistics.mean(len(f) for f in frames[1:])
    engines = []

    def feed_all(_):
        engine = SyncEngine()
        for f in frames:
            engine.feed(f)
        engines.append(engine)
    runs = []
    for _ in range(7):
        t = time.perf_counter()
        feed_all(0)
        runs.append((time.perf_counter() - t) / len(frames) * 1e6)
    facade = _core.SyncFacade("{}")
    t = time.perf_counter()
    results = [facade.feed(f) for f in frames]
    raw = (time.perf_counter() - t) / len(frames) * 1e6
    loads = per_call(lambda i: json.loads(results[1 + i % n]), n)
    print(f"STATE_DELTA: {size:.0f} bytes, {n} events")
    print(f"  SyncFacade.feed (bytes in, Result str out): {raw:6.1f} us   json.loads of the Result: {loads:6.1f} us")
    print(f"  SyncEngine.feed, all of it: {statistics.median(runs):6.1f} us")


if __name__ == "__main__":
    emitter_case()
    receiver_case()
