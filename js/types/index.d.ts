// Type declarations for agui-state-sync (written by hand; see src/).

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type SyncStatus = 'synced' | 'unverified' | 'resyncing';

/** Why the engine asks for a fresh snapshot. */
export type ResyncReason =
  | 'gap'
  | 'malformed'
  | 'limit-exceeded'
  | 'stale-base'
  | 'epoch-changed'
  | 'seq-conflict'
  | 'seq-regression'
  | 'digest-mismatch'
  | 'patch-failed'
  | 'precondition-failed'
  | (string & {});

/** Why an event changed nothing. */
export type IgnoredReason = 'duplicate' | 'reordered' | 'stale-snapshot' | 'awaiting-snapshot' | (string & {});

/** What was wrong with an input event. The state is untouched. */
export type ErrorCode =
  | 'invalid-json'
  | 'invalid-event'
  | 'invalid-seq'
  | 'invalid-patch'
  | 'limit-exceeded'
  | (string & {});

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
}

export type Unsubscribe = () => void;

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
  /** Frees the engine. Idempotent; any other call afterwards throws an Error. */
  dispose(): void;
}

/** Loads the WebAssembly engine (once per realm) and creates a StateSync. */
export function createStateSync<S = JsonValue>(options?: StateSyncOptions<S>): Promise<StateSync<S>>;
