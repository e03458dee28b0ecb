// Type declarations for agui-state-sync/log (written by hand; see src/log.js).
import type { AguiEvent, AguiSyncError, JsonValue, StateSyncOptions } from './index.js';

/** The log format version written, and the newest one read. */
export const LOG_VERSION: 1;

/**
 * An error about a log: an AguiSyncError ('invalid-json', 'invalid-event',
 * 'invalid-seq', 'patch-failed', 'precondition-failed', ...) that says where:
 * `line` (1-based) in a log text, `index` (0-based) in an event array.
 */
export interface LogError extends AguiSyncError {
  readonly line?: number;
  readonly index?: number;
}

export interface ParseLogOptions {
  /**
   * A last line without its newline that does not parse is a torn append (the
   * writer stopped mid-line): drop it instead of failing (default false).
   */
  dropTornTail?: boolean;
}

/** A piece of a log: text, or UTF-8 bytes (split anywhere). */
export type LogChunk = string | Uint8Array | ArrayBufferView | ArrayBuffer;

/** The header line {"aguiLog":1}, newline included. */
export function serializeLogHeader(): string;
/** One event as a log line, newline included: append it to a log file. */
export function serializeLogEvent(event: AguiEvent): string;
/** A whole log: the header, then one JSON line per event. */
export function serializeLog(events: readonly AguiEvent[]): string;
/** Every event of a whole log text; a bad line throws a LogError naming it. */
export function parseLog(text: string, options?: ParseLogOptions): AguiEvent[];
/** The events of a log read in chunks (a Node Readable, a web ReadableStream, ...), as lines complete. */
export function parseLogStream(
  source: AsyncIterable<LogChunk> | Iterable<LogChunk> | ReadableStream<LogChunk>,
  options?: ParseLogOptions,
): AsyncGenerator<AguiEvent, void, undefined>;

/** The engine limits and wasm location the replaying functions pass to createStateSync. */
export type LogOptions = Pick<
  StateSyncOptions,
  'reorderWindow' | 'reorderBytes' | 'maxGapEvents' | 'maxEventBytes' | 'maxDepth' | 'maxStateBytes' | 'wasmBinary' | 'locateFile'
>;

/**
 * The log made small, replaying to the same state (at the end and after every
 * run), messages and tool calls: text and tool-call arguments merged, each
 * stretch of state events between run boundaries folded into one
 * STATE_SNAPSHOT (metadata: seq, epoch, digest where the position was
 * verified). Rejects with a LogError where a state event does not apply.
 */
export function compactEvents(events: readonly AguiEvent[], options?: LogOptions): Promise<AguiEvent[]>;

/** Where two logs first differ (JSON Pointer `path`; `a` / `b` absent where the value is missing). */
export type LogDifference =
  | { kind: 'state'; path: string; a?: JsonValue; b?: JsonValue }
  | { kind: 'run' | 'message' | 'tool-call'; id: string; path: string; a?: unknown; b?: unknown }
  | { kind: 'replay'; side: 'a' | 'b'; code: AguiSyncError['code']; message: string; index?: number };

export interface Equivalence {
  equal: boolean;
  /** null when equal. */
  firstDifference: LogDifference | null;
}

/**
 * Replays both logs through the engine (following parentRunId) and compares
 * the final state, the state at the end of every run, the messages and the
 * tool calls.
 */
export function replayEquivalent(a: readonly AguiEvent[], b: readonly AguiEvent[], options?: LogOptions): Promise<Equivalence>;

/** A point of the log: the end of a run, or the state event that reaches a seq (optionally of an epoch, within a run's lineage). */
export type LogPoint = { runId: string } | { seq: number; epoch?: string | number; runId?: string };

/** The state at `point`, following parentRunId lineage. */
export function stateAt<S = JsonValue>(events: readonly AguiEvent[], point: LogPoint, options?: LogOptions): Promise<S>;

/** What a new run branching from the end of `parentRunId` starts from. */
export interface Branch<S = JsonValue> {
  /** The parent's lineage compacted (other branches left out). */
  events: AguiEvent[];
  threadId: string | null;
  /** RUN_STARTED.parentRunId of the new run. */
  parentRunId: string;
  /** The state at the end of the parent run (an emitter's initialState). */
  state: S;
  /** The verified position there, or null. */
  seq: number | null;
  epoch: string | number | null;
}

export function branchFrom<S = JsonValue>(events: readonly AguiEvent[], runId: string, options?: LogOptions): Promise<Branch<S>>;

/** One run of a thread log, as listRuns() sees it (no replay). */
export interface LogRun {
  runId: string;
  threadId: string | null;
  /** The run it started from: RUN_STARTED.parentRunId, else the run before it in the log; null for the first run. */
  parentRunId: string | null;
  /** True when RUN_STARTED named its parent (a branch), false when it followed the run before it. */
  branched: boolean;
  /** 0 for a first run, the parent's depth + 1 otherwise. */
  depth: number;
  /** Its RUN_STARTED's index, and one past its last event (up to the next RUN_STARTED). */
  startIndex: number;
  endIndex: number;
  eventCount: number;
  stateEvents: number;
  /** The seqs its state events claim (metadata.seq or top-level seq), or null. */
  firstSeq: number | null;
  lastSeq: number | null;
  epoch: string | number | null;
  /** 'finished' after RUN_FINISHED, 'error' after RUN_ERROR, else 'running'. */
  status: 'running' | 'finished' | 'error';
  /** RUN_FINISHED.outcome (for example an interrupt), or { type: 'error', message, code }; null when none. */
  outcome: unknown;
  /** RUN_STARTED.input (the RunAgentInput it echoes), or null. */
  input: Record<string, unknown> | null;
}

/**
 * The runs of a log in log order, with their lineage: what a run history
 * draws. One pass, no engine; throws a LogError where the lineage is not a
 * tree (a parentRunId naming no earlier run, a run restarted after another).
 */
export function listRuns(events: readonly AguiEvent[]): LogRun[];
