"""The flaky_segments option of StateSyncMiddleware: the tax study's policy 5
(docs/tax-study.md, "adaptive"), as the Node proxy's flakySegments
(js/src/proxy/flaky-segments.js). A run's segment is its client's connection
type (forwardedProps.stateSync.connection, else 'unknown'). The middleware
reports what it already measures: each state update it frames for a run
(its length in bytes) and each client that came back (its position, and
whether its catch-up was a snapshot). Whether that client had missed seqs,
and whether a segment's clients get a STATE_SNAPSHOT per update, is decided in
the core (_core.SegmentTaxFacade, src/facade/segment_tax_facade.h)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from . import _core
from ._json import parse
from ._options import check_init, options_json, unknown_options
from .errors import sync_type_error

_TO_SNAPSHOTS = 1
_TO_DELTAS = 2
_WHAT = "StateSyncMiddleware flaky_segments"


class FlakySegments:
    """One per middleware: the segments' windows in the core, and their counters for /metrics."""

    def __init__(self, option: Any) -> None:
        if option is True:
            option = {}
        if not isinstance(option, Mapping):
            raise sync_type_error("invalid-options", f"{_WHAT} must be True or {{'window': n, 'break_even': x}}")
        given = dict(option)
        known = {key: given.pop(key) for key in ("window", "break_even") if key in given}
        unknown_options(given, _WHAT)
        for key, value in known.items():  # a bool is an int in Python, never a window or a threshold
            if isinstance(value, bool):
                raise sync_type_error("invalid-options", f"{_WHAT} {key} must be a number")
        self._facade = _core.SegmentTaxFacade(options_json(known, _WHAT))
        check_init(parse(self._facade.init_result()), _WHAT)
        self._mode: Dict[str, int] = {}  # connection type -> 1 while on snapshots (0 once back)
        self._switches: Dict[str, int] = {}

    def snapshots(self, segment: str) -> bool:
        """Whether runs of ``segment`` send the thread's snapshot for their deltas."""
        return bool(self._facade.snapshots(segment))

    def sent(self, segment: str, size: int, snapshot: bool) -> None:
        """One state update of ``segment`` framed: ``size`` bytes, a snapshot or a delta."""
        change = self._facade.sent(segment, float(size), snapshot)
        if change not in (_TO_SNAPSHOTS, _TO_DELTAS):
            return
        self._mode[segment] = 1 if change == _TO_SNAPSHOTS else 0
        self._switches[segment] = self._switches.get(segment, 0) + 1

    def came_back(self, segment: str, position: Mapping[str, Any], seq: int, epoch: str, by_snapshot: bool) -> None:
        """A client of ``segment`` came back at ``position`` ({lastSeq, epoch}) while the
        thread stands at ``seq`` / ``epoch``; the core counts it if it had missed seqs."""
        last: Optional[Any] = position.get("lastSeq")
        at = float(last) if isinstance(last, int) and not isinstance(last, bool) else -1.0
        self._facade.came_back(segment, at, str(position.get("epoch") or ""), float(seq), epoch, by_snapshot)

    def stats(self) -> Dict[str, Dict[str, int]]:
        """{snapshotMode: {connection: 0 | 1}, switches: {connection: n}}, as the proxy's stats().flakySegments."""
        return {"snapshotMode": dict(self._mode), "switches": dict(self._switches)}
