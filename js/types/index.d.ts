// Type declarations for agui-state-sync (written by hand; see src/). The code
// unions come from codes.d.ts, generated from the C++ table: never edit that one.

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type SyncStatus = 'synced' | 'unverified' | 'resyncing';

/**
 * The codes, generated from the C++ table (docs/codes.md): ResyncReason (why
 * the engine asks for a snapshot or a replay), IgnoredReason (why an event
 * changed nothing), ErrorCode (an error outcome's code, AguiSyncError.code),
 * GuardReason (why the approval guard refuses).
 */
export type { ErrorCode, GuardReason, IgnoredReason, ResyncReason } from './codes.js';
import type { ErrorCode, GuardReason, IgnoredReason, ResyncReason } from './codes.js';

/**
 * Every error agui-state-sync throws. Branch on `code` (ErrorCode, docs/codes.md),
 * never on `message`. Argument and option errors ('invalid-argument',
 * 'invalid-options') are also `instanceof TypeError`. `name` stays 'Error'
 * (or 'TypeError'), so String(error) reads like a plain Error's.
 */
export class AguiSyncError extends Error {
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; opIndex?: number; status?: number });
  /** What went wrong (ERROR_CODES in docs/codes.md). */
  readonly code: ErrorCode;
  /** A refused patch: the index of the operation that did not apply. */
  readonly opIndex?: number;
  /** 'http-error': the response's HTTP status. */
  readonly status?: number;
  static [Symbol.hasInstance](value: unknown): value is AguiSyncError;
}

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: JsonValue }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** Sequencing metadata of the agui-state-sync wire extension. */
export interface SyncMetadata {
  seq?: number;
  baseSeq?: number;
  epoch?: string | number;
  digest?: string;
  [key: string]: unknown;
}

export interface StateSnapshotEvent<S = JsonValue> {
  type: 'STATE_SNAPSHOT';
  snapshot: S;
  metadata?: SyncMetadata;
  [key: string]: unknown;
}

export interface StateDeltaEvent {
  type: 'STATE_DELTA';
  delta: JsonPatchOperation[];
  metadata?: SyncMetadata;
  [key: string]: unknown;
}

/** Any other AG-UI event (RUN_STARTED, TEXT_MESSAGE_CONTENT, ...), as parsed JSON. */
export interface AguiEvent {
  type: string;
  [key: string]: unknown;
}

export interface AppliedOutcome<S = JsonValue> {
  kind: 'applied';
  type: 'STATE_SNAPSHOT' | 'STATE_DELTA';
  /** The event's seq, or null for an unsequenced event. */
  seq: number | null;
  /** The state after this event (=== sync.state if it was the last one). */
  state: S;
  /** JSON Pointers the event wrote ("" = the whole state). */
  changedPaths: string[];
  /** The event as received. */
  event: StateSnapshotEvent<S> | StateDeltaEvent;
}

export interface ResyncOutcome {
  kind: 'resync';
  reason: ResyncReason;
  lastSeq: number | null;
  lastEventId: string | null;
  /** Human-readable explanation. */
  detail: string;
}

export interface EventOutcome {
  kind: 'event';
  event: AguiEvent;
}

export interface IgnoredOutcome {
  kind: 'ignored';
  reason: IgnoredReason;
  seq: number | null;
}

export interface ErrorOutcome {
  kind: 'error';
  code: ErrorCode;
  message: string;
}

export type Outcome<S = JsonValue> = AppliedOutcome<S> | ResyncOutcome | EventOutcome | IgnoredOutcome | ErrorOutcome;

/** What to tell the server when the status is 'resyncing'. */
export interface ResyncRequest {
  reason: ResyncReason;
  lastSeq: number | null;
  lastEventId: string | null;
  /**
   * Seqs of the deltas held in the reorder window, ascending ([] when none):
   * sent as X-AGUI-State-Held so a replay can leave them out (docs/wire.md §3).
   */
  held: number[];
}

