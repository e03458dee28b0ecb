"""The activity wire vectors (tests/vectors/activity_vectors.json, generated
and checked by the native suite, replayed by the JS suite too; docs/wire.md
section 11) through Python: emitter.activities writes the same bytes, drops
the same events and answers the same catch-ups, and the receiver with
activities=True reports the same outcomes and activities after every step
(fed whole and one byte at a time)."""

from __future__ import annotations

import pytest

from agui_state_sync import StateEmitter, SyncEngine, catch_up
from conftest import read_json

DOC = read_json("activity_vectors.json")
# The vectors' emitter options in Python's spelling.
_OPTIONS = {"epoch": "epoch", "digestEvery": "digest_every", "snapshotRatio": "snapshot_ratio",
            "maxActivities": "max_activities"}


def summary(o):
    """The vector file's outcome summary (tests/js/activity-vectors.test.mjs)."""
    s = {"kind": o["kind"]}
    if o["kind"] == "applied":
        s["type"] = o["type"]
    if o["kind"] == "event":
        s["type"] = o["event"]["type"]
    if "messageId" in o:
        s["messageId"] = o["messageId"]
    if o["kind"] in ("resync", "ignored"):
        s["reason"] = o["reason"]
    if o["kind"] == "error":
        s["code"] = o["code"]
    if o["kind"] in ("applied", "ignored") and o.get("seq") is not None:
        s["seq"] = o["seq"]
    return s


def activities_of(engine):
    return [{"messageId": a["messageId"], "status": a["status"], "lastSeq": a["lastSeq"], "epoch": a["epoch"],
             "content": a["content"]} for _, a in sorted(engine.activities.items())]


def test_the_vector_file_covers_sending_and_receiving():
    assert len(DOC["send"]) >= 3 and len(DOC["receive"]) >= 6


@pytest.mark.parametrize("vector", DOC["send"], ids=lambda v: v["name"])
def test_send_vector(vector):
    emitter = StateEmitter(**{_OPTIONS[k]: v for k, v in vector["options"].items()})
    for i, step in enumerate(vector["steps"]):
        where = f"{vector['name']} step {i}"
        if "write" in step:
            written = emitter.activities.write(step["write"])
            sse = b"".join(emitter.activities.encode(e) for e in written["events"]).decode("utf-8")
            assert (sse, written["dropped"]) == (step["expect"]["sse"], step["expect"]["dropped"]), where
            continue
        state_sync = {"lastSeq": 0, "epoch": vector["options"]["epoch"], **step["catchUp"]}
        answer = catch_up(emitter, {"forwardedProps": {"stateSync": state_sync}})
        sse = b"".join(emitter.encode(e) for e in answer["events"]).decode("utf-8")
        assert answer["mode"] == "current", where
        assert (sse, answer.get("activities", [])) == (step["expect"]["sse"], step["expect"]["modes"]), where


def feed_whole(engine, text):
    return engine.feed(text.encode("utf-8"))


def feed_bytewise(engine, text):
    data = text.encode("utf-8")
    return [o for i in range(len(data)) for o in engine.feed(data[i:i + 1])]


@pytest.mark.parametrize("feed", [feed_whole, feed_bytewise])
@pytest.mark.parametrize("vector", DOC["receive"], ids=lambda v: v["name"])
def test_receive_vector(vector, feed):
    engine = SyncEngine(activities=True)
    for i, step in enumerate(vector["steps"]):
        where = f"{vector['name']} step {i}"
        outcomes = feed(engine, step["feed"]) if "feed" in step else engine.end()
        assert [summary(o) for o in outcomes] == step["expect"]["outcomes"], where
        assert activities_of(engine) == step["expect"]["activities"], where
