// Type declarations for agui-state-sync/server (written by hand; see src/server.js).
import type {
  ActivityPosition, AguiSyncError, Approval, ApprovalActivities, DurableStateEmitter, EditPolicy, EditRequest, EditResult, EmitterStore, JsonValue, PromptRenderOptions,
  StateEmitter, StateEvent,
  StateSyncPosition,
} from './index.js';

export type { DurableStateEmitter, EmitterStore } from './index.js';
export { initServerEngine } from './index.js';

export type CatchUpMode = 'current' | 'replay' | 'snapshot';

/** Header-carrying request: Node IncomingMessage, fetch Request, or a plain object. */
export interface RequestWithHeaders {
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null };
}

/** A RunAgentInput carrying forwardedProps.stateSync. */
export interface RunAgentInputWithPosition {
  forwardedProps?: { stateSync?: Partial<Record<'lastSeq' | 'epoch' | 'reason' | 'held' | 'edits' | 'activities', unknown>>; [key: string]: unknown };
  [key: string]: unknown;
}

export type CatchUpRequest = RequestWithHeaders | RunAgentInputWithPosition | null | undefined;

/** Reasons for which the server always answers with a snapshot. */
export const SNAPSHOT_REASONS: ReadonlySet<string>;
/** 'X-AGUI-State-Sync' */
export const HEADER_CATCH_UP: string;
/** 'X-AGUI-State-Held' (request): the seqs the client holds, "12,13,15". */
export const HEADER_HELD: string;
/** The most held seqs a request carries (64). */
export const MAX_HELD: number;
/** 'X-AGUI-State-Activities' (request): the client's activity positions, percent-encoded JSON (docs/wire.md section 11). */
export const HEADER_ACTIVITIES: string;
/** The most activity positions a request carries (64). */
export const MAX_ACTIVITY_POSITIONS: number;
/** [{ messageId, lastSeq, epoch, reason }] -> the X-AGUI-State-Activities value. */
export function formatActivities(positions: readonly ActivityPosition[]): string;
/** Each activity's catch-up mode, after the state's (when the client said where its activities are). */
export type ActivityCatchUps = { messageId: string; mode: CatchUpMode }[];
/** "12,13,15" or [12, 13, 15] -> valid seqs, ascending, unique, at most MAX_HELD; bad entries dropped, never throws. */
export function parseHeld(value: unknown): number[];
/** [15, 12, 13] -> "12,13,15" ("" when none is valid). */
export function formatHeld(held: readonly number[]): string;

/** Where the client says it is. */
export function readResyncRequest(request: CatchUpRequest): StateSyncPosition & { lastEventId: string | null };

/** What to send a (re)connecting client before live events (a Promise for a store-bound emitter). */
export function catchUp<S>(emitter: DurableStateEmitter<S>, request: CatchUpRequest): Promise<{ mode: CatchUpMode; events: StateEvent<S>[]; activities?: ActivityCatchUps }>;
export function catchUp<S>(emitter: StateEmitter<S>, request: CatchUpRequest): { mode: CatchUpMode; events: StateEvent<S>[]; activities?: ActivityCatchUps };

/** Minimal writable response (Node http.ServerResponse fits). */
export interface SseResponse {
  write(chunk: string): unknown;
  setHeader?(name: string, value: string): unknown;
  readonly headersSent?: boolean;
  readonly writableEnded?: boolean;
  readonly destroyed?: boolean;
  on?(event: 'close', listener: () => void): unknown;
  off?(event: 'close', listener: () => void): unknown;
}

/** catchUp() written to `res` (sets X-AGUI-State-Sync if headers are not sent yet). */
export function writeCatchUp<S>(res: SseResponse, emitter: DurableStateEmitter<S>, request: CatchUpRequest): Promise<{ mode: CatchUpMode; events: StateEvent<S>[]; activities?: ActivityCatchUps }>;
export function writeCatchUp<S>(res: SseResponse, emitter: StateEmitter<S>, request: CatchUpRequest): { mode: CatchUpMode; events: StateEvent<S>[]; activities?: ActivityCatchUps };

/**
 * Writes a heartbeat every `intervalMs` (default 5000); returns stop().
 * `options.write` receives each line instead of `res.write` (for servers that queue writes).
 */
export function startHeartbeat(
  res: SseResponse,
  emitter: StateEmitter<any> | DurableStateEmitter<any>,
  intervalMs?: number,
  options?: { write?: (line: string) => void },
): () => void;

/** Most edits one RunAgentInput may carry (1024). */
export const MAX_RUN_EDITS: number;
/** Longest editId in UTF-8 bytes (256). */
export const MAX_EDIT_ID_BYTES: number;

/** A malformed or oversized stateSync.edits: answer with `status` (400). */
export interface RunEditsError extends AguiSyncError {
  readonly code: 'invalid-request';
  readonly status: 400;
}