export interface SyncMetrics {
  events: number;
  heartbeats: number;
  snapshots: number;
  resyncSnapshots: number;
  deltasApplied: number;
  duplicates: number;
  staleSnapshots: number;
  held: number;
  reordersHealed: number;
  errors: number;
  resyncs: number;
  resyncsByReason: Record<string, number>;
  snapshotBytes: number;
  resyncSnapshotBytes: number;
  deltaBytes: number;
  deltaSavedBytes: number;
  netSavedBytes: number;
  stateBytes: number;
  digestChecks: number;
  /** Positions adopted from a delta's baseSeq on a half-sequenced stream (docs/wire.md section 6). */
  anchors: number;
  /** resyncs / deltasApplied (0 before the first delta). */
  taxRate: number;
  /** Times the JS mirror re-read the state from the engine (should stay 0). */
  mirrorReloads: number;
  [key: string]: unknown;
}

export interface StateSyncOptions<S = JsonValue> {
  /** Out-of-order deltas held while waiting for a gap to fill (default 64). */
  reorderWindow?: number;
  /** Bytes of held deltas (default 1 MiB). */
  reorderBytes?: number;
  /** Further state events a gap may outlive before a resync (default 32). */
  maxGapEvents?: number;
  /** Largest accepted SSE event data, in bytes (default 8 MiB). */
  maxEventBytes?: number;
  /** Deepest accepted nesting of the state (default 128). */
  maxDepth?: number;
  /** Largest accepted state, approximate serialized bytes (default 64 MiB). */
  maxStateBytes?: number;
  /** Starting state (status 'unverified'); sync.state starts as its JSON copy. */
  initialState?: S;
  /** The engine's .wasm bytes, for hosts that cannot fetch or read js/wasm/agui_sync.wasm. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where to find 'agui_sync.wasm' (Emscripten's locateFile). */
  locateFile?: (path: string, prefix: string) => string;
  /** Approvals are refused ('stale') when no byte arrived for this long (default 15000 ms). */
  staleAfterMs?: number;
  /** Allow approvals on a stream without seq numbers (status 'unverified'; default false). */
  trustUnsequenced?: boolean;
  /** The guard's clock in milliseconds, any monotonic origin (default performance.now / Date.now). */
  now?: () => number;
  /**
   * While guard.watch() has listeners, re-check staleness every this many ms
   * (default 0: only after feed/end/reset and guard.check()). The timer never
   * keeps a Node process alive.
   */
  staleCheckMs?: number;
}

export type Unsubscribe = () => void;

/** What the person was shown: hand it back to guard.approve(). */
export interface ViewToken {
  path: string;
  /** lastSeq when viewed (null on an unsequenced stream). */
  seq: number | null;
  /** stateDigest() of the value at path. */
  digest: string;
}

/** An approval the agent can check against its own state (verifyApproval). */
export interface Approval {
  path: string;
  /** lastSeq when approved. */
  seq: number | null;
  /** lastSeq when the value was viewed. */
  viewedSeq: number | null;
  /** stateDigest() of the approved value. */
  digest: string;
  /** The sender's epoch, or null. */
  epoch: string | null;
  /** The AG-UI interrupt this approval answers (approve(token, { interruptId })). */
  interruptId?: string;
}

export type GuardRefusal = { ok: false; reason: GuardReason };
export type ViewResult<V = JsonValue> = { ok: true; value: V; token: ViewToken } | GuardRefusal;
export type ApproveResult = { ok: true; approval: Approval } | GuardRefusal;

/** What guard.watch() delivers. */
export interface GuardWatchState<V = JsonValue> {
  /** The value at the path in sync.state (undefined when missing). */
  value: V | undefined;
  /** True when approve(token) would succeed right now. */
  approvable: boolean;
  /** null when approvable, else why not. */
  reason: GuardReason | null;
  /** Approves exactly `value` (null when the path is missing). */
  token: ViewToken | null;
}

