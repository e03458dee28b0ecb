"""The core's differ run over a Python snapshot itself (CursorFacade.write_snapshot,
bindings/python/py_diff_node.h) against the JSON-text route it replaces
(CursorFacade.plan_write on the snapshot written out as JSON): over seeded
random states and edits, both answer the same bytes, leave the emitter with the
same state and the cursor with the same view (the next event lands alike), and
a value JSON cannot hold makes the fast route decline with nothing changed, so
the JSON route raises what it always raised."""

from __future__ import annotations

import json
import math
import random
from typing import Any, List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_state_sync import StateEmitter, _core
from agui_state_sync._json import MAX_DEPTH, json_bytes

KEYS = ["a", "b", "payee", "amount", "a/b", "m~n", "", "é", "日本", "0", "10", "2", "zz" * 9]
SCALARS = [None, True, False, 0, 1, -1, 1.0, 1.5, -0.0, 2 ** 53, float(2 ** 53), 1e21, 2 ** 63, 2 ** 64 - 1, -2 ** 63,
           "", "x", "1", "true", "é", "\u2028", "a\nb", "\x00"]


def scalar(rnd: random.Random) -> Any:
    return rnd.choice(SCALARS) if rnd.random() < 0.7 else rnd.choice([rnd.randrange(-1000, 1000), rnd.random() * 1e6,
                                                                      "s" * rnd.randrange(30)])


def value(rnd: random.Random, depth: int) -> Any:
    roll = rnd.random()
    if depth <= 0 or roll < 0.4:
        return scalar(rnd)
    if roll < 0.7:
        return {rnd.choice(KEYS) + ("" if rnd.random() < 0.7 else str(i)): value(rnd, depth - 1)
                for i in range(rnd.randrange(6))}
    items = [value(rnd, depth - 1) for _ in range(rnd.randrange(8))]
    return tuple(items) if rnd.random() < 0.15 else items


def mutate(v: Any, rnd: random.Random, depth: int = 0) -> Any:
    """A copy of `v` with a few changes of every kind the differ handles."""
    roll = rnd.random()
    if isinstance(v, dict) and roll < 0.85:
        out = dict(v)
        for _ in range(rnd.randrange(1, 3)):
            kind = rnd.random()
            if out and kind < 0.5:
                key = rnd.choice(list(out))
                out[key] = mutate(out[key], rnd, depth + 1)
            elif out and kind < 0.7:
                del out[rnd.choice(list(out))]
            else:
                out[rnd.choice(KEYS)] = value(rnd, 2)
        return out
    if isinstance(v, (list, tuple)) and roll < 0.85:
        out = list(v)
        kind = rnd.random()
        if out and kind < 0.4:
            i = rnd.randrange(len(out))
            out[i] = mutate(out[i], rnd, depth + 1)
        elif out and kind < 0.6:
            del out[rnd.randrange(len(out))]
        elif kind < 0.8:
            out.insert(rnd.randrange(len(out) + 1), value(rnd, 2))
        else:
            out.append(value(rnd, 1))
        return out
    if v is True and roll < 0.95:
        return 1  # equal in Python, not in JSON
    if isinstance(v, float) and v.is_integer() and roll < 0.95:
        return int(v)  # equal in JSON too: no op
    return value(rnd, 2)


def pair(options: dict, start: Any) -> tuple:
    emitter = StateEmitter(epoch="e", initial_state=start, **options)
    cursor = _core.CursorFacade("")
    # As RunStamper begins: from what the emitter holds (a too-deep start is {} there).
    cursor.begin(emitter._facade.state_json().encode(), False, emitter.seq)
    return emitter, cursor


def slow(cursor: _core.CursorFacade, emitter: StateEmitter, snapshot: Any) -> str:
    envelope = b'{"type":"STATE_SNAPSHOT","snapshot":%s}' % json_bytes(snapshot, "snapshot")
    return cursor.plan_write(envelope, emitter._facade)


OPTIONS = [{}, {"guarded_paths": ["/payee", "/a/0"]}, {"test_all": True}, {"max_depth": 4}]


def same_answer(fast: tuple, slow_pair: tuple, snapshot: Any) -> None:
    """write_snapshot answers what the JSON route answers, or declines with
    nothing changed where that route refuses (its error raised as ever)."""
    (fast_e, fast_c), (slow_e, slow_c) = fast, slow_pair
    try:
        expected: Optional[str] = slow(slow_c, slow_e, snapshot)
    except Exception as error:  # a value JSON cannot hold
        before = fast_e._facade.state_json()
        assert fast_c.write_snapshot(snapshot, fast_e._facade, MAX_DEPTH) is None
        assert fast_e._facade.state_json() == before
        with pytest.raises(type(error)):
            slow(fast_c, fast_e, snapshot)
        return
    suspended = fast_c.suspended()  # after a refusal: not in step until a snapshot lands
    answer = fast_c.write_snapshot(snapshot, fast_e._facade, MAX_DEPTH)
    if answer is None:  # declined: only out of step, or where the JSON route refuses
        assert suspended or json.loads(expected).get("landed") == -1, expected
        answer = slow(fast_c, fast_e, snapshot)
    assert answer == expected
    assert fast_e._facade.state_json() == slow_e._facade.state_json()


@pytest.mark.parametrize("seed", range(300))
def test_the_native_diff_answers_what_the_json_route_answers(seed: int) -> None:
    rnd = random.Random(seed)
    options = OPTIONS[seed % len(OPTIONS)]
    start = {k: value(rnd, 3) for k in rnd.sample(KEYS, 5)}
    fast, slow_pair = pair(options, start), pair(options, start)
    state = start
    for step in range(12):
        state = mutate(state, rnd) if rnd.random() < 0.9 else state
        same_answer(fast, slow_pair, state)
        if isinstance(state, dict):  # the views agree: a delta the agent sends next lands alike on both
            state = {**state, "zz_probe": step}
            delta = json.dumps({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/zz_probe", "value": step}]})
            probe = fast[1].plan_write(delta.encode(), fast[0]._facade)
            assert probe == slow_pair[1].plan_write(delta.encode(), slow_pair[0]._facade)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True) |
                    st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
                    max_leaves=25),
       st.integers(0, 3))
def test_any_python_value_gives_the_json_routes_answer_or_its_error(snapshot: Any, which: int) -> None:
    start = {"a": [1, 2, {"b": "x"}], "payee": "p"}
    same_answer(pair(OPTIONS[which], start), pair(OPTIONS[which], start), snapshot)


def test_a_cycle_or_a_set_deep_in_a_changed_branch_declines_and_changes_nothing() -> None:
    emitter, cursor = pair({}, {"a": {"b": 1}, "c": 2})
    before = emitter._facade.state_json()
    cyclic: List[Any] = []
    cyclic.append(cyclic)
    for bad in ({"a": {"b": cyclic}, "c": 2}, {"a": {"b": {1, 2}}, "c": 2}, {"a": {"b": math.nan}, "c": 2},
                {"a": {1: 2}, "c": 2}, {"a": {"b": "\ud800"}, "c": 2}):
        assert cursor.write_snapshot(bad, emitter._facade, MAX_DEPTH) is None
        assert emitter._facade.state_json() == before and emitter.seq == 0
