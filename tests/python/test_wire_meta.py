"""Version 2 of the wire (docs/wire.md section 10): our fields under one key
of ``metadata``. The package's reader of its own events must find the fields
tests/vectors/wire_meta_vectors.json names (the native and JS suites hold their
readers to the same file), and the receiver must sequence each event where the
file's ``position`` says."""

from __future__ import annotations

import json

import pytest

from agui_state_sync import StateEmitter, StateSync
from agui_state_sync._wire import WIRE_KEY, wire_fields
from conftest import read_json

CASES = read_json("wire_meta_vectors.json")["cases"]


def test_the_key_comes_from_the_core():
    assert WIRE_KEY == "agui-state-sync"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_wire_fields_reads_each_vector(case):
    assert wire_fields(case["event"]) == case["fields"]
    if case["event"]["type"] != "STATE_SNAPSHOT":
        return
    sync = StateSync()
    [outcome] = sync.feed(("data: " + json.dumps(case["event"]) + "\n\n").encode("utf-8"))
    assert outcome["kind"] == "applied"
    assert outcome["seq"] == case["position"]["seq"]


def test_the_emitter_sends_its_fields_under_the_key():
    em = StateEmitter(epoch="e", initial_state={}, snapshot_ratio=100)
    [event] = em.update({"a": 1})
    assert list(event["metadata"]) == [WIRE_KEY]
    assert event["metadata"][WIRE_KEY] == {"seq": 1, "baseSeq": 0, "epoch": "e"}
    assert em.encode(event).startswith(b"id: 1\n")
