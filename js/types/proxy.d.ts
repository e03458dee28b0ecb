// Type declarations for agui-state-sync/proxy (written by hand; see src/proxy.js).
import type { AguiSyncError, EditPolicy, PromptRenderOptions, StateEmitterOptions } from './index.js';

/** The parts of a Node http.IncomingMessage the proxy reads. */
export interface ProxyRequest {
  readonly method?: string;
  readonly url?: string;
  readonly headers: Record<string, string | string[] | undefined>;
  on(event: string, listener: (...args: any[]) => void): unknown;
}

/** The parts of a Node http.ServerResponse the proxy writes. */
export interface ProxyResponse {
  writeHead(status: number, headers?: Record<string, string>): unknown;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  on(event: 'close', listener: () => void): unknown;
}

export interface StateSyncProxyOptions {
  /** The upstream AG-UI agent endpoint (http: or https:); every run is POSTed there. */
  upstream: string | URL;
  /** Client headers forwarded upstream (default authorization, cookie, accept-language, traceparent, tracestate). */
  forwardHeaders?: string[];
  /**
   * Which forwarded headers say who the requester is (default authorization, cookie; each must be
   * in forwardHeaders). A requester is authorized for a thread once the upstream answered 2xx to a
   * run of theirs on it (SECURITY.md).
   */
  credentialHeaders?: string[];
  /**
   * The deployer's own check for a requester the upstream has not accepted yet: only `true`
   * authorizes (anything else, or a throw, refuses). authorizeUrl(url) asks an HTTP endpoint.
   */
  authorize?: (request: AccessRequest) => boolean | undefined | Promise<boolean | undefined>;
  /** How long an authorization lasts, renewed by each 2xx (default 3600000). */
  grantTtlMs?: number;
  /** Connections attached to one run at once (default 64; beyond: 503). */
  maxRunClients?: number;
  /** How long a run outlives a broken client connection, and a finished run stays resumable (default 30000). */
  graceMs?: number;
  /** ": hb <seq>" to attached clients every this many ms (default 5000). */
  heartbeatMs?: number;
  /** A thread with no run is forgotten after this long (default 600000). */
  threadIdleMs?: number;
  /** Threads held at once (default 1000); a new one beyond it replaces an idle one, or is refused (503). */
  maxThreads?: number;
  /** Runs held at once, live or kept for resumption (default 512); beyond it with all live: 503. */
  maxRuns?: number;
  /** Sent events kept per run for Last-Event-ID (default 4 MiB). */
  maxRunBufferBytes?: number;
  /** The same, all runs together (default 64 MiB). */
  maxBufferedBytes?: number;
  /** With a Redis store: events kept per run in its stored log (default 100000; maxRunBufferBytes bounds its bytes). */
  maxRunEvents?: number;
  /**
   * With a Redis store: the lease the instance holding a run renews every runLeaseMs / 3; once it has
   * expired on a live run (the instance died), the run ends with RUN_ERROR 'run-lost' (default 5000).
   */
  runLeaseMs?: number;
  /** Largest RunAgentInput accepted (default 4 MiB; beyond: 413). */
  maxBodyBytes?: number;
  /** Time to receive a request body (default 10000; beyond: 408). */
  bodyTimeoutMs?: number;
  /** Bytes queued to a client that does not read before its connection is cut (it resumes; default 16 MiB). */
  maxClientQueueBytes?: number;
  /** Time until the upstream's response head (default 30000). */
  upstreamTimeoutMs?: number;
  /** Largest upstream SSE event (default 8 MiB). */
  maxEventBytes?: number;
  /** Largest upstream state (default 64 MiB). */
  maxStateBytes?: number;
  /** Options of each thread's StateEmitter (replayMaxBytes defaults to 1 MiB here). */
  emitter?: Pick<
    StateEmitterOptions,
    'digestEvery' | 'guardedPaths' | 'testAll' | 'snapshotRatio' | 'replayMaxEvents' | 'replayMaxBytes' | 'maxDepth' | 'editHistory' | 'ackHistory'
  >;
  /**
   * How clients' edits (forwardedProps.stateSync.edits) are judged before a run goes upstream
   * (default: every path shared, 'agent-wins'). The upstream gets the merged state as `state`.
   */
  edits?: EditPolicy;
  /** Called with every failure the proxy meets (an upstream error, an engine failure); never with client mistakes. */
  onError?: (error: AguiSyncError) => void;
  /**
   * Adds the run's state (RunAgentInput.state, or the thread's last vouched state
   * when the request has none), rendered by renderStateForPrompt, as one more
   * RunAgentInput.context entry { description, value } of the run forwarded
   * upstream. `true`: default render options and description. Options only the
   * engine can judge (a pointer's syntax, the tag) are checked at the first run:
   * a refusal is answered 500 and reported to onError, and nothing is forwarded.
   */
  promptContext?: true | PromptContextOptions;
  /**
   * The tax study's policy 5 (docs/proxy.md#snapshots-for-a-flaky-segment):
   * runs whose starting client's connection type
   * (forwardedProps.stateSync.connection, else 'unknown') is a segment whose
   * snapshot tax passed break-even get a STATE_SNAPSHOT per update instead of
   * deltas, decided every `window` updates of the segment, and go back to
   * deltas with hysteresis. Default off.
   */
  flakySegments?: true | FlakySegmentsOptions;
}

