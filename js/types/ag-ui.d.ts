// Type declarations for agui-state-sync/ag-ui (written by hand; see
// src/ag-ui.js). Needs the optional peer dependencies @ag-ui/client (>= 1.0)
// and rxjs (>= 7). Observable types are taken from @ag-ui/client's own
// signatures, so they match whichever rxjs copy it resolves.
import { HttpAgent, Middleware } from '@ag-ui/client';
import type { AbstractAgent, HttpAgentConfig, RunAgentInput } from '@ag-ui/client';
import type {
  AguiSyncError,
  ConnectStatus,
  EditPolicy,
  JsonPatchOperation,
  JsonValue,
  LocalEditResult,
  Outcome,
  StateEmitter,
  StateEmitterOptions,
  StateEvent,
  StateSync,
  StateSyncOptions,
} from './index.js';

/** `stateSync` of a StateSyncHttpAgent: createStateSync options plus the reconnect loop's. */
export interface StateSyncAgentOptions<S = JsonValue> extends StateSyncOptions<S> {
  /** Reconnect backoff, as for connectStateSync (default 500 ms doubling to 10 s, jitter 0.5). */
  backoff?: { initialMs?: number; maxMs?: number; factor?: number; jitter?: number | boolean };
  /** A connection with no byte (heartbeats count) for this long is broken (off by default). */
  idleTimeoutMs?: number;
  /**
   * Where abortRun() POSTs `X-AGUI-Abort: <runId>` (with the agent's headers), for a
   * server that keeps runs going across broken connections (the agui-state-sync proxy:
   * the agent's own url). Unset: no abort request. Failures are ignored.
   */
  abortUrl?: string | URL;
  /** Connection status of the run in flight (connecting, open, waiting, closed). */
  onStatus?: (status: ConnectStatus) => void;
  /** Every engine outcome, as connectStateSync's onOutcome (resyncs, ignored events, errors, edit acks, rejections and conflicts). */
  onOutcome?: (outcome: Outcome<S>) => void;
}

export interface StateSyncHttpAgentConfig<S = JsonValue> extends HttpAgentConfig {
  stateSync?: StateSyncAgentOptions<S>;
}

/**
 * @ag-ui/client's HttpAgent with the shared state kept by the engine:
 * `agent.state` is always `agent.stateSync.state` (the same object), subscribers'
 * onStateChanged fire with it, and a broken connection or a resync makes the same
 * runAgent() call reconnect with the catch-up request. Everything else (messages,
 * tool calls, interrupts, middleware, runAgent()'s result) is @ag-ui/client's.
 */
export class StateSyncHttpAgent<S = JsonValue> extends HttpAgent {
  constructor(config: StateSyncHttpAgentConfig<S>);
  /** Resolves with the StateSync once the engine is loaded (runAgent() waits for it too). */
  get ready(): Promise<StateSync<S>>;
  /** Status, guard, metrics, resyncRequest. Throws an AguiSyncError 'not-loaded' before `ready`. */
  get stateSync(): StateSync<S>;
  /**
   * @ag-ui/client's connectAgent(): attaches to the thread's running run on a server that keeps runs
   * (the agui-state-sync proxy: GET with X-AGUI-Attach): the state by catch-up, the run's events so far,
   * then live; with no run going on, brings the state up to date. Resolves when that run ends.
   */
  connectAgent(...args: Parameters<HttpAgent['connectAgent']>): ReturnType<HttpAgent['connectAgent']>;
  /** Called by abortRun() with the aborted run's id; by default POSTs to `stateSync.abortUrl`. Override for other transports. */
  abortRequest(runId: string): void;
  /**
   * A user edit (sync.edit on the agent's StateSync): agent.state shows it at once
   * (onStateChanged), and it travels in forwardedProps.stateSync.edits of every
   * request (RunAgentInput.state is the visible state) until the agent acknowledges
   * it; acks and conflicts arrive as outcomes (stateSync.onOutcome). Throws an
   * AguiSyncError 'not-loaded' before `ready`.
   */
  edit(ops: JsonPatchOperation[]): LocalEditResult;
  /**
   * A local state change: the engine takes it as an unsequenced snapshot (status
   * 'unverified', position dropped). Throws an AguiSyncError while a run is active.
   */
  setState(state: S): void;
  /** A copy with its own engine, starting (unverified) from this agent's state. */
  clone(): StateSyncHttpAgent<S>;
  /** Aborts any run and frees the engine. */
  dispose(): void;
}

/** What sequenceState() reports when the agent's state and what it said no longer match. */
export interface InconsistentStateInfo {
  threadId: string;
  runId: string;
  /** The agent's event that was not sent. */
  event: StateEvent;
  /** 'refused': the emitter refused it (error says why); 'suspended': a delta after such a refusal, before the next snapshot. */
  reason: 'refused' | 'suspended';
  error: AguiSyncError | null;
}

export interface SequenceStateOptions {
  /** Threads whose emitters are kept, least recently used dropped first (default 1000; threads in a run are never dropped). */
  maxThreads?: number;
  /** An idle thread's emitter is dropped after this long (default 30 min). */
  idleTtlMs?: number;
  /** Options of each thread's StateEmitter (its epoch and initial state are set per thread). */
  emitter?: Omit<StateEmitterOptions, 'epoch' | 'initialState'>;
  /** How clients' edits (forwardedProps.stateSync.edits) are judged before the agent runs (default: all shared, 'agent-wins'). */
  edits?: EditPolicy;
  /** Hears of every agent state event that was not sent (default: one console.warn per run). */
  onInconsistent?: (info: InconsistentStateInfo) => void;
}

/** The Middleware sequenceState() returns. */
export class SequenceStateMiddleware extends Middleware {
  constructor(options?: SequenceStateOptions);
  run(input: RunAgentInput, next: AbstractAgent): ReturnType<Middleware['run']>;
  /** The thread's StateEmitter (seq, state, stats), or null when it has none (yet, or any more). */
  emitterFor(threadId: string): StateEmitter | null;
  /** Threads currently kept. */
  readonly threads: number;
  /** Frees every thread's emitter. */
  dispose(): void;
}

/**
 * An @ag-ui/client Middleware for servers that run AG-UI agents: stamps the
 * agent's state events with seq / baseSeq / epoch / digest (one StateEmitter
 * per threadId) and answers forwardedProps.stateSync at the start of a run.
 */
export function sequenceState(options?: SequenceStateOptions): SequenceStateMiddleware;
