// Operating the proxy: a second (req, res) handler, for an operator's port
// rather than the agent's (every path of the proxy's own handler is a run):
//   GET /healthz  liveness: 200 while the process serves
//   GET /readyz   readiness: 503 while draining (SIGTERM) or while the store
//                 does not answer, so a load balancer sends new runs elsewhere
//   GET /metrics  Prometheus text (prom-client, an optional peer): runs,
//                 threads, events and bytes in and out, deltas vs snapshots
//                 sent (the snapshot tax measured on the server), resumes by
//                 mode, aborts, edits, upstream inconsistencies, store latency,
//                 runs by the client's connection type and client resyncs by
//                 reason and connection type, and with flakySegments which
//                 connection types get snapshots per update and how often they switched
import { syncError } from '../engine/errors.js';

const PREFIX = 'agui_proxy_';

// [name, help, read(stats)] for each counter, and labelled ones by their label.
const COUNTERS = [
  ['runs_started_total', 'Runs started upstream', (s) => s.runsStarted],
  ['runs_lost_total', 'Runs this instance ended as run-lost (their holder died or lost the store)', (s) => s.runsLost],
  ['events_passed_total', 'Upstream events relayed', (s) => s.passed],
  ['deltas_sent_total', 'STATE_DELTA events sent to clients', (s) => s.deltasSent],
  ['snapshots_sent_total', 'STATE_SNAPSHOT events sent to clients', (s) => s.snapshotsSent],
  ['upstream_bytes_total', 'Bytes read from upstreams', (s) => s.upstreamBytes],
  ['client_bytes_total', 'Bytes written to clients', (s) => s.clientBytes],
  ['upstream_inconsistent_total', 'Upstream state events that did not apply', (s) => s.upstreamInconsistent],
  ['upstream_malformed_total', 'Upstream events that were not JSON objects', (s) => s.upstreamMalformed],
  ['slow_clients_cut_total', 'Client connections cut for an unread backlog', (s) => s.slowClientsCut],
  ['grace_kept_total', 'Grace periods of a run held here that ended with its clients at another instance (the run kept)', (s) => s.graceKept],
];
const LABELLED = [
  ['resumes_total', 'Stream resumptions by outcome', 'mode', (s) => s.resumes],
  ['attaches_total', 'Clients attached to a thread (X-AGUI-Attach), by what they found', 'found', (s) => s.attaches],
  ['aborts_total', 'Runs aborted, by cause', 'cause', (s) => s.aborts],
  ['edits_total', 'Client edits judged, by verdict', 'status', (s) => s.edits],
  ['runs_by_connection_total', 'Runs started, by the client\'s connection type (forwardedProps.stateSync.connection)', 'connection', (s) => s.runsByConnection],
  ['segment_switches_total', 'flakySegments: switches between deltas and a snapshot per update, by connection type', 'connection',
    (s) => s.flakySegments.switches],
];
// [name, help, [outer, inner] labels, read(stats) -> { outer: { inner: n } }]
const LABELLED_TWICE = [
  ['resyncs_total', 'Runs whose client came back resyncing, by reason and connection type: the snapshot tax by segment',
    ['reason', 'connection'], (s) => s.resyncs],
];
// [name, help, label, read(stats) -> { label value: gauge value }]
const LABELLED_GAUGES = [
  ['segment_snapshot_mode', 'flakySegments: 1 while runs of this connection type get a snapshot per update', 'connection',
    (s) => s.flakySegments.snapshotMode],
];
const GAUGES = [
  ['threads', 'Threads held', (s) => s.threads],
  ['runs', 'Runs held (live or kept for resumption)', (s) => s.runs],
  ['live_runs', 'Runs still streaming from their upstream', (s) => s.liveRuns],
  ['buffered_bytes', 'Bytes of events kept for resumption', (s) => s.bufferedBytes],
];

