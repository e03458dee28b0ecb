"""The installed Python package, as a user's program runs it (tests/install/run.sh
for the wheel and for the sdist; cibuildwheel's test-command in pyproject.toml).
Run it with ``python -I`` from outside the clone, so that only the installed
package can be imported."""

import pathlib
import sys

import agui_state_sync as a

pkg = pathlib.Path(a.__file__).resolve().parent
prefix = pathlib.Path(sys.prefix).resolve()
assert prefix in pkg.parents, f"imported from {pkg}, not from the environment {prefix}"

# One emitter update, applied by one receiver.
emitter = a.StateEmitter(epoch="e", initial_state={"n": 1})
receiver = a.SyncEngine()
for event in [emitter.snapshot(), *emitter.update({"n": 2})]:
    receiver.feed(emitter.encode(event))
assert receiver.state == {"n": 2} and receiver.status == "synced", (receiver.state, receiver.status)

# What the wheel carries besides the module: the typing markers and the Redis
# stores' Lua scripts (their one copy is under js/ in the repository).
assert (pkg / "py.typed").exists() and (pkg / "_core.pyi").exists()
lua = sorted(p.name for p in (pkg / "stores" / "lua").glob("*.lua"))
run_lua = sorted(p.name for p in (pkg / "stores" / "run_lua").glob("*.lua"))
assert "append.lua" in lua and "run-open.lua" in run_lua, (lua, run_lua)

core = next(pkg.glob("_core*"))
print(f"python: ok, agui_state_sync {a.__version__} from {pkg} ({core.name}; {len(lua)}+{len(run_lua)} Lua scripts)")
