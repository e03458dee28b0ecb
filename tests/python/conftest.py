"""Shared paths and helpers of the Python suite (make py-test)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"
NATIVE_BUILD = REPO / "build" / "native"


def read_json(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def card_changes(seed: int, steps: int, ids=("c1", "c2"), start=None):
    """Seeded activity changes: ([(messageId, content after the change)], the last content of each)."""
    rnd = random.Random(seed)
    held = {i: copy.deepcopy(start if start is not None else {"n": 0, "items": []}) for i in ids}
    out = []
    for step in range(steps):
        mid = rnd.choice(list(ids))
        nxt = copy.deepcopy(held[mid])
        nxt["n"] += 1
        if rnd.random() < 0.4:
            nxt["items"].append(step)
        held[mid] = nxt
        out.append((mid, nxt))
    return out, held


@pytest.fixture
def anyio_backend():
    return "asyncio"
