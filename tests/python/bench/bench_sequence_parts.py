"""Where sequence_state's time goes on the LangGraph-shaped stream of
bench_sequence.py (not a test: make bench, or
build/venv/bin/python tests/python/bench/bench_sequence_parts.py [KB ...]).

sequence_state turns each STATE_SNAPSHOT into a delta by the same steps as
RunStamper (python/agui_state_sync/run_stamper.py); each is timed here on its
own, per event, on the same snapshots, in microseconds of CPU:
  - the SDK event as a dict (its envelope dumped, the snapshot taken as it is);
  - the snapshot as JSON text (the native writer, bindings/python/py_json.cpp);
  - CursorFacade.plan: the core parses the snapshot and keeps it as the
    agent's view (parse alone: CursorFacade.begin, which moves it in);
  - the emitter's update: the core parses the snapshot again, diffs it
    against the thread's state, writes the event JSON; then json.loads of it;
  - StateEmitter.encode: the SSE bytes of the (small) delta.
The rest of sequence_state's own figure is the Python glue around them. For a
plain in-memory emitter in step (the usual node exit), sequence_state takes
CursorFacade.write_snapshot: the core's differ runs over the snapshot dict
itself (bindings/python/py_diff_node.h), so nothing is written out as JSON or
parsed; it is timed, and so is the JSON route it replaced (the snapshot as JSON
text, then CursorFacade.plan_write's one parse; still taken out of step). The
two-call route (plan, then update) is what a store-bound emitter takes.

And, for scale, a reference that is not part of the package: a Python walk
that only finds the changed paths, skipping equal subtrees with `is`/`==` (C
comparisons), on the shared rows and on fresh copies (as from a checkpointer).
It is what a differ pays that never writes the whole state out.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any, Dict, List

from ag_ui.core import StateSnapshotEvent
from bench_sequence import cpu_us_per, states

from agui_state_sync import StateEmitter, _core
from agui_state_sync._events import _event_dict
from agui_state_sync._json import MAX_DEPTH, json_bytes

EVENTS = {50: 200, 500: 30}


def changed_paths(a: Any, b: Any, path: str, out: List[str]) -> List[str]:
    if a is b or (type(a) is type(b) and a == b):
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                out.append(f"{path}/{key}")
            else:
                changed_paths(a[key], b[key], f"{path}/{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            changed_paths(x, y, f"{path}/{i}", out)
    else:
        out.append(path)
    return out


def parts(kb: int) -> Dict[str, float]:
    """Each step on the same snapshots; the cursor and the emitter are primed
    with the first one, so every timed snapshot is a node exit after it."""
    snaps = list(states(kb, random.Random(kb), EVENTS.get(kb, 30) + 1))
    events = [StateSnapshotEvent(snapshot=s) for s in snaps[1:]]
    texts = [json_bytes(s, "bench") for s in snaps]
    envelopes = [b'{"type":"STATE_SNAPSHOT","snapshot":%s}' % t for t in texts]
    fig = {"dict": cpu_us_per(events, _event_dict), "json": cpu_us_per(snaps[1:], lambda s: json_bytes(s, "bench"))}
    parse_only = _core.CursorFacade("")
    fig["parse"] = cpu_us_per(texts[1:], lambda t: parse_only.begin(t, False, 0))
    cursor = _core.CursorFacade("")
    cursor.begin(texts[0], True, 0)
    fig["plan"] = cpu_us_per(envelopes[1:], lambda e: (cursor.plan(e, 0), cursor.settle(0, 0)))
    emitter = StateEmitter(epoch="e", initial_state=snaps[0])
    results: List[bytes] = []
    fig["update"] = cpu_us_per(texts[1:], lambda t: results.append(emitter._facade.update(t)))
    answers = [json.loads(r) for r in results]
    fig["loads"] = cpu_us_per(results, json.loads)
    deltas = [a["events"][0] for a in answers if a.get("events")]
    fig["encode"] = cpu_us_per(deltas, emitter.encode)
    one_cursor, one_emitter = _core.CursorFacade(""), StateEmitter(epoch="e", initial_state=snaps[0])
    one_cursor.begin(texts[0], False, one_emitter.seq)
    fig["plan_write"] = cpu_us_per(envelopes[1:], lambda e: one_cursor.plan_write(e, one_emitter._facade))
    native_cursor, native_emitter = _core.CursorFacade(""), StateEmitter(epoch="e", initial_state=snaps[0])
    native_cursor.begin(texts[0], False, native_emitter.seq)
    fig["write_snapshot"] = cpu_us_per(snaps[1:], lambda s: native_cursor.write_snapshot(s, native_emitter._facade,
                                                                                          MAX_DEPTH))
    pairs = list(zip(snaps, snaps[1:]))
    fig["walk_shared"] = cpu_us_per(pairs, lambda p: changed_paths(p[0], p[1], "", []))
    fresh = [json.loads(t) for t in texts]
    fig["walk_fresh"] = cpu_us_per(list(zip(fresh, fresh[1:])), lambda p: changed_paths(p[0], p[1], "", []))
    return fig


def report(kb: int, f: Dict[str, float]) -> str:
    total = f["dict"] + f["json"] + f["plan"] + f["update"] + f["loads"] + f["encode"]
    rows = [("SDK event -> dict (snapshot taken as it is)", f["dict"]),
            ("snapshot -> JSON text (native writer)", f["json"]),
            ("CursorFacade.plan (parse + keep the agent's view)", f["plan"]),
            ("  of which the parse (CursorFacade.begin)", f["parse"]),
            ("emitter update (parse again + diff + event JSON)", f["update"]),
            ("json.loads of the emitter's answer", f["loads"]),
            ("StateEmitter.encode of the delta", f["encode"]),
            ("sum of the parts", total),
            ("CursorFacade.plan_write: plan + update on one parse", f["plan_write"]),
            ("  the JSON route: JSON text, then plan_write", f["json"] + f["plan_write"]),
            ("CursorFacade.write_snapshot: the core's differ on the dict", f["write_snapshot"]),
            ("reference: changed-path walk, shared rows", f["walk_shared"]),
            ("reference: changed-path walk, fresh copies", f["walk_fresh"])]
    lines = [f"{kb} KB state: where sequence_state's CPU per event goes (us)"]
    lines += [f"  {label:52s} {value:9.0f}" for label, value in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    for kb in [int(a) for a in sys.argv[1:]] or [50, 500]:
        print(report(kb, parts(kb)))
