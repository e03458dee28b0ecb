"""A thread's activity record (src/emit/activity_record.h, docs/wire.md section
11), replayed from tests/vectors/activity_record_vectors.json as
tests/js/activity-record-vectors.test.mjs does: a Node and a Python instance
put the same ops on one stored record, and adopt it alike."""

from __future__ import annotations

import json
import pathlib

import pytest

from agui_state_sync import _core
from agui_state_sync._json import json_text
from agui_state_sync.activities import ActivityEmitter
from agui_state_sync.errors import AguiSyncError

VECTORS = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "activity_record_vectors.json").read_text("utf-8"))


def _emitter(options):
    return ActivityEmitter(json_text(options, "options", "invalid-options"))


def test_each_write_puts_the_vectors_ops_on_the_record_with_its_events():
    emitter = _emitter(VECTORS["options"])
    for step in VECTORS["steps"]:
        assert emitter.write(step["write"])["events"] == step["events"], step["write"]
        assert emitter._take_record_ops() == step["ops"], step["write"]


def test_an_emitter_that_adopts_a_record_holds_what_it_holds_and_continues_its_lines():
    adopt = VECTORS["adopt"]
    emitter = _emitter({"epoch": "e9", "record": True, "maxActivities": 64})
    assert emitter._adopt_record(json.dumps(adopt["record"]).encode()) == adopt["changed"]
    for held in adopt["held"]:
        assert emitter.seq(held["messageId"]) == held["seq"]
        assert emitter.content(held["messageId"]) == held["content"]
    assert emitter.write(adopt["next"]["write"])["events"] == adopt["next"]["events"]
    assert emitter._take_record_ops() == adopt["next"]["ops"]
    with pytest.raises(AguiSyncError) as refused:
        emitter._adopt_record(b"[1]")
    assert refused.value.code == "invalid-json"


def test_the_records_key_is_the_librarys_own():
    assert _core.activity_record_key(VECTORS["recordKey"]["threadKey"]) == VECTORS["recordKey"]["key"]
