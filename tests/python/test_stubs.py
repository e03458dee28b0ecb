"""python/agui_state_sync/_core.pyi is what nanobind's stubgen writes for the
built module (make py-stubs): regenerated here from the installed module and
compared, so a change to bindings/python/ without `make py-stubs` fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKED_IN = REPO / "python" / "agui_state_sync" / "_core.pyi"


def test_the_checked_in_core_stub_is_stubgens(tmp_path):
    out = tmp_path / "_core.pyi"
    result = subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "agui_state_sync._core",
                             "-o", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_text() == CHECKED_IN.read_text(), (
        "python/agui_state_sync/_core.pyi is stale: run `make py-stubs` (nanobind's stubgen over the built module)")


def test_the_installed_package_carries_the_stub_and_py_typed():
    import agui_state_sync
    installed = Path(agui_state_sync.__file__).parent
    assert (installed / "py.typed").exists()
    assert (installed / "_core.pyi").exists()
