"""Shared paths and helpers of the Python suite (make py-test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"
NATIVE_BUILD = REPO / "build" / "native"


def read_json(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture
def anyio_backend():
    return "asyncio"
