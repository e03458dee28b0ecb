"""`pip wheel .` makes a wheel that installs into a fresh venv and imports.

The wheel is built with this venv's pinned scikit-build-core and nanobind
(--no-build-isolation, so the run needs no index and reuses build/python/);
the fresh venv has nothing but the wheel: no index, no build tools."""

from __future__ import annotations

import subprocess
import sys
import venv

from conftest import REPO

SMOKE = """
import agui_state_sync as a, pathlib
e = a.StateEmitter(epoch="e", initial_state={"n": 1})
s = a.SyncEngine()
for ev in [e.snapshot(), *e.update({"n": 2})]:
    s.feed(e.encode(ev))
assert s.state == {"n": 2} and s.status == "synced", (s.state, s.status)
pkg = pathlib.Path(a.__file__).parent
assert (pkg / "py.typed").exists() and (pkg / "_core.pyi").exists()
print("ok", a.__version__)
"""


def run(*args: str, cwd=None) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_wheel_installs_into_a_fresh_venv_and_imports(tmp_path):
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(REPO))
    [wheel] = list(wheels.glob("agui_state_sync-*.whl"))
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = str(env / "bin" / "python")
    run(python, "-m", "pip", "install", "-q", "--no-index", "--disable-pip-version-check", str(wheel))
    # Run from tmp_path so the clone's python/ sources cannot be imported instead.
    assert run(python, "-c", SMOKE, cwd=tmp_path).startswith("ok ")
