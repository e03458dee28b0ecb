"""The wire conformance vectors (tests/vectors/wire_vectors.json, generated
and checked by the native suite, replayed by the JS suite) through the Python
receiver: the same outcomes, status, lastSeq and state after every step, fed
as bytes, as str, and one byte at a time."""

from __future__ import annotations

import pytest

from agui_state_sync import SyncEngine
from conftest import read_json

DOC = read_json("wire_vectors.json")


def summary(o):
    """The vector file's outcome summary (tests/js/wire-vectors.test.mjs)."""
    s = {"kind": o["kind"]}
    if o["kind"] == "applied":
        s.update(type=o["type"], seq=o["seq"], changedPaths=o["changedPaths"])
    if o["kind"] == "ignored":
        s.update(reason=o["reason"], seq=o["seq"])
    if o["kind"] == "resync":
        s.update(reason=o["reason"], lastSeq=o["lastSeq"])
    if o["kind"] == "error":
        s["code"] = o["code"]
    if o["kind"] == "event":
        s["type"] = o["event"]["type"]
    if s.get("seq", 0) is None:
        del s["seq"]
    return s


def feed_whole(engine, text):
    return engine.feed(text.encode("utf-8"))


def feed_str(engine, text):
    return engine.feed(text)


def feed_bytewise(engine, text):
    data = text.encode("utf-8")
    return [o for i in range(len(data)) for o in engine.feed(data[i:i + 1])]


def test_the_vector_file_is_not_empty():
    assert len(DOC["vectors"]) >= 8


@pytest.mark.parametrize("feed", [feed_whole, feed_str, feed_bytewise])
@pytest.mark.parametrize("vector", DOC["vectors"], ids=lambda v: v["name"])
def test_wire_vector(vector, feed):
    engine = SyncEngine()
    for i, step in enumerate(vector["steps"]):
        where = f"{vector['name']} step {i}"
        if "feed" in step:
            outcomes = feed(engine, step["feed"])
        elif step.get("end"):
            outcomes = engine.end()
        else:
            engine.reset()
            outcomes = []
        expect = step["expect"]
        assert [summary(o) for o in outcomes] == expect["outcomes"], where
        assert engine.status == expect["status"], where
        assert engine.last_seq == expect["lastSeq"], where
        assert engine.state == expect["state"], where