async function loadPromClient() {
  try {
    return await import('prom-client');
  } catch (cause) {
    throw syncError('invalid-options', 'the proxy metrics need the npm package prom-client (npm install prom-client)', { cause });
  }
}

// Counters read from proxy.stats() at scrape time (collect), so the proxy's own
// bookkeeping stays the one source and nothing is counted twice.
function registerMetrics(prom, registry, proxy) {
  const opts = (name, help, extra = {}) => ({ name: PREFIX + name, help, registers: [registry], ...extra });
  for (const [name, help, read] of COUNTERS) {
    new prom.Counter(opts(name, help, { collect() { this.reset(); this.inc(read(proxy.stats())); } }));
  }
  const labelled = [...LABELLED.map((entry) => [prom.Counter, ...entry]), ...LABELLED_GAUGES.map((entry) => [prom.Gauge, ...entry])];
  for (const [Metric, name, help, label, read] of labelled) {
    new Metric(opts(name, help, {
      labelNames: [label],
      collect() {
        this.reset();
        const put = Metric === prom.Counter ? (labels, n) => this.inc(labels, n) : (labels, n) => this.set(labels, n);
        for (const [value, n] of Object.entries(read(proxy.stats()))) put({ [label]: value }, n);
      },
    }));
  }
  for (const [name, help, labels, read] of LABELLED_TWICE) {
    new prom.Counter(opts(name, help, {
      labelNames: labels,
      collect() {
        this.reset();
        for (const [outer, inner] of Object.entries(read(proxy.stats()))) {
          for (const [value, count] of Object.entries(inner)) this.inc({ [labels[0]]: outer, [labels[1]]: value }, count);
        }
      },
    }));
  }
  for (const [name, help, read] of GAUGES) new prom.Gauge(opts(name, help, { collect() { this.set(read(proxy.stats())); } }));
  new prom.Gauge(opts('draining', '1 while the proxy drains for a shutdown', { collect() { this.set(proxy.draining ? 1 : 0); } }));
  return new prom.Histogram(opts('store_latency_seconds', 'Latency of the readiness probe of the store',
    { buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1] }));
}

/**
 * The operator's handler for `proxy` (createStateSyncProxy's). Options: store
 * (the proxy's, probed by /readyz), register (a prom-client Registry to add the
 * metrics to; default a new one), storeTimeoutMs (1000). Resolves once
 * prom-client is loaded; rejects 'invalid-options' without it.
 */
export async function createOpsHandler(proxy, options = {}) {
  const prom = await loadPromClient();
  const registry = options.register ?? new prom.Registry();
  const storeLatency = registerMetrics(prom, registry, proxy);
  const probe = storeProbe(options.store, options.storeTimeoutMs ?? 1000, storeLatency);
  const handler = (req, res) => {
    answer(req, res, proxy, registry, probe).catch(() => reply(res, 500, { status: 'error' }));
  };
  handler.registry = registry;
  return handler;
}

// The store answers a read within the timeout (a read of a key nobody writes).
function storeProbe(store, timeoutMs, latency) {
  if (!store) return async () => true;
  return async () => {
    const start = process.hrtime.bigint();
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs, false); });
    try {
      return await Promise.race([store.peek('agui-ready', 'probe').then(() => true, () => false), timeout]);
    } finally {
      clearTimeout(timer);
      latency.observe(Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
}

async function answer(req, res, proxy, registry, probe) {
  const path = new URL(req.url ?? '/', 'http://ops').pathname;
  if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, { status: 'method not allowed' }, { allow: 'GET' });
  if (path === '/healthz') return reply(res, 200, { status: 'ok' });
  if (path === '/readyz') {
    if (proxy.draining) return reply(res, 503, { status: 'draining' });
    return (await probe()) ? reply(res, 200, { status: 'ready' }) : reply(res, 503, { status: 'store-unavailable' });
  }
  if (path === '/metrics') {
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    return res.end(text);
  }
  return reply(res, 404, { status: 'not found' });
}

function reply(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}