/** An AG-UI 1.0 Interrupt (RUN_FINISHED outcome { type: 'interrupt', interrupts }). */
export interface Interrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  expiresAt?: string;
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Extra fields for a resume payload: anything but `approved` and `approval`. */
export type ExtraPayload = object & { approved?: never; approval?: never };

/** An AG-UI 1.0 ResumeEntry (RunAgentInput.resume is an array of these). */
export interface ResumeEntry<P extends ExtraPayload = {}> {
  interruptId: string;
  status: 'resolved';
  payload: { approved: true; approval: Approval } & P;
}

export interface ApprovalGuard<S = JsonValue> {
  /** The value at `path` (JSON Pointer) and a token to approve it with. */
  view<V = JsonValue>(path: string): ViewResult<V>;
  /**
   * An approval if the state is verified, live, not waiting on a gap, and the
   * value at token.path still has token.digest. Never throws for state.
   */
  approve(token: ViewToken, options?: { interruptId?: string }): ApproveResult;
  /** null when approvals are possible now, else why not (resyncing, unverified, disconnected, stale, gap-pending, ...). */
  blocker(): GuardReason | null;
  /**
   * Calls `listener` now and whenever the value at `path` (by identity) or its
   * approvability changes (checked after feed/end/reset and guard.check()).
   */
  watch<V = JsonValue>(path: string, listener: (state: GuardWatchState<V>) => void): Unsubscribe;
  /** Re-evaluates watchers now (staleness depends on the clock). */
  check(): void;
  /** The open AG-UI interrupts. */
  interrupts(): Interrupt[];
  /** The resume entry answering `approval.interruptId` with this approval. */
  resumeEntry<P extends ExtraPayload = {}>(approval: Approval, extraPayload?: P): ResumeEntry<P>;
}

export interface StateSync<S = JsonValue> {
  /**
   * Feeds one chunk of an SSE byte stream (any chunking). Returns one Outcome per
   * complete SSE event in it (a malformed state event yields 'error' then 'resync';
   * a delta that fills a gap is followed by the held deltas it frees).
   */
  feed(chunk: Uint8Array | string): Outcome<S>[];
  /** The byte stream ended or broke: a pending gap becomes a resync. */
  end(): Outcome<S>[];
  /** A new connection starts (keeps state, lastSeq, lastEventId). */
  reset(): void;
  /** The current state; never modified in place. Untouched subtrees keep their identity across deltas. */
  readonly state: S;
  readonly status: SyncStatus;
  readonly lastSeq: number | null;
  readonly lastEventId: string | null;
  resyncRequest(): ResyncRequest | null;
  metrics(): SyncMetrics;
  /**
   * `listener` runs once after each feed()/end() call that changed the state or
   * the status. A listener that throws is reported (reportError / console.error)
   * and does not affect the engine or other listeners.
   */
  subscribe(listener: () => void): Unsubscribe;
  /** Frees the engine. Idempotent; any other call afterwards throws an AguiSyncError 'disposed' (guard answers 'disposed'). */
  dispose(): void;
  /** The sender's epoch (metadata.epoch of the snapshot the state came from), or null. */
  readonly epoch: string | null;
  /** The approval guard. */
  readonly guard: ApprovalGuard<S>;
}

/** Loads the WebAssembly engine (once per realm) and creates a StateSync. */
export function createStateSync<S = JsonValue>(options?: StateSyncOptions<S>): Promise<StateSync<S>>;

export interface EngineOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

/** Loads the engine (idempotent; shared with createStateSync) so that the synchronous helpers work. */
export function initEngine(options?: EngineOptions): Promise<void>;

/**
 * RFC 8785 canonical JSON of `value` (synchronous, needs a loaded engine).
 * TypeError for what JSON cannot represent (undefined, functions, BigInt, NaN, ...).
 */
export function canonicalJson(value: unknown): string;
/** "sha256:" + hex SHA-256 of canonicalJson(value). */
export function stateDigest(value: unknown): `sha256:${string}`;
/** True only if `agentState` at approval.path has approval.digest. False for any malformed input. */
export function verifyApproval(approval: unknown, agentState: unknown): boolean;