/**
 * forwardedProps.stateSync.edits of `input`, checked as hostile input: a fresh array, or null when
 * it carries none. Throws a RunEditsError for anything malformed (nothing is applied).
 */
export function readRunEdits(input: unknown, options?: { maxDepth?: number }): Array<Required<EditRequest> & { baseSeq: number | null }> | null;

/**
 * Judges `input`'s stateSync.edits with the thread's emitter before the agent runs: null when it
 * carries none, else the events for the thread's clients (metadata.acks), one verdict per edit, and
 * a copy of the merged state to run the agent on. Throws as readRunEdits and emitter.applyEdits do.
 */
export function applyRunEdits<S = JsonValue>(
  emitter: StateEmitter<S>,
  input: unknown,
  policy?: EditPolicy,
  options?: { maxDepth?: number },
): { events: StateEvent<S>[]; results: EditResult[]; state: S } | null;

export interface StoreLogger {
  warn(message: string): void;
  info(message: string): void;
}

/** The in-process store (the default behaviour, plus continuity for emitters re-created on a key). */
export function memoryStore(options?: { ttlMs?: number; now?: () => number; logger?: StoreLogger }): EmitterStore;

export interface RedisStoreOptions {
  /** 'redis://host:port' (default: the client's default, redis://127.0.0.1:6379). */
  url?: string;
  /** A node-redis client of your own (then url is not used, and close() leaves it open). */
  client?: unknown;
  /** Key prefix (default 'agui:'); a thread's keys are <prefix>{<key>}:meta|state|log. */
  prefix?: string;
  /** A thread not written for this long expires (default 1 day). */
  ttlMs?: number;
  /** consumeApproval's records expire after this (default 7 days). */
  approvalTtlMs?: number;
  /** Per command, and how long an operation waits for a connection (default 2000). */
  timeoutMs?: number;
  logger?: StoreLogger;
}

/** The Redis store (needs the npm package `redis`): Streams for the log, keys for seq, epoch and state. */
export function redisStore(options?: RedisStoreOptions): EmitterStore & {
  readonly prefix: string;
  /** The connected node-redis client, for an app's own commands next to the store's. */
  client(): Promise<any>;
  /** Closes the connections the store opened, for good: any call after it rejects `store-unavailable`. */
  close(): Promise<void>;
};

export interface ConsumedApproval {
  /** Act only when true. */
  ok: boolean;
  decision: 'approved' | 'refused';
  /** The first decision, recorded earlier (a re-sent resume, another instance, a restart). */
  replayed: boolean;
  /** The effect's idempotency key (null when refused). */
  effectKey: string | null;
  /**
   * Why it was refused: 'changed' (not verified), 'invalid-token', 'already-consumed' (resolved by
   * another approval), 'missing' (it names an activity the agent does not hold).
   */
  reason?: 'changed' | 'invalid-token' | 'already-consumed' | 'missing';
}

/**
 * Verifies `approval` as verifyApproval does and records it once per (threadId, interruptId) in
 * `store`. Rejects with 'store-unavailable' when the store is unreachable (nothing decided).
 */
export function consumeApproval(
  approval: Approval | unknown,
  agentState: unknown,
  options: { store: EmitterStore; threadId: string; interruptId?: string; activities?: ApprovalActivities },
): Promise<ConsumedApproval>;

/**
 * A stable idempotency key (64 hex digits) for the effect `approval` authorizes, the same in Python.
 * Needs the server engine (await initServerEngine(), or a StateEmitter created); 'not-loaded' otherwise.
 */
export function effectKey(approval: Approval, context?: { threadId?: string | null; interruptId?: string | null }): string;
/**
 * Runs `effect(key)` at most once per `key` in `store` and resolves to its result; a replayed
 * step resolves to the recorded result (as JSON keeps it) without running the effect. The effect
 * gets the key to pass on as the downstream API's idempotency key. Rejects with 'run-active'
 * while another caller holds the key's lease (default 60 s), with what the effect threw (nothing
 * recorded, the lease given back), or with 'store-unavailable'. Python's `once()` shares the records.
 */
export function once<T>(
  store: EmitterStore,
  key: string,
  effect: (key: string) => T | Promise<T>,
  options?: { scope?: string; leaseMs?: number },
): Promise<T>;
/** A chat message for the agent's model (an AG-UI Message also needs an id). */
export interface PromptMessage {
  role: 'user';
  /** A one-line preamble saying the block is data, not instructions, then renderStateForPrompt's text. */
  content: string;
}

/**
 * The state as a lower-trust message: use it instead of pasting the state into a
 * system prompt. Synchronous; needs the server engine (await initServerEngine()).
 * Throws what renderStateForPrompt throws.
 */
export function promptMessage(state: unknown, options?: PromptRenderOptions): PromptMessage;
