"""The Redis key layout v2 (issue 38: key spaces), replayed from
tests/vectors/store_keys.json, as tests/js/store-layout.test.mjs does."""

from __future__ import annotations

import json
import pathlib

from agui_state_sync.stores._layout import claim_key, run_base, run_id_key, thread_base

VECTORS = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "store_keys.json").read_text("utf-8"))


def key_of(case):
    kind = case["kind"]
    if kind == "thread":
        return thread_base(case["prefix"], case["id"])
    if kind == "run":
        return run_base(case["prefix"], case["id"])
    if kind == "runId":
        return run_id_key(case["prefix"], case["id"])
    return claim_key(case["prefix"], case["scope"], case["id"])


def test_every_vector_gives_its_key_byte_for_byte():
    assert len(VECTORS["cases"]) > 20
    for case in VECTORS["cases"]:
        assert key_of(case) == case["key"], case