/** Who writes a part of the state, for `untrusted: 'auto'`. */
export type StateOwner = 'user' | 'agent' | 'shared';

/** Options of renderStateForPrompt (docs/prompt-rendering.md); every one is optional. */
export interface PromptRenderOptions {
  /** JSON Pointers of the subtrees to show (default: the whole state). */
  include?: string[];
  /** JSON Pointers of subtrees to leave out (wins over include). */
  exclude?: string[];
  /**
   * Subtrees the user wrote, wrapped as {"$untrusted": ...}: JSON Pointers, or
   * 'auto' for every subtree `ownership` gives to 'user'.
   */
  untrusted?: string[] | 'auto';
  /**
   * With untrusted: 'auto': who owns which subtree; the longest matching pointer
   * wins, a path none covers is 'shared'. E.g. { '/form': 'user', '/form/status': 'agent' }.
   */
  ownership?: Record<string, StateOwner>;
  /** Hard cap on `text` in bytes (default 32768; at least the size of the "state too large" block). */
  maxBytes?: number;
  /** UTF-8 bytes kept of one string (default 2048). */
  maxStringBytes?: number;
  /** Elements kept of one array (default 100). */
  maxArrayItems?: number;
  /** Container levels shown (default 16, at most 256). */
  maxDepth?: number;
  /** Marker interleaved in untrusted strings (spotlighting), e.g. '^'; 1-16 bytes, no whitespace. */
  datamark?: string;
  /** The element name, [a-z][a-z0-9_-]* (default 'shared_state'). */
  tag?: string;
}

/** Something renderStateForPrompt left out, and why. */
export interface PromptTruncation {
  /** JSON Pointer into the source state. */
  path: string;
  reason: 'string' | 'array' | 'depth' | 'budget' | 'key';
  /** Bytes left out (the RFC 8785 text of what was omitted; for a string its UTF-8 bytes). */
  droppedBytes: number;
}

export interface PromptRender {
  /** One data block: `<tag format="json">`, the JSON, `</tag>`; nothing in the state can end it. */
  text: string;
  /** UTF-8 bytes of `text` (<= maxBytes). */
  bytes: number;
  /** In output order. */
  truncated: PromptTruncation[];
  /** The pointers wrapped as {"$untrusted": ...}, in output order. */
  untrustedPaths: string[];
}

/**
 * The state as one prompt-safe data block (synchronous, needs a loaded engine):
 * escaped, in canonical key order, size-capped, user-written parts marked. The
 * same bytes as the C++ core's renderStateForPrompt. AguiSyncError
 * 'invalid-options' (a TypeError) for a bad option, 'invalid-argument' for a
 * state JSON cannot represent, 'limit-exceeded' for one nested deeper than 512.
 */
export function renderStateForPrompt(state: unknown, options?: PromptRenderOptions): PromptRender;

export interface StateEmitterOptions<S = JsonValue> extends EngineOptions {
  /** seq of the initial state (default 0). */
  startSeq?: number;
  /** Stamped on every event (default: a random id per emitter). */
  epoch?: string;
  /** metadata.digest on every K-th seq (default 16; 0 = never). */
  digestEvery?: number;
  /** Paths whose replace/remove update() precedes with a `test` op. */
  guardedPaths?: string[];
  /** `test` before every replace/remove update() emits. */
  testAll?: boolean;
  /** Send a snapshot when a delta is larger than this x the snapshot (default 0.8). */
  snapshotRatio?: number;
  /** Replay buffer caps (default 1024 events, 4 MiB). */
  replayMaxEvents?: number;
  replayMaxBytes?: number;
  /** Deepest accepted nesting (default 128). */
  maxDepth?: number;
  initialState?: S;
}

export interface EmitterStats {
  deltas: number;
  snapshots: number;
  digests: number;
  repaired: number;
  rejected: number;
  replays: number;
  replaySnapshots: number;
}

/** A STATE_SNAPSHOT or STATE_DELTA event, as sent. */
export type StateEvent<S = JsonValue> = StateSnapshotEvent<S> | StateDeltaEvent;

