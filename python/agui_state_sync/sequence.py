"""sequence_state(): the Python twin of the JS sequenceState() middleware.

It wraps the event stream of any AG-UI agent (ag_ui.core event objects,
dicts, or already-encoded SSE text or bytes: what LangGraphAgent.run(),
PydanticAI's AGUIAdapter and the CrewAI/ADK/Strands adapters produce) and
yields sequenced events: the agent's snapshots become deltas, its deltas are
re-stamped with seq/baseSeq/epoch/digest from one StateEmitter per threadId,
the client's catch-up (forwardedProps.stateSync) follows RUN_STARTED, and the
client's edits are judged before the agent runs.

    sequencer = StateSequencer(edits={"onConflict": "agent-wins"})
    async for chunk in sequencer.run(lambda run_input: agent.run(run_input), run_input, sse=True):
        yield chunk                      # bytes: "id: <seq>\\ndata: ...\\n\\n"

Pass the agent as a function of its input, as above, so that it runs on the
state with the accepted edits; an iterator that is already running is
sequenced too, but its agent started from whatever it was given.
"""

from __future__ import annotations

import copy
import logging
import inspect
import weakref
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Dict, List, Literal, Mapping, Optional, Tuple, Union, overload

from ._events import Upstream, events_of
from ._flaky_segments import FlakySegments
from ._json import plain
from .errors import sync_error, sync_type_error
from .resync import check_edit_policy, read_resync_request
from .stores.contract import check_store
from .run_stamper import RunStamper, settled
from .emitter import StateEmitter
from .threads import ThreadEmitters
from .types import AguiEvent

if TYPE_CHECKING:
    from .durable import DurableStateEmitter
    from .stores.protocol import Store

log = logging.getLogger("agui_state_sync")
DEFAULT_MAX_THREADS = 1000
DEFAULT_IDLE_TTL_MS = 30 * 60 * 1000
_STATE_TYPES = ("STATE_SNAPSHOT", "STATE_DELTA")
Agent = Union[Upstream, Callable[[Dict[str, Any]], Upstream]]
OnInconsistent = Callable[[Dict[str, Any]], None]


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise sync_type_error("invalid-options", f"StateSequencer() {name} must be a positive integer")
    return value


