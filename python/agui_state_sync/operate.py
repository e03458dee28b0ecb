"""Operating StateSyncMiddleware: an ASGI app for an operator's port (or a
mount beside the agent's routes), as Node's proxy has (js/src/proxy/operate.js):

    GET /healthz  liveness: 200 while the process serves
    GET /readyz   readiness: 503 while the server shuts down (the middleware
                  saw the ASGI lifespan's shutdown) or while the store does
                  not answer, so a load balancer sends new runs elsewhere
    GET /metrics  Prometheus text (prometheus_client, the ``metrics`` extra):
                  runs, threads, events received from the agent and sent
                  by type (deltas vs snapshots: the snapshot tax measured on
                  the server), bytes in and out, catch-ups
                  by mode, client resyncs by reason and connection type,
                  runs by connection type, approvals by verdict, store latency,
                  and with flaky_segments which connection types get a
                  snapshot per update and how often they switched

Counters are read from middleware.stats() at scrape time, so the middleware's
own bookkeeping stays the one source. Metric names follow the proxy's, with
the prefix ``agui_middleware_``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Dict, Iterator, Optional

from .errors import sync_type_error

PREFIX = "agui_middleware_"
# (name, help, read(stats)) per counter; (name, help, label, read) for labelled ones.
_COUNTERS = (
    ("runs_started", "Runs started through the middleware", lambda s: s["runsStarted"]),
    ("client_bytes", "Bytes written to clients", lambda s: s["clientBytes"]),
    ("upstream_bytes", "Bytes read from the agent's SSE responses", lambda s: s["upstreamBytes"]),
)
_LABELLED = (
    ("events_received", "Events read from the agent, by type", "type", lambda s: s["received"]),
    ("events_sent", "Events sent to clients, by type", "type", lambda s: s["sent"]),
    ("catch_ups", "Catch-ups answered, by mode", "mode", lambda s: s["catchUps"]),
    ("approvals", "Resumes carrying an approval, by verdict", "verdict", lambda s: s["approvals"]),
    ("runs_by_connection", "Runs started, by the client's connection type", "connection",
     lambda s: s["runsByConnection"]),
    ("segment_switches", "flaky_segments: switches between deltas and a snapshot per update, by connection type",
     "connection", lambda s: s["flakySegments"]["switches"]),
)
_GAUGES = (
    ("threads", "Threads held", lambda s: s["threads"]),
    ("live_runs", "Runs streaming now", lambda s: s["liveRuns"]),
)


def _prometheus() -> Any:
    try:
        import prometheus_client
        import prometheus_client.core  # noqa: F401  (the metric families; not imported by the package itself)
    except ImportError as error:
        raise sync_type_error("invalid-options", "the middleware metrics need prometheus_client "
                              "(pip install 'agui-state-sync[metrics]')") from error
    return prometheus_client


class _Collector:
    """The middleware's counters, as Prometheus families, at scrape time."""

    def __init__(self, prom: Any, middleware: Any) -> None:
        self._core = prom.core
        self._middleware = middleware

    def collect(self) -> Iterator[Any]:
        stats, core = self._middleware.stats(), self._core
        for name, doc, read in _COUNTERS:
            yield core.CounterMetricFamily(PREFIX + name, doc, value=read(stats))
        for name, doc, label, read in _LABELLED:
            family = core.CounterMetricFamily(PREFIX + name, doc, labels=[label])
            for key, count in sorted(read(stats).items()):
                family.add_metric([key], count)
            yield family
        resyncs = core.CounterMetricFamily(PREFIX + "resyncs", "Runs whose client came back resyncing, by reason and "
                                           "connection type: the snapshot tax by segment", labels=["reason", "connection"])
        for reason, by in sorted(stats["resyncs"].items()):
            for connection, count in sorted(by.items()):
                resyncs.add_metric([reason, connection], count)
        yield resyncs
        for name, doc, read in _GAUGES:
            yield core.GaugeMetricFamily(PREFIX + name, doc, value=read(stats))
        mode = core.GaugeMetricFamily(PREFIX + "segment_snapshot_mode", "flaky_segments: 1 while runs of this "
                                      "connection type get a snapshot per update", labels=["connection"])
        for connection, value in sorted(stats["flakySegments"]["snapshotMode"].items()):
            mode.add_metric([connection], value)
        yield mode
        yield core.GaugeMetricFamily(PREFIX + "draining", "1 while the server shuts down",
                                     value=1 if self._middleware.draining else 0)


def ops_app(middleware: Any, *, store: Any = None, registry: Any = None, store_timeout_s: float = 1.0) -> Any:
    """The operator's ASGI app for ``middleware`` (a StateSyncMiddleware).
    ``store``: probed by /readyz (default the middleware's); ``registry``: a
    prometheus_client CollectorRegistry to add the metrics to (default a new
    one). Raises invalid-options without prometheus_client."""
    prom = _prometheus()
    if not isinstance(store_timeout_s, (int, float)) or isinstance(store_timeout_s, bool) or store_timeout_s <= 0:
        raise sync_type_error("invalid-options", "ops_app() store_timeout_s must be a positive number")
    registry = registry if registry is not None else prom.CollectorRegistry()
    registry.register(_Collector(prom, middleware))
    latency = prom.Histogram(PREFIX + "store_latency_seconds", "Latency of the readiness probe of the store",
                             buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1), registry=registry)
    probed = store if store is not None else getattr(middleware, "store", None)

    async def ready() -> bool:
        if probed is None:
            return True
        start = time.perf_counter()
        try:
            await asyncio.wait_for(probed.peek("agui-ready", "probe"), store_timeout_s)
            return True
        except Exception:  # unreachable, or too slow: not ready
            return False
        finally:
            latency.observe(time.perf_counter() - start)

    async def app(scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await _reply(send, 405, {"status": "method not allowed"}, [(b"allow", b"GET")])
        elif scope.get("path") == "/healthz":
            await _reply(send, 200, {"status": "ok"})
        elif scope.get("path") == "/readyz":
            if middleware.draining:
                await _reply(send, 503, {"status": "draining"})
            else:
                ok = await ready()
                await _reply(send, 200 if ok else 503, {"status": "ready" if ok else "store-unavailable"})
        elif scope.get("path") == "/metrics":
            body = prom.generate_latest(registry)
            await _send(send, 200, body, [(b"content-type", prom.CONTENT_TYPE_LATEST.encode())])
        else:
            await _reply(send, 404, {"status": "not found"})

    app.registry = registry  # type: ignore[attr-defined]
    return app


async def _reply(send: Any, status: int, body: Dict[str, Any], headers: Optional[list] = None) -> None:
    await _send(send, status, json.dumps(body).encode(), [(b"content-type", b"application/json"), *(headers or [])])


async def _send(send: Any, status: int, body: bytes, headers: list) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


class JsonLogFormatter(logging.Formatter):
    """Structured logs: one JSON object per line, {time, level, logger,
    message}, plus the fields the package puts on its records (``extra=
    {"agui": {...}}``: event, threadId, runId, code, key, ...), as the proxy
    CLI writes its own. Use it on the handler of the "agui_state_sync" logger
    (or the root's):

        handler = logging.StreamHandler()
        handler.setFormatter(JsonLogFormatter())
        logging.getLogger("agui_state_sync").addHandler(handler)
    """

    def format(self, record: logging.LogRecord) -> str:
        out: Dict[str, Any] = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
                               "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        fields = getattr(record, "agui", None)
        if isinstance(fields, dict):
            out.update({k: v for k, v in fields.items() if k not in out})
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)

    converter = time.gmtime  # UTC, as the Z says
