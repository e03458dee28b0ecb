"""StateEmitter.encode() writes the bytes the JS emitter's encode() writes:
"id: <seq>\\n" + "data: " + JSON.stringify(event) + "\\n\\n". The JSON text is
checked against Node's own JSON.stringify over seeded random values (key
order with integer-like keys, ECMAScript numbers, escapes, non-ASCII)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from agui_state_sync import StateEmitter
from agui_state_sync._json import json_text

NODE = shutil.which("node")
STRINGIFY = "require('readline').createInterface({input: process.stdin}).on('line', (l) => console.log(JSON.stringify(JSON.parse(l))));"

keys = st.one_of(st.text(max_size=6), st.sampled_from(["0", "1", "2", "10", "01", "4294967294", "4294967295", "-1", "a"]))
numbers = st.one_of(st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([1e21, 1e-7, 123e-20, 0.1, -0.0, 5e-324, 1.7976931348623157e308, 100.0]))
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(alphabet=st.characters(codec="utf-8"), max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)),
                      max_leaves=25)


def node_stringify(items):
    lines = "".join(json.dumps(v) + "\n" for v in items)
    done = subprocess.run([NODE, "-e", STRINGIFY], input=lines.encode("utf-8"), capture_output=True, check=True)
    return done.stdout.decode("utf-8").split("\n")[:-1]


@pytest.mark.skipif(NODE is None, reason="node not installed")
@seed(20231)
@settings(max_examples=25, deadline=None)
@given(st.lists(values, min_size=1, max_size=40))
def test_json_text_equals_node_json_stringify(items):
    assert [json_text(v, "test") for v in items] == node_stringify(items)


def test_encode_writes_the_id_line_from_metadata_seq():
    em = StateEmitter(epoch="e", initial_state={"n": 1}, snapshot_ratio=100)  # always a delta
    [delta] = em.patch([{"op": "replace", "path": "/n", "value": 2.0}])
    assert em.encode(delta) == (b'id: 1\ndata: {"delta":[{"op":"replace","path":"/n","value":2}],'
                                b'"metadata":{"agui-state-sync":{"baseSeq":0,"epoch":"e","seq":1}},"type":"STATE_DELTA"}\n\n')
    assert em.encode(delta, id=False).startswith(b"data: {")
    assert em.encode({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}) == \
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
    for seq in (-1, 1.5, True, 2**53, "3"):
        assert not em.encode({"type": "X", "metadata": {"seq": seq}}).startswith(b"id:")
        assert not em.encode({"type": "X", "metadata": {"agui-state-sync": {"seq": seq}}}).startswith(b"id:")
    # Version 1 (fields at the top of metadata) is still read; version 2's key alone counts when present.
    assert em.encode({"type": "X", "metadata": {"seq": 4}}).startswith(b"id: 4\n")
    assert em.encode({"type": "X", "metadata": {"seq": 4, "agui-state-sync": {"seq": 5}}}).startswith(b"id: 5\n")


def test_encode_takes_ag_ui_sdk_event_objects():
    core = pytest.importorskip("ag_ui.core")
    em = StateEmitter(epoch="e")
    event = core.StateSnapshotEvent(snapshot={"a": 1})
    assert em.encode(event) == b'data: {"type":"STATE_SNAPSHOT","snapshot":{"a":1}}\n\n'
    started = core.RunStartedEvent(thread_id="t", run_id="r")
    assert em.encode(started) == b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