class StateSequencer:
    """The threads' emitters and the policy of sequence_state(). Options:
    max_threads (1000), idle_ttl_ms (30 min), emitter (StateEmitter keyword
    options but epoch / initial_state), edits ({ownership, onConflict}),
    on_inconsistent({threadId, runId, event, error, reason}), store
    (memory_store(), redis_store(): each thread's emitter bound to its
    threadId there, so a restart or another instance, Node's too, continues
    its epoch and seq)."""

    def __init__(self, *, max_threads: int = DEFAULT_MAX_THREADS, idle_ttl_ms: int = DEFAULT_IDLE_TTL_MS,
                 emitter: Optional[Mapping[str, Any]] = None, edits: Optional[Mapping[str, Any]] = None,
                 on_inconsistent: Optional[OnInconsistent] = None, store: Optional["Store"] = None) -> None:
        options = dict(emitter or {})
        if "epoch" in options or "initial_state" in options:
            raise sync_type_error("invalid-options", "StateSequencer() sets each thread's epoch and initial state itself")
        StateEmitter(**options)  # a wrong emitter option is refused now, not at the first run
        if on_inconsistent is not None and not callable(on_inconsistent):
            raise sync_type_error("invalid-options", "StateSequencer() on_inconsistent must be a function")
        if store is not None:
            check_store(store, "StateSequencer() store")
        self._threads = ThreadEmitters(options, _positive(max_threads, "max_threads"),
                                       _positive(idle_ttl_ms, "idle_ttl_ms"), store=store)
        self._edits = check_edit_policy(edits, "StateSequencer() edits")
        self._on_inconsistent = on_inconsistent
        self._received: Dict[str, int] = {}  # the agents' events, by type
        self._sent: Dict[str, int] = {}  # events sent, by type: the snapshot tax, measured here
        self._catch_ups: Dict[str, int] = {}

    def emitter_for(self, thread_id: str) -> Optional[Union[StateEmitter, "DurableStateEmitter"]]:
        """The thread's StateEmitter (a DurableStateEmitter with a store), or None."""
        return self._threads.get(str(thread_id))

    async def pin(self, thread_id: str) -> Callable[[], None]:
        """Keeps the thread's emitter here (opened from the store when it is not) until
        the returned release() is called: a run another instance holds, served here,
        catches its clients up on it. Raises when the store cannot open it."""
        entry, _ = await self._threads.acquire(str(thread_id), None)
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._threads.release(entry)
        return release

    @property
    def threads(self) -> int:
        return len(self._threads)

    def stats(self) -> Dict[str, Any]:
        """Counters since creation: {threads, received: {event type: n} (the agents'),
        sent: {event type: n}, catchUps: {mode: n}}."""
        return {"threads": len(self._threads), "received": dict(self._received), "sent": dict(self._sent),
                "catchUps": dict(self._catch_ups)}

    async def run(self, agent: Agent, run_input: Any, *, sse: bool = False,
                  on_catch_up: Optional[Callable[[str], None]] = None,
                  segment: Optional[Tuple[FlakySegments, str]] = None) -> AsyncIterator[Union[AguiEvent, bytes]]:
        """The agent's events for ``run_input``, sequenced: dicts, or SSE bytes with
        ``sse``. on_catch_up(mode) hears how the client was caught up, before the
        catch-up's first byte is yielded. With ``sse``, a client that is current
        gets a heartbeat at its seq in place of the catch-up (as Node's
        writeCatchUp): a restored client ends its resync now, not at the next beat.
        ``segment``: (the middleware's FlakySegments, the run's connection type):
        its updates and its client's return are reported there, and while the
        core has the segment on snapshots, the thread's snapshot goes out for
        the agent's deltas."""
        given = plain(run_input, event=True)
        if not isinstance(given, dict):
            raise sync_type_error("invalid-argument", "sequence_state() run_input must be a RunAgentInput or a dict")
        entry, fresh = await self._threads.acquire(str(given.get("threadId") or ""), given.get("state"))
        emitter = entry.emitter
        try:
            prepared = await self._with_edits(given, emitter, fresh)
            upstream = agent(prepared) if callable(agent) else agent
            stamper = RunStamper(emitter, prepared, self._reporter(given))
            caught_up = False
            async for event in events_of(upstream):
                kind = str(event.get("type"))
                self._received[kind] = self._received.get(kind, 0) + 1
                leading, made = await stamper.handle(event)
                if not caught_up and stamper.catch_up_mode is not None:
                    caught_up = True
                    leading = self._caught_up(stamper, given, segment, leading, sse, on_catch_up)
                for out in leading:
                    yield self._out(out, emitter, sse)
                if segment is not None:
                    made = await _for_segment(made, emitter, *segment)
                for out in made:
                    framed = self._out(out, emitter, sse)
                    if segment is not None and out.get("type") in _STATE_TYPES:
                        size = len(framed if sse else emitter.encode(out))
                        segment[0].sent(segment[1], size, out["type"] == "STATE_SNAPSHOT")
                    yield framed
        finally:
            self._threads.release(entry)

    def _caught_up(self, stamper: RunStamper, given: Dict[str, Any], segment: Optional[Tuple[FlakySegments, str]],
                   leading: List[Any], sse: bool, on_catch_up: Optional[Callable[[str], None]]) -> List[Any]:
        """The run's catch-up is answered: counted, reported to the segment and to
        on_catch_up; with sse and on_catch_up, the current client's heartbeat goes
        where the catch-up goes (after RUN_STARTED, else first)."""
        mode, emitter = stamper.catch_up_mode, stamper.emitter
        self._catch_ups[mode] = self._catch_ups.get(mode, 0) + 1
        if segment is not None:
            segment[0].came_back(segment[1], read_resync_request(given), emitter.seq, emitter.epoch, mode == "snapshot")
        if on_catch_up is None:
            return leading
        on_catch_up(mode)
        beat = stamper.current_heartbeat if sse else None
        if beat is None:
            return leading
        at = 1 if leading and leading[0].get("type") == "RUN_STARTED" else 0
        return [*leading[:at], beat, *leading[at:]]

    def _out(self, out: Any, emitter: Any, sse: bool) -> Any:
        """One event to send, counted by type: SSE bytes with ``sse`` (a heartbeat already is)."""
        if isinstance(out, bytes):
            return out
        kind = str(out.get("type"))
        self._sent[kind] = self._sent.get(kind, 0) + 1
        return emitter.encode(out) if sse else out

    async def _with_edits(self, run_input: Dict[str, Any], emitter: Any, fresh: bool) -> Dict[str, Any]:
        """The input the agent runs on when the client sent edits: judged by the
        thread's emitter (verdicts reach the client in its catch-up), their
        effect in ``state``, and not passed on (the agent would apply them
        twice). A fresh thread starts from the client's state, which holds them."""
        state_sync = (run_input.get("forwardedProps") or {}).get("stateSync")
        if not isinstance(state_sync, dict) or "edits" not in state_sync:
            return run_input
        edits = state_sync["edits"]
        if not isinstance(edits, list):
            raise sync_error("invalid-request", "forwardedProps.stateSync.edits must be a list of {editId, baseSeq, ops}")
        if not fresh:
            # Their baseSeqs count in the client's epoch (read as for its catch-up); the engine places them.
            judged = emitter.apply_edits(edits, self._edits, epoch=read_resync_request(run_input)["epoch"])
            if inspect.isawaitable(judged):  # a store-bound emitter: committed first
                await judged
        state = run_input.get("state") if fresh else copy.deepcopy(emitter.state)  # the agent's to mutate
        forwarded = dict(run_input.get("forwardedProps") or {})
        forwarded["stateSync"] = {k: v for k, v in state_sync.items() if k != "edits"}
        return {**run_input, "state": state, "forwardedProps": forwarded}

    def _reporter(self, run_input: Dict[str, Any]) -> Callable[[Dict[str, Any], Optional[BaseException]], None]:
        warned = []

        def report(event: Dict[str, Any], error: Optional[BaseException]) -> None:
            info = {"threadId": run_input.get("threadId"), "runId": run_input.get("runId"), "event": event,
                    "error": error, "reason": "refused" if error else "suspended"}
            if self._on_inconsistent is not None:
                self._on_inconsistent(info)
            elif not warned:
                warned.append(True)
                log.warning("sequence_state: run %s of thread %s sent a %s that does not apply (%s); its deltas are "
                            "dropped until its next STATE_SNAPSHOT", info["runId"], info["threadId"], event.get("type"),
                            error or "after an earlier one",
                            extra={"agui": {"event": "upstream-inconsistent", "threadId": info["threadId"],
                                            "runId": info["runId"], "type": event.get("type"), "reason": info["reason"],
                                            "code": getattr(error, "code", None)}})
        return report


