"""A short, seeded atheris run of fuzz_boundary.py (make py-test); a real
campaign: build/venv/bin/python tests/python/fuzz_boundary.py -max_total_time=600."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")
TARGET = Path(__file__).with_name("fuzz_boundary.py")


def test_the_boundary_survives_a_seeded_fuzz_run(tmp_path):
    done = subprocess.run([sys.executable, str(TARGET), "-seed=23", "-runs=3000", "-max_len=4096", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Done 3000 runs" in done.stderr
