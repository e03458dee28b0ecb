"""StateEmitter: the sender (the JS package's StateEmitter, js/src/server/emitter.js)
for Python agents. It owns one C++ EmitterFacade: the app hands it whole new
states (diffed in C++) or its own RFC 6902 ops, and gets back sequenced,
digest-stamped AG-UI events as dicts, SSE-encoded by encode() with an ``id:``
line. Every decision (the diff, seq/epoch/digest, edits, the replay ring) is
the facade's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional

from . import _core
from ._json import json_bytes, json_text, parse, plain
from ._options import check_init, options_json, random_epoch
from .errors import failure_code, failure_error, sync_type_error, sync_value_error
from .resync import catch_up as _catch_up
from .resync import check_edit_policy
from ._wire import wire_seq
from .prompt import message_of, render_options_json, rendered_parts
from .activities import ActivityEmitter, activity_options, is_activity_event, picked_options
from .types import (AppliedEdits, CatchUp, ClientWrite, EmitterStats, PromptMessage, PromptRender, StateEvent,
                    StateSnapshotEvent)

if TYPE_CHECKING:
    from .durable import DurableStateEmitter
    from .stores.protocol import Store

Event = Dict[str, Any]


def _refusal(what: str, failure: Mapping[str, Any], fallback: str) -> Exception:
    code = failure_code(failure, fallback)
    message = f"{what} refused ({code}): {failure.get('message')}; the state is unchanged"
    if code == "limit-exceeded":  # the value itself is too deep or too big: a ValueError too
        return sync_value_error(code, message)
    return failure_error(failure, fallback, message)


def _is_seq(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53 - 1


class StateEmitter:
    """Options as the JS createStateEmitter() takes them, in snake_case:
    initial_state, start_seq, epoch (default: a random UUID), digest_every,
    guarded_paths, test_all, snapshot_ratio, replay_max_events,
    replay_max_bytes, max_depth, edit_history, ack_history, max_activities
    (``activities``: 64)."""

    def __init__(self, *, initial_state: Any = None, start_seq: Optional[int] = None,
                 epoch: Optional[str] = None, digest_every: Optional[int] = None,
                 guarded_paths: Optional[List[str]] = None, test_all: Optional[bool] = None,
                 snapshot_ratio: Optional[float] = None, replay_max_events: Optional[int] = None,
                 replay_max_bytes: Optional[int] = None, max_depth: Optional[int] = None,
                 edit_history: Optional[int] = None, ack_history: Optional[int] = None,
                 max_activities: Optional[int] = None) -> None:
        if epoch is not None and not isinstance(epoch, str):
            raise sync_type_error("invalid-options", "option epoch must be a string")
        options = dict(initial_state=plain(initial_state), start_seq=start_seq,
                       epoch=random_epoch() if epoch is None else epoch, digest_every=digest_every,
                       guarded_paths=guarded_paths, test_all=test_all, snapshot_ratio=snapshot_ratio,
                       replay_max_events=replay_max_events, replay_max_bytes=replay_max_bytes,
                       max_depth=max_depth, edit_history=edit_history, ack_history=ack_history)
        self._activity_options = picked_options({**options, "max_activities": max_activities})
        ActivityEmitter(activity_options(self._activity_options))  # a wrong option is refused now, not at first use
        self._attach(options_json(options, "StateEmitter()"))

    def _attach(self, options_text: str) -> None:
        self._activities: Optional[ActivityEmitter] = None
        self._facade = _core.EmitterFacade(options_text)
        check_init(parse(self._facade.init_result()), "StateEmitter()")
        self._epoch: str = self._facade.epoch()
        self._state: Any = None
        self._state_valid = False

    @classmethod
    def _with_state_text(cls, state_text: str, **options: Any) -> "StateEmitter":
        """A StateEmitter whose initial state is JSON text already (a store's):
        spliced into the facade's options, never parsed in Python."""
        emitter = cls.__new__(cls)
        emitter._activity_options = picked_options(options)
        options = {k: v for k, v in options.items() if k != "max_activities"}
        epoch = options.get("epoch")
        text = options_json({**options, "epoch": random_epoch() if epoch is None else epoch}, "StateEmitter()")
        emitter._attach(text[:-1] + ("," if len(text) > 2 else "") + '"initialState":' + state_text + "}")
        return emitter

    @classmethod
    async def open(cls, *, store: "Store", key: str, **options: Any) -> "DurableStateEmitter":
        """A StateEmitter bound to ``key`` of ``store`` (memory_store(),
        redis_store()): a DurableStateEmitter whose writes are coroutines, each
        committed to the store before it returns. It continues the key's state,
        seq and epoch (epoch, start_seq, initial_state count only for a new
        key). An unreachable store: AguiSyncError 'store-unavailable'."""
        from .durable import open_store_emitter
        return await open_store_emitter(store, key, options)

    @property
    def activities(self) -> ActivityEmitter:
        """The thread's AG-UI activities (docs/wire.md section 11), each messageId
        sequenced on its own line, in this emitter's epoch: an ActivityEmitter,
        created on first use.
        catch_up() answers a client's activity positions from it."""
        if self._activities is None:
            self._activities = ActivityEmitter(activity_options(self._activity_options, self._epoch))
        return self._activities

    def _activities_in_use(self) -> Optional[ActivityEmitter]:
        return self._activities

    def update(self, new_state: Any) -> List[StateEvent]:
        """Diffs the current state against ``new_state``: one STATE_DELTA, or a
        STATE_SNAPSHOT when that is smaller; [] when nothing changed. Raises an
        AguiSyncError (the state then unchanged) when it cannot be sent."""
        text = json_bytes(plain(new_state), "update() state")
        return self._events(parse(self._facade.update(text)), "update()", "invalid-json")

    def patch(self, ops: Any) -> List[StateEvent]:
        """Applies the app's RFC 6902 ops atomically; the events that carry them.
        A refusal raises an AguiSyncError with ``code`` and ``op_index``."""
        text = json_bytes(ops, "patch() operations")
        return self._events(parse(self._facade.patch(text)), "patch()", "patch-failed")

    def _update_json(self, text: bytes) -> List[StateEvent]:
        # update() of a state already written as JSON (the sequencer has its text).
        return self._events(parse(self._facade.update(text)), "update()", "invalid-json")

    def _patch_json(self, text: bytes) -> List[StateEvent]:
        return self._events(parse(self._facade.patch(text)), "patch()", "patch-failed")

    def _update_rebased_json(self, base: bytes, text: bytes) -> List[StateEvent]:
        # update() by the writer's change from `base` only, as the core fits it (a store-bound update(rebase=True)).
        return self._events(parse(self._facade.update_rebased(base, text)), "update()", "invalid-json")

    def apply_edits(self, edits: Any, policy: Optional[Mapping[str, Any]] = None, *,
                    epoch: Optional[str] = None) -> AppliedEdits:
        """Judges a client's edits ([{editId, baseSeq, ops}]) under ``policy``
        ({ownership, onConflict}) and applies those it accepts: {events,
        results}. An edit's own problems are its verdict, never a raise.
        ``epoch``: the epoch the client's baseSeqs count in (None: this
        emitter's); the engine judges another epoch's edits as made at its
        first seq."""
        if not isinstance(edits, (list, tuple)):
            raise sync_type_error("invalid-request", "apply_edits() edits must be a list of {editId, baseSeq, ops}")
        if epoch is not None and not isinstance(epoch, str):
            raise sync_type_error("invalid-request", "apply_edits() epoch must be a string or None")
        policy_text = json_text(check_edit_policy(policy, "apply_edits() policy"), "apply_edits() policy",
                                "invalid-options")
        text = json_bytes(edits, "apply_edits() edits", "invalid-request")
        result = parse(self._facade.apply_edits(text, policy_text, json.dumps(epoch)))
        if not result.get("ok") and result.get("code") == "invalid-options":  # misuse: a TypeError, as in JS
            raise sync_type_error("invalid-options", f"apply_edits() policy: {result.get('message')}")
        if not result.get("ok"):
            raise _refusal("apply_edits()", result, "invalid-request")
        if result["events"]:
            self._state_valid = False
        return {"events": result["events"], "results": result["results"]}

    def adopt_history(self, events: Iterable[Event]) -> int:
        """Continues a log another process wrote: how many events were adopted."""
        if not isinstance(events, (list, tuple)):
            raise sync_type_error("invalid-argument", "adopt_history() events must be a list of events")
        result = parse(self._facade.adopt_history(json_bytes(list(events), "adopt_history() events")))
        if not result.get("ok"):
            raise failure_error(result, "invalid-request", f"adopt_history() refused: {result.get('message')}")
        return int(result["adopted"])

    def _adopt_history_json(self, text: bytes) -> int:
        # adopt_history() of a log already held as JSON text (a store's).
        result = parse(self._facade.adopt_history(text))
        if not result.get("ok"):
            raise failure_error(result, "invalid-request", f"adopt_history() refused: {result.get('message')}")
        return int(result["adopted"])

    def _state_text(self) -> str:
        """The state's JSON text as the facade writes it (what a store keeps)."""
        return self._facade.state_json()

    def provenance(self) -> List[ClientWrite]:
        """[{path, writer: 'client', origin, seq}]: the pointers a client edit wrote last."""
        return parse(self._facade.provenance_json())

    def snapshot(self) -> StateSnapshotEvent:
        """A STATE_SNAPSHOT of the current state at the current seq."""
        return parse(self._facade.snapshot())

    def replay_since(self, seq: int, epoch: Optional[str] = None, held: Optional[Iterable[int]] = None) -> List[StateEvent]:
        """What a client at ``seq`` needs: [], the missed deltas, or one snapshot."""
        if not _is_seq(seq):
            raise sync_type_error("invalid-argument", "replay_since() seq must be an integer >= 0")
        if epoch is not None and not isinstance(epoch, str):
            raise sync_type_error("invalid-argument", "replay_since() epoch must be a str")
        skip = list(held or [])
        if not all(_is_seq(s) for s in skip):
            raise sync_type_error("invalid-argument", "replay_since() held must be integers >= 0")
        return self._replay(json_text({"seq": seq, "epoch": epoch, "skip": skip}, "replay_since()"), "replay_since()")

    def catch_up(self, request: Any) -> CatchUp:
        """What to send a (re)connecting client first: {mode: 'current' |
        'replay' | 'snapshot', events}. ``request``: an HTTP request (anything
        with ``headers``) or a RunAgentInput (forwardedProps.stateSync)."""
        return _catch_up(self, request)

    def encode(self, event: Any, *, id: bool = True) -> bytes:  # noqa: A002 - the JS option's name
        """b"id: <seq>\\ndata: <JSON>\\n\\n", the bytes the JS emitter's
        encode() writes (no id line when ``id`` is False, there is no seq, or it
        is an activity's: ``id:`` names the state's seq)."""
        data = plain(event, event=True)
        text = json_bytes(data, "encode() event")
        seq = None if is_activity_event(data) else wire_seq(data)
        id_line = b"id: %d\n" % seq if id and _is_seq(seq) else b""
        return id_line + b"data: " + text + b"\n\n"

    def render_state_for_prompt(self, **options: Any) -> PromptRender:
        """render_state_for_prompt of this emitter's state, rendered in the core
        where the state is (no JSON text of it is written or read): {text,
        bytes, truncated, untrustedPaths}. With untrusted='auto', user_written
        defaults to provenance()'s paths. Raises as render_state_for_prompt."""
        rendered: Any = self._render_prompt("render_state_for_prompt()", options)  # {**PromptRender, preamble}
        del rendered["preamble"]
        return rendered

    def prompt_message(self, **options: Any) -> PromptMessage:
        """prompt_message of this emitter's state, rendered where the state is."""
        return message_of(self._render_prompt("prompt_message()", options))

    def _render_prompt(self, what: str, options: Dict[str, Any]) -> Dict[str, Any]:
        return rendered_parts(self._facade.render_prompt(render_options_json(what, **options)), what)

    def heartbeat(self) -> bytes:
        """The SSE heartbeat comment b": hb <seq>\\n\\n"."""
        return self._facade.heartbeat().encode("ascii")

    @property
    def seq(self) -> int:
        return int(self._facade.seq())

    @property
    def epoch(self) -> str:
        return self._epoch

    @property
    def state(self) -> Any:
        """The current state as receivers reconstruct it (parsed once per change)."""
        if not self._state_valid:
            self._state = parse(self._facade.state_json())
            self._state_valid = True
        return self._state

    def stats(self) -> EmitterStats:
        return parse(self._facade.stats_json())

    def _catch_up_at(self, position: Mapping[str, Any]) -> CatchUp:
        # {mode, events} for a client at position ({lastSeq, epoch, reason, held}): the core decides.
        result = parse(self._facade.catch_up(json_text(position, "catch_up() position", "invalid-request")))
        if not result.get("ok"):
            raise failure_error(result, "invalid-request", f"catch_up() failed: {result.get('message')}")
        return {"mode": result["mode"], "events": result["events"]}

    def _catch_up_snapshot(self) -> StateEvent:
        # snapshot() as a catch-up's answer, counted in stats()['replaySnapshots'].
        return self._replay('{"snapshot":true}', "catch_up()")[0]

    def _events(self, result: Mapping[str, Any], what: str, fallback: str) -> List[StateEvent]:
        if not result.get("ok"):
            raise _refusal(what, result, fallback)
        if result["events"]:
            self._state_valid = False
        return result["events"]

    def _replay(self, request_json: str, what: str) -> List[StateEvent]:
        result = parse(self._facade.replay(request_json))
        if not result.get("ok"):
            raise failure_error(result, "invalid-request", f"{what} failed: {result.get('message')}")
        return result["events"]