export interface FlakySegmentsOptions {
  /** Updates of a segment per decision (default 100). */
  window?: number;
  /** An explicit switch threshold in (0, 1] for catch-ups per update (default: the break-even rate (S - d) / S). */
  breakEven?: number;
}

export interface PromptContextOptions extends PromptRenderOptions {
  /** The entry's description (default: a line saying the block is data, not instructions, and what its markers mean). */
  description?: string;
}

export interface StateSyncProxyStats {
  threads: number;
  /** Runs held (live, or finished and kept for resumption). */
  runs: number;
  /** Runs this instance holds that are still streaming from their upstream (copies of other instances' runs not counted). */
  liveRuns: number;
  /** Bytes of sent events kept for resumption. */
  bufferedBytes: number;
  runsStarted: number;
  /** Runs this instance ended as 'run-lost' (a Redis store: their holder died or could not write their log). */
  runsLost: number;
  /** Upstream non-state events passed on. */
  passed: number;
  deltasSent: number;
  snapshotsSent: number;
  upstreamBytes: number;
  clientBytes: number;
  /** Times an upstream's state stream stopped applying (state events held). */
  upstreamInconsistent: number;
  /** Upstream events that were not JSON objects (dropped). */
  upstreamMalformed: number;
  /** Client connections cut for leaving more than maxClientQueueBytes unread. */
  slowClientsCut: number;
  /** Grace periods of a run held here that ended with its clients at another instance (the run was kept). */
  graceKept: number;
  /** Activity events the proxy stamped and sent (docs/wire.md section 11). */
  activityEventsSent: number;
  /** Times an upstream's activity stopped applying (held where the proxy last vouched for it). */
  upstreamActivityResyncs: number;
  /** Clients' edits judged, by verdict. */
  edits: { applied: number; rejected: number };
  resumes: { exact: number; 'caught-up': number; lost: number };
  /** X-AGUI-Attach requests, by what they found: the thread's running run, or none (a catch-up). */
  attaches: { run: number; idle: number };
  aborts: { client: number; abandoned: number };
  /** The flakySegments option, by connection type: 1 while on a snapshot per update, and the mode switches. */
  flakySegments: { snapshotMode: Record<string, 0 | 1>; switches: Record<string, number> };
}

/** A Node (req, res) handler: `http.createServer(createStateSyncProxy({ upstream }))`. */
export interface StateSyncProxy {
  (req: ProxyRequest, res: ProxyResponse): void;
  /** Stops taking new runs (503; resumes still served) and resolves once no run is live. */
  drain(): Promise<void>;
  /** True once drain() was called. */
  readonly draining: boolean;
  /** Aborts every run (its clients get RUN_ERROR) and frees every engine. */
  close(): void;
  stats(): StateSyncProxyStats;
}

/** What the access gate asks the authorize option. */
export interface AccessRequest {
  kind: 'attach' | 'resume' | 'start';
  threadId: string;
  /** The request's headers, as Node read them (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
}

/**
 * An authorize option that asks `url` (in the manner of nginx auth_request): a GET with the
 * requester's credential headers and X-AGUI-Thread / X-AGUI-Access; a 2xx authorizes.
 */
export function authorizeUrl(
  url: string | URL,
  options?: { credentialHeaders?: string[]; timeoutMs?: number },
): (request: AccessRequest) => Promise<boolean>;

/** Throws an AguiSyncError 'invalid-options' (a TypeError) for a wrong option. */
export function createStateSyncProxy(options: StateSyncProxyOptions): StateSyncProxy;

/** The defaults of every numeric limit, and forwardHeaders. */
export const PROXY_DEFAULTS: Readonly<Required<Omit<StateSyncProxyOptions, 'upstream' | 'emitter' | 'edits' | 'onError' | 'forwardHeaders' | 'credentialHeaders' | 'authorize' | 'promptContext' | 'flakySegments'>> & { forwardHeaders: readonly string[]; credentialHeaders: readonly string[] }>;

/** 'X-AGUI-Abort': POST it with a runId to the stream's path to abort that run. */
export const HEADER_ABORT: string;
/**
 * 'X-AGUI-Attach': GET the stream's path with it set to a threadId to attach to the thread's running
 * run (or, with none, to be caught up); the response carries 'run' or 'idle'.
 */
export const HEADER_ATTACH: string;
/** 'X-AGUI-Resume' (response): how a Last-Event-ID reconnect was answered: 'exact' | 'caught-up' | 'lost'. */
export const HEADER_RESUME: string;
/** CUSTOM event name: the upstream's state stream stopped applying; state events are held. value: { reason, detail, seq }. */
export const UPSTREAM_INCONSISTENT: 'agui-state-sync.upstream-inconsistent';
/** CUSTOM event name: the upstream sent a snapshot again; state flows from there. value: { seq }. */
export const UPSTREAM_CONSISTENT: 'agui-state-sync.upstream-consistent';
/** CUSTOM event name: a resume from an event no longer held. value: { after, resumedAt }. */
export const EVENTS_LOST: 'agui-state-sync.events-lost';

/**
 * The operator's (req, res) handler for a proxy, for a port of its own: GET /healthz (liveness),
 * /readyz (503 while draining or while `store` does not answer), /metrics (Prometheus text; needs
 * the optional peer prom-client). Rejects with 'invalid-options' without prom-client.
 */
export function createOpsHandler(
  proxy: StateSyncProxy,
  options?: { store?: unknown; register?: unknown; storeTimeoutMs?: number },
): Promise<((req: ProxyRequest, res: ProxyResponse) => void) & { registry: unknown }>;