/** The AguiSyncError from a refused update()/patch(): the state is unchanged. */
export interface EmitterError extends AguiSyncError {
  readonly code: 'invalid-json' | 'invalid-patch' | 'patch-failed' | 'precondition-failed' | 'limit-exceeded' | 'seq-exhausted' | (string & {});
  readonly opIndex?: number;
}

export interface StateEmitter<S = JsonValue> {
  /** Events that take receivers from the current state to `newState` ([] if equal). */
  update(newState: S): StateEvent<S>[];
  /** Applies RFC 6902 ops atomically; throws an EmitterError (an AguiSyncError with opIndex) if they do not apply. */
  patch(ops: JsonPatchOperation[]): StateEvent<S>[];
  snapshot(): StateSnapshotEvent<S>;
  /** "id: <seq>\ndata: <JSON>\n\n". */
  encode(event: AguiEvent | StateEvent<S>, options?: { id?: boolean }): string;
  /** ": hb <seq>\n\n". */
  heartbeat(): string;
  /**
   * What a client at `seq` (of `epoch`; null/undefined = not checked) needs: [],
   * the missed deltas, or one snapshot. `held`: seqs the client already holds
   * (ResyncRequest.held), left out of a replay (except the first missed delta).
   */
  replaySince(seq: number, epoch?: string | null, held?: readonly number[]): StateEvent<S>[];
  readonly seq: number;
  readonly epoch: string;
  /** The current state, parsed once per change; treat as read-only. */
  readonly state: S;
  stats(): EmitterStats;
  dispose(): void;
}

export function createStateEmitter<S = JsonValue>(options?: StateEmitterOptions<S>): Promise<StateEmitter<S>>;

/** Where a client is, as sent on reconnect (forwardedProps.stateSync, or the headers). */
export interface StateSyncPosition {
  lastSeq: number | null;
  epoch: string | null;
  reason: string | null;
  /** Seqs the client holds in its reorder window, ascending (X-AGUI-State-Held; [] when none). */
  held: number[];
}

/** An AG-UI RunAgentInput (only what connectStateSync touches is typed). */
export interface RunAgentInputLike {
  threadId: string;
  runId: string;
  forwardedProps?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ConnectContext extends StateSyncPosition {
  /** 1 for the first request. */
  attempt: number;
  lastEventId: string | null;
}

export type ConnectStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'open'; attempt: number; catchUp: 'current' | 'replay' | 'snapshot' | (string & {}) | null }
  | { state: 'waiting'; attempt: number; delayMs: number; error: unknown }
  | { state: 'closed'; error?: unknown };

export interface ConnectOptions<S = JsonValue> {
  url: string | URL;
  init?: RequestInit;
  /** The RunAgentInput to POST on each attempt; forwardedProps.stateSync is filled in. */
  body?: (context: ConnectContext) => RunAgentInputLike | undefined;
  fetch?: (input: string | URL, init?: RequestInit) => Promise<Response>;
  backoff?: { initialMs?: number; maxMs?: number; factor?: number; jitter?: number | boolean };
  signal?: AbortSignal;
  onOutcome?: (outcome: Outcome<S>) => void;
  onStatus?: (status: ConnectStatus) => void;
  /** Every raw chunk of the stream, before it is fed (byte counters, capture). */
  onChunk?: (chunk: Uint8Array) => void;
  /**
   * Treat the connection as broken after this long without a byte (off by
   * default). With a server heartbeat every H ms, about 3 x H is a good value.
   */
  idleTimeoutMs?: number;
}

export interface Connection {
  /** Stops the loop and aborts the request in flight. */
  close(): void;
  /** Resolves when the loop stops; rejects if the engine failed or the server refused (4xx). */
  done: Promise<void>;
}

/** Feeds `sync` from `options.url`, reconnecting (with replay) until closed or the run ends. */
export function connectStateSync<S = JsonValue>(sync: StateSync<S>, options: ConnectOptions<S>): Connection;
