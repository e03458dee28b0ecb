"""atheris target for the Python boundary (run: python fuzz_boundary.py
[libFuzzer flags]; a short seeded run is in test_fuzz_smoke.py).

Each input drives, from one FuzzedDataProvider:
  - a SyncEngine fed the input's bytes in random chunks, then end();
  - a StateEmitter given random Python values (including NaN, bytes, sets,
    deep nesting, lone surrogates) as update() states and patch() ops;
  - render_state_for_prompt and canonical_json of the same values.
Invariants: nothing raises but AguiSyncError (with a known code); every
outcome has a known kind; a refused update/patch leaves seq and state as
they were; the receiver's state is always JSON data."""

from __future__ import annotations

import json
import sys

import atheris

with atheris.instrument_imports():
    import agui_state_sync as sync

KINDS = {"applied", "resync", "event", "ignored", "error"}


def value(fdp: atheris.FuzzedDataProvider, depth: int = 0):
    pick = fdp.ConsumeIntInRange(0, 11)
    if depth > 6 or pick < 3:
        return [None, True, 1, -2**70, 1.5, float("nan"), fdp.ConsumeUnicode(8), b"x", {1}][fdp.ConsumeIntInRange(0, 8)]
    if pick < 5:
        return [value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    if pick == 5:
        nested = []
        for _ in range(fdp.ConsumeIntInRange(100, 6000)):
            nested = [nested]
        return nested
    return {fdp.ConsumeUnicode(4): value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3))}


def check_refusal(error: Exception) -> None:
    if not isinstance(error, sync.AguiSyncError) or error.code not in sync.ERROR_CODES:
        raise error


def drive_receiver(fdp: atheris.FuzzedDataProvider) -> None:
    engine = sync.SyncEngine(client_id="fuzz")
    data = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 2048))
    at = 0
    while at < len(data):
        step = fdp.ConsumeIntInRange(1, 64)
        for outcome in engine.feed(data[at:at + step]):
            assert outcome["kind"] in KINDS, outcome
        at += step
    engine.end()
    assert engine.status in ("synced", "unverified", "resyncing")
    json.dumps(engine.state, allow_nan=False)


def drive_emitter(fdp: atheris.FuzzedDataProvider) -> None:
    emitter = sync.StateEmitter(epoch="fuzz", initial_state={"a": [1]})
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        before = (emitter.seq, json.dumps(emitter.state))
        candidate = value(fdp)
        for call in (lambda: emitter.update(candidate), lambda: emitter.patch(candidate)):
            try:
                call()
            except Exception as error:  # noqa: BLE001 - the invariant is which errors
                check_refusal(error)
                assert (emitter.seq, json.dumps(emitter.state)) == before, "a refused write changed the state"
            before = (emitter.seq, json.dumps(emitter.state))
        for call in (lambda: sync.render_state_for_prompt(candidate), lambda: sync.canonical_json(candidate)):
            try:
                call()
            except Exception as error:  # noqa: BLE001
                check_refusal(error)


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    drive_receiver(fdp) if fdp.ConsumeBool() else drive_emitter(fdp)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
