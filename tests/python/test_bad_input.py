"""Bad input from Python: values JSON cannot hold, hostile nesting, malformed
SSE, wrong argument types. Each gets an AguiSyncError with a code (a
TypeError or ValueError as well, for misuse), nothing is half-applied, and
the process does not crash."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from agui_state_sync import (AguiSyncError, StateEmitter, SyncEngine, canonical_json, render_state_for_prompt,
                             state_digest, verify_approval)


def cycle():
    d = {"a": []}
    d["a"].append(d)
    return d


UNREPRESENTABLE = [
    (float("nan"), ValueError), (float("inf"), ValueError), ({"x": [1, -math.inf]}, ValueError),
    ({"b": b"bytes"}, TypeError), ({"s": {1, 2}}, TypeError), ({1: "int key"}, TypeError),
    ({"o": object()}, TypeError), (cycle(), ValueError), ({"s": "lone \ud800"}, ValueError),
    ({"big": 2**70}, ValueError),
]


def deep(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


@pytest.mark.parametrize("value,kind", UNREPRESENTABLE, ids=repr)
def test_update_refuses_what_json_cannot_hold_and_changes_nothing(value, kind):
    em = StateEmitter(epoch="e", initial_state={"keep": 1})
    before = (em.seq, em.state, em.stats())
    with pytest.raises(AguiSyncError) as caught:
        em.update(value)
    assert isinstance(caught.value, kind) and caught.value.code == "invalid-argument"
    assert "agui-state-sync: update() state" in str(caught.value)
    assert (em.seq, em.state, em.stats()) == before


@pytest.mark.parametrize("value,kind", UNREPRESENTABLE, ids=repr)
def test_canonical_json_and_digest_refuse_the_same(value, kind):
    for fn in (canonical_json, state_digest):
        with pytest.raises(AguiSyncError) as caught:
            fn(value)
        assert isinstance(caught.value, kind)


def test_the_error_names_where_the_bad_value_is():
    with pytest.raises(TypeError, match=r"set \(at /form/items/2/tags\)"):
        StateEmitter(epoch="e").update({"form": {"items": [0, 1, {"tags": {"a"}}]}})


@pytest.mark.parametrize("depth", [129, 5000, 100_000])
def test_over_deep_states_are_limit_exceeded(depth):
    em = StateEmitter(epoch="e")
    with pytest.raises(AguiSyncError) as caught:
        em.update({"d": deep(depth)})
    assert caught.value.code == "limit-exceeded" and isinstance(caught.value, ValueError)
    assert em.seq == 0 and em.state == {}


@pytest.mark.parametrize("depth", [513, 5000, 100_000])
def test_over_deep_prompt_states_are_limit_exceeded(depth):
    with pytest.raises(AguiSyncError) as caught:
        render_state_for_prompt(deep(depth))
    assert caught.value.code == "limit-exceeded" and isinstance(caught.value, ValueError)


def test_a_refused_patch_names_its_op_and_applies_none_of_them():
    em = StateEmitter(epoch="e", initial_state={"a": 1})
    ops = [{"op": "replace", "path": "/a", "value": 2}, {"op": "test", "path": "/a", "value": 99}]
    with pytest.raises(AguiSyncError) as caught:
        em.patch(ops)
    assert caught.value.code == "precondition-failed" and caught.value.op_index == 1
    assert em.state == {"a": 1} and em.seq == 0


@pytest.mark.parametrize("call", [
    lambda: StateEmitter(epoch=5), lambda: StateEmitter(digest_every=-1), lambda: StateEmitter(snapshot_ratio="x"),
    lambda: SyncEngine(reorder_window=0), lambda: SyncEngine(client_id=""), lambda: SyncEngine(now=3),
    lambda: render_state_for_prompt({}, max_bytes=0), lambda: render_state_for_prompt({}, include="/a"),
    lambda: render_state_for_prompt({}, ownership={"": "user"}),
    lambda: StateEmitter(epoch="e").apply_edits([], {"onConflict": "nobody"}),
    lambda: StateEmitter(epoch="e").apply_edits([], {"bogus": 1}),
    lambda: StateEmitter(epoch="e").replay_since(-1), lambda: SyncEngine().feed(12),
])
def test_misuse_is_a_type_error_with_a_code(call):
    with pytest.raises(TypeError) as caught:
        call()
    assert isinstance(caught.value, AguiSyncError)
    assert caught.value.code in ("invalid-options", "invalid-argument", "invalid-request")


def test_edit_refusals_are_answers_never_raises():
    engine = SyncEngine()
    engine.feed(b'data: {"type":"STATE_SNAPSHOT","snapshot":{"a":1}}\n\n')
    assert engine.edit("not a list")["code"] == "invalid-patch"
    # As in JS: an edit that is not JSON is 'invalid-patch'.
    assert engine.edit([{"op": "add", "path": "/x", "value": float("nan")}])["code"] == "invalid-patch"
    assert engine.edit([{"op": "replace", "path": "/missing", "value": 1}])["code"] == "patch-failed"
    assert engine.edit([{"op": "add", "path": "/d", "value": deep(5000)}])["code"] == "limit-exceeded"
    assert engine.state == {"a": 1} and engine.pending_edits() == []


def test_verify_approval_is_false_for_anything_malformed():
    state = {"p": {"to": "alice"}}
    for approval in [None, 1, "x", {}, {"path": 1, "digest": "d"}, {"path": "/p", "digest": None},
                     {"path": "/p", "digest": "sha256:00"}, {"path": "/nope", "digest": state_digest({"to": "alice"})}]:
        assert verify_approval(approval, state) is False
    assert verify_approval({"path": "/p", "digest": state_digest({"to": "alice"})}, {"p": {"to": float("nan")}}) is False
    assert verify_approval({"path": "/p", "digest": state_digest({"to": "alice"})}, state) is True


MALFORMED_SSE = [
    b"data: {not json}\n\n", b"data: [1,2]\n\n", b'data: {"type":"STATE_DELTA","delta":"x"}\n\n',
    b'data: {"type":"STATE_SNAPSHOT"}\n\n', b"data: \xff\xfe\n\n", b'data: {"type":"STATE_DELTA","delta":[' * 3000 + b"\n\n",
    b"\x00\x00\x00\n\n", b"id: 1\nretry: x\nevent: y\n:comment\n\n",
]


@pytest.mark.parametrize("chunk", MALFORMED_SSE, ids=lambda c: repr(c[:30]))
def test_malformed_sse_is_an_outcome_and_the_state_stays(chunk):
    engine = SyncEngine()
    engine.feed(b'data: {"type":"STATE_SNAPSHOT","snapshot":{"a":1}}\n\n')
    outcomes = engine.feed(chunk) + engine.end()
    assert all(isinstance(o, dict) and "kind" in o for o in outcomes)
    assert engine.state == {"a": 1}


@seed(23)
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=1, max_value=40))
def test_random_bytes_in_random_chunks_never_crash_the_receiver(data, size):
    engine = SyncEngine()
    for i in range(0, len(data), size):
        for o in engine.feed(data[i:i + size]):
            assert o["kind"] in ("applied", "resync", "event", "ignored", "error")
    engine.end()
    assert engine.status in ("synced", "unverified", "resyncing")


def test_a_bad_value_under_a_key_with_a_lone_surrogate_is_named_not_a_system_error():
    # Found by fuzz_boundary.py: naming the path of the bad value read the key's
    # UTF-8 form, which a lone surrogate does not have, and left an exception set.
    with pytest.raises(AguiSyncError) as caught:
        render_state_for_prompt({"k\ud800": float("nan")})
    assert isinstance(caught.value, ValueError) and "(at /k\ufffd)" in str(caught.value)