async def _for_segment(made: List[Any], emitter: Any, segments: FlakySegments, label: str) -> List[Any]:
    """The agent's update as the run's segment gets it: the thread's snapshot
    (at the seq its deltas reached) for deltas while the core has the segment
    on snapshots, as the Node proxy's relay sends it."""
    if any(e.get("type") == "STATE_DELTA" for e in made) and segments.snapshots(label):
        return [await settled(emitter.snapshot())]
    return made


_default: Optional[StateSequencer] = None
_by_store: "weakref.WeakKeyDictionary[Any, StateSequencer]" = weakref.WeakKeyDictionary()


@overload
def sequence_state(agent: Agent, run_input: Any, *, sequencer: Optional[StateSequencer] = None,
                   store: Optional["Store"] = None, sse: Literal[False] = False) -> AsyncIterator[AguiEvent]: ...


@overload
def sequence_state(agent: Agent, run_input: Any, *, sequencer: Optional[StateSequencer] = None,
                   store: Optional["Store"] = None, sse: Literal[True]) -> AsyncIterator[bytes]: ...


@overload
def sequence_state(agent: Agent, run_input: Any, *, sequencer: Optional[StateSequencer] = None,
                   store: Optional["Store"] = None, sse: bool) -> AsyncIterator[Union[AguiEvent, bytes]]: ...


def sequence_state(agent: Agent, run_input: Any, *, sequencer: Optional[StateSequencer] = None,
                   store: Optional["Store"] = None, sse: bool = False) -> AsyncIterator[Union[AguiEvent, bytes]]:
    """Sequences one run of an agent (see the module doc). Without ``sequencer``,
    a process-wide StateSequencer with default options keeps the threads (one
    per ``store``: each thread's emitter bound to its threadId there)."""
    global _default
    if sequencer is not None and store is not None:
        raise sync_type_error("invalid-options", "sequence_state() takes a sequencer or a store, not both")
    if sequencer is None and store is not None:
        sequencer = _by_store.get(store)
        if sequencer is None:
            sequencer = _by_store[store] = StateSequencer(store=store)
    if sequencer is None:
        if _default is None:
            _default = StateSequencer()
        sequencer = _default
    return sequencer.run(agent, run_input, sse=sse)
