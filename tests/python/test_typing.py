"""The package's types, as a user's type checker sees them (issue 41, "Typed
APIs"): tests/types/sample_user.py, a user's program over the public API, has
no error under ``mypy --strict`` (mypy is pinned in requirements.lock) and
runs; misuse is caught; the code Literals are the core's table; and the JS
parity that python/README.md promises for approve(interrupt_id=),
resume_entry() and once(store, key, effect) holds at run time."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

import agui_state_sync
from agui_state_sync import (
    AguiSyncTypeError,
    AguiSyncValueError,
    StateEmitter,
    SyncEngine,
    _codes,
    _codes_types,
    consume_approval,
    memory_store,
    once,
    prompt_message,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "types" / "sample_user.py"


def mypy(tmp: Path, *files: Path) -> subprocess.CompletedProcess:
    # From a folder outside the repository: agui_state_sync is the installed package, as a user has it.
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp / "cache"),
                           "--no-error-summary", "--hide-error-context", *map(str, files)],
                          cwd=tmp, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def mypy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy")  # one cache for the module's runs


def test_the_sample_user_file_has_no_error_under_mypy_strict(mypy_dir):
    result = mypy(mypy_dir, SAMPLE)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def test_the_sample_user_file_runs():
    result = subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "sample_user: ok" in result.stdout, result.stdout + result.stderr


MISUSE = '''
from agui_state_sync import AguiSyncError, SyncEngine
from agui_state_sync.types import ViewToken

def approval_of(engine: SyncEngine, token: ViewToken) -> str:
    return engine.approve(token)["approval"]["path"]          # not narrowed on ok: an error

def is_gone(error: AguiSyncError) -> bool:
    return error.code == "store-unavailible"                  # a misspelled code: an error

def status_typo(engine: SyncEngine) -> bool:
    return engine.status == "synched"                         # not a SyncStatus: an error
'''


def test_misuse_is_an_error_for_the_type_checker(mypy_dir):
    misuse = mypy_dir / "misuse.py"
    misuse.write_text(MISUSE)
    result = mypy(mypy_dir, misuse)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [6, 9, 12], result.stdout


def test_the_package_stores_satisfy_the_store_protocol(mypy_dir):
    check = mypy_dir / "stores_check.py"
    check.write_text("from agui_state_sync.stores import MemoryStore, RedisStore, Store\n"
                     "def f(m: MemoryStore, r: RedisStore) -> list[Store]:\n    return [m, r]\n")
    result = mypy(mypy_dir, check)
    assert result.returncode == 0, result.stdout


CATEGORIES = {"ResyncReason": _codes.RESYNC_REASONS, "IgnoredReason": _codes.IGNORED_REASONS,
              "ErrorCode": _codes.ERROR_CODES, "GuardReason": _codes.GUARD_REASONS,
              "EditReason": _codes.EDIT_REASONS, "Code": _codes.ALL_CODES}


@pytest.mark.parametrize("name", sorted(CATEGORIES))
def test_each_code_literal_is_the_core_table(name):
    # _codes reads the table from the native module; _codes_types.py is generated from codes.h
    # (agui-sync-codes --write, checked by ctest code_table): both must name the same codes.
    assert typing.get_args(getattr(_codes_types, name)) == CATEGORIES[name]
    assert getattr(agui_state_sync.types, name) is getattr(_codes_types, name)


def test_every_public_typeddict_is_exported():
    from agui_state_sync import types
    missing = [n for n, v in vars(types).items()
               if not n.startswith("_") and isinstance(v, type) and typing.is_typeddict(v) and n not in types.__all__]
    assert missing == []
    assert "py.typed" in {p.name for p in Path(agui_state_sync.__file__).parent.iterdir()}


# --- parity with the JS package -------------------------------------------------------------------
def engine_viewing(path="/order"):
    emitter = StateEmitter(initial_state={"order": {"amount": 42}})
    engine = SyncEngine()
    engine.feed(emitter.encode(emitter.snapshot()))
    view = engine.view(path)
    assert view["ok"], view
    return emitter, engine, view["token"]


def test_approve_binds_the_interrupt_id_as_js_does():
    _, engine, token = engine_viewing()
    plain = engine.approve(token)
    bound = engine.approve(token, interrupt_id="i-1")
    assert plain["ok"] and bound["ok"]
    assert "interruptId" not in plain["approval"]
    assert bound["approval"] == {**plain["approval"], "interruptId": "i-1"}
    with pytest.raises(AguiSyncTypeError) as raised:
        engine.approve(token, interrupt_id=7)
    assert raised.value.code == "invalid-argument"
    assert engine.approve({"path": "/order", "seq": 0, "digest": "sha256:00"}, interrupt_id="i-1") == {
        "ok": False, "reason": "changed"}


def test_resume_entry_is_the_js_guards():
    _, engine, token = engine_viewing()
    approval = engine.approve(token, interrupt_id="i-1")["approval"]
    assert engine.resume_entry(approval) == {"interruptId": "i-1", "status": "resolved",
                                             "payload": {"approved": True, "approval": approval}}
    assert engine.resume_entry(approval, {"note": "n"})["payload"] == {"approved": True, "approval": approval,
                                                                       "note": "n"}
    unbound = engine.approve(token)["approval"]
    for bad in ((unbound,), (approval, {"approved": False}), (approval, {"approval": 1}), (approval, [1])):
        with pytest.raises(AguiSyncTypeError):
            engine.resume_entry(*bad)


@pytest.mark.anyio
async def test_a_bound_approval_is_consumed_once_per_its_interrupt():
    emitter, engine, token = engine_viewing()
    approval = engine.approve(token, interrupt_id="i-1")["approval"]
    store = memory_store()
    first = await consume_approval(approval, emitter.state, store=store, thread_id="t", interrupt_id="i-1")
    again = await consume_approval(approval, emitter.state, store=store, thread_id="t", interrupt_id="i-1")
    assert first["ok"] and again["ok"] and again["replayed"] and again["effectKey"] == first["effectKey"]


@pytest.mark.anyio
async def test_once_takes_the_effect_as_its_third_argument_as_in_js():
    store, runs = memory_store(), []

    async def effect(key):
        runs.append(key)
        return {"n": len(runs)}

    assert await once(store, "k", effect) == {"n": 1}
    assert await once(store, "k", effect) == {"n": 1}
    assert await once(store, "k")(effect) == {"n": 1}  # the curried form still works, on the same record
    assert await once(store, "k2", lambda key: [key]) == ["k2"]
    assert runs == ["k"]
    with pytest.raises(AguiSyncTypeError):
        once(store, "k3", "not a function")


def test_a_value_json_cannot_hold_raises_as_the_readme_says():
    emitter = StateEmitter(initial_state={})
    for value in (b"bytes", {1, 2}, {1: "non-str key"}, object()):
        with pytest.raises(AguiSyncTypeError) as raised:
            emitter.update({"v": value})
        assert isinstance(raised.value, TypeError)
    cycle: list = []
    cycle.append(cycle)
    for value in (float("nan"), "\ud800", cycle):
        with pytest.raises(AguiSyncValueError) as raised:
            emitter.update({"v": value})
        assert isinstance(raised.value, ValueError)


def test_too_deep_a_state_for_a_prompt_says_so_once():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(AguiSyncValueError) as raised:
        prompt_message({"v": deep})
    assert raised.value.code == "limit-exceeded"
    assert "the state nests deeper than 4096 levels" in str(raised.value)
    assert "the state the value" not in str(raised.value)
    less_deep: list = []
    for _ in range(600):
        less_deep = [less_deep]
    with pytest.raises(AguiSyncValueError) as raised:
        prompt_message({"v": less_deep})
    assert "the state nests deeper than 512 levels" in str(raised.value), str(raised.value)
