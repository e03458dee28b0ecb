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
export type { EditReason, ErrorCode, GuardReason, IgnoredReason, ResyncReason } from './codes.js';
import type { EditReason, ErrorCode, GuardReason, IgnoredReason, ResyncReason } from './codes.js';

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

/** The fields of the agui-state-sync wire extension (docs/wire.md section 1). */
export interface SyncWireFields {
  seq?: number;
  baseSeq?: number;
  epoch?: string | number;
  digest?: string;
  acks?: Array<{ editId: string; status: 'applied' | 'rejected'; reason?: string; seq?: number }>;
  [key: string]: unknown;
}

/**
 * An event's `metadata`. Version 2 (what this package sends) keeps the wire
 * fields under one key, `metadata['agui-state-sync']`; version 1 (still read,
 * for backends that write them by hand) has them at the top of `metadata`.
 */
export interface SyncMetadata extends SyncWireFields {
  'agui-state-sync'?: SyncWireFields;
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
  /**
   * The visible state after this event: the agent's, with the edits still
   * pending at that point on top (=== sync.state if it was the last one).
   */
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
  /** An activity's resync (createStateSync({ activities: true })): its messageId. */
  messageId?: string;
}

export interface EventOutcome {
  kind: 'event';
  event: AguiEvent;
}

export interface IgnoredOutcome {
  kind: 'ignored';
  reason: IgnoredReason;
  seq: number | null;
  /** An activity's event: its messageId. */
  messageId?: string;
}

export interface ErrorOutcome {
  kind: 'error';
  code: ErrorCode;
  message: string;
  /** An activity's event: its messageId, when it could be read. */
  messageId?: string;
}

/**
 * An AG-UI 1.0 activity event the engine applied (docs/wire.md section 11).
 * Only a StateSync created with { activities: true } reports these (outside
 * `Outcome`, so that code written for state outcomes keeps its types): an
 * outcome with a `messageId` is an activity's.
 */
export interface ActivityAppliedOutcome {
  kind: 'applied';
  type: 'ACTIVITY_SNAPSHOT' | 'ACTIVITY_DELTA';
  messageId: string;
  /** The event's seq on its activity's own line, or null for an unsequenced event. */
  seq: number | null;
  /** The activity's content after this event. */
  content: { [key: string]: JsonValue };
  changedPaths: string[];
  event: AguiEvent;
}

/** Where a client's activity is, for a catch-up (docs/wire.md section 11). */
export interface ActivityPosition {
  messageId: string;
  lastSeq: number | null;
  epoch: string | null;
  /** Its resync's reason, or null. */
  reason: string | null;
}

/** An activity event a sender stamped. */
export type ActivityEvent = AguiEvent & { type: 'ACTIVITY_SNAPSHOT' | 'ACTIVITY_DELTA'; messageId: string; activityType: string };

/** What a sender holds of a thread's activities, whatever writes them. */
export interface ActivitiesHeld {
  /** A copy of the content, or undefined when not held. */
  content(messageId: string): JsonValue | undefined;
  seq(messageId: string): number | null;
  readonly epoch: string;
  readonly size: number;
  /** "data: <JSON>\n\n" (no SSE id). */
  encode(event: AguiEvent): string;
  dispose(): void;
}

/** A thread's activities as a sender stamps them (emitter.activities; docs/wire.md section 11). */
export interface ActivityEmitter extends ActivitiesHeld {
  /** The app's ACTIVITY_SNAPSHOT: its snapshot at seq 0 the first time, then the change ([] when none). */
  snapshot(messageId: string, activityType: string, content: JsonValue, options?: { replace?: boolean }): ActivityEvent[];
  /** The app's ACTIVITY_DELTA, atomically; throws an AguiSyncError with opIndex ('patch-failed' also for one not held). */
  patch(messageId: string, activityType: string, ops: JsonPatchOperation[]): ActivityEvent[];
  /**
   * An agent's event: its activity events stamped (the agent's other members kept), or [event] for any other.
   * `dropped`: why an activity event was not sent (a delta that does not apply, and that activity's later ones until its next snapshot).
   */
  write(event: AguiEvent, options?: { verified?: boolean; content?: (messageId: string) => JsonValue }):
    { events: AguiEvent[]; dropped: string | null; error: AguiSyncError | null };
}

/**
 * A store-bound thread's activities (DurableStateEmitter.activities; docs/wire.md
 * section 11, "What a fleet keeps"): stored with the thread, each write returned
 * once the store holds it. A write that lost a race to another instance's write
 * of the same activity is written again on top of it.
 */
export interface DurableActivities extends ActivitiesHeld {
  snapshot(messageId: string, activityType: string, content: JsonValue, options?: { replace?: boolean }): Promise<ActivityEvent[]>;
  patch(messageId: string, activityType: string, ops: JsonPatchOperation[]): Promise<ActivityEvent[]>;
  /** As ActivityEmitter.write(); `dropped` also 'store-unavailable' / 'store-conflict' when it could not be stored (nothing sent). */
  write(event: AguiEvent, options?: { verified?: boolean; content?: (messageId: string) => JsonValue }):
    Promise<{ events: AguiEvent[]; dropped: string | null; error: AguiSyncError | null }>;
  /** Brings the activities to the stored record (another instance's writes, a restart). */
  sync(): Promise<void>;
}

/** One activity as sync.activities holds it. */
export interface ActivityMirror {
  readonly messageId: string;
  readonly activityType: string;
  /** The agent's verified content when status is 'synced'. Untouched subtrees keep their identity. */
  readonly content: { readonly [key: string]: JsonValue };
  readonly status: SyncStatus;
  readonly lastSeq: number | null;
  /** The epoch lastSeq counts in (a catch-up position names it), or null. */
  readonly epoch: string | null;
  /** Deltas waiting in its reorder window. */
  readonly held: number;
  readonly resync: { readonly reason: ResyncReason; readonly lastSeq: number | null; readonly lastEventId: string | null } | null;
}

/** The agent applied a pending edit: its effect is in the agent's state at `seq`. */
export interface EditAckedOutcome {
  kind: 'edit-acked';
  editId: string;
  seq: number | null;
}

/** The agent refused a pending edit (it is no longer pending; the visible state dropped it). */
export interface EditRejectedOutcome {
  kind: 'edit-rejected';
  editId: string;
  reason: EditReason;
}

/**
 * An agent write over a pending edit on a shared path, whichever side won:
 * 'agent-wins' drops the edit (no longer pending), 'user-wins' keeps it
 * pending and visible. Show it to the person: both values are here.
 */
export interface ConflictOutcome {
  kind: 'conflict';
  editId: string;
  /** The seq of the agent's write. */
  seq: number | null;
  /** Where the two writes met (JSON Pointer; a whole array for a write into it). */
  path: string;
  /** The user's value there (absent: the edit removed it). */
  mine?: JsonValue;
  /** The agent's value there (absent: the agent removed it). */
  theirs?: JsonValue;
  resolution: 'agent-wins' | 'user-wins';
}

/** What becomes of a user edit: every edit ends as one of these (a user-wins conflict keeps it pending). */
export type EditOutcomeKind = EditAckedOutcome | EditRejectedOutcome | ConflictOutcome;

export type Outcome<S = JsonValue> =
  | AppliedOutcome<S>
  | ResyncOutcome
  | EventOutcome
  | IgnoredOutcome
  | ErrorOutcome
  | EditAckedOutcome
  | EditRejectedOutcome
  | ConflictOutcome;

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
  /** Keep AG-UI activities (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA) as sequenced documents in sync.activities (default false: they pass as events). */
  activities?: boolean;
  /** At most this many activities are held (default 64). */
  maxActivities?: number;
  /** Largest accepted activity content, approximate serialized bytes (default 1 MiB). */
  maxActivityBytes?: number;
  /** The guard's clock in milliseconds, any monotonic origin (default performance.now / Date.now). */
  now?: () => number;
  /**
   * While guard.watch() has listeners, re-check staleness every this many ms
   * (default 0: only after feed/end/reset and guard.check()). The timer never
   * keeps a Node process alive.
   */
  staleCheckMs?: number;
  /**
   * Who may write where, by longest JSON Pointer prefix (default 'shared'):
   * 'agent' paths refuse edits ('agent-owned'); on 'user' paths an agent write
   * is masked while an edit is pending; on 'shared' paths it is a conflict.
   */
  ownership?: Record<string, 'agent' | 'user' | 'shared'>;
  /** Who wins a conflict on a shared path (default 'agent-wins'). */
  onConflict?: 'agent-wins' | 'user-wins';
  /** The prefix of this client's editIds ("<clientId>:<n>"; at most 128 UTF-8 bytes). Default: a random id. */
  clientId?: string;
  /**
   * Survive reloads: restore from the checkpoint under `key` before
   * createStateSync resolves, and write one after every feed()/edit()/end()
   * call that changed it. See sync.persistence.
   */
  persist?: PersistOptions;
}

/**
 * Where checkpoints are kept: any object with these three async methods. The
 * package stores one string per key. memoryStorage() and indexedDbStorage() are two.
 */
export interface CheckpointStorage {
  get(key: string): Promise<unknown>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface PersistOptions {
  /** The checkpoint's name (non-empty, at most 512 characters): one per thread, say. */
  key: string;
  /** Default: IndexedDB (indexedDbStorage()) where the realm has it, else persistence is off ('unsupported'). */
  storage?: CheckpointStorage;
  /**
   * Hold the key while persisting (default true): Web Locks across tabs, else
   * an in-process lock per storage adapter. A second holder runs without
   * persistence ('locked'). false: every holder writes, the last write wins.
   */
  lock?: boolean;
  /** How long createStateSync waits for a held key (default 2000 ms; a reloaded page's predecessor may still hold it). */
  lockTimeoutMs?: number;
}

/** What createStateSync found in storage. */
export type RestoreResult = 'restored' | 'none' | 'discarded' | 'unreadable' | 'skipped';

/** sync.persistence: how the restore went and how writing goes (a copy). */
export interface PersistenceInfo<S = JsonValue> {
  readonly key: string;
  /**
   * 'restored': state, position and pending edits came back (outcomes);
   * 'none': nothing stored; 'discarded': a stored checkpoint was unusable and
   * deleted (error); 'unreadable': storage.get failed (storageError);
   * 'skipped': not read, persistence is off (inactiveReason).
   */
  readonly restore: RestoreResult;
  /** Checkpoints are being written. */
  readonly active: boolean;
  /** Why not: another holder has the key, no crypto.subtle or storage here, or dispose(). null while active. */
  readonly inactiveReason: 'locked' | 'unsupported' | 'disposed' | null;
  /** Why a stored checkpoint was discarded: code 'invalid-checkpoint' (or the engine's 'limit-exceeded'). */
  readonly error: AguiSyncError | null;
  /** The restore's outcomes: the 'restored' resync, and 'edit-rejected' for stored edits the ownership rules now refuse. */
  readonly outcomes: readonly Outcome<S>[];
  /** Checkpoints written, replaced while queued, and failed writes. */
  readonly writes: number;
  readonly coalesced: number;
  readonly failures: number;
  /** What the storage adapter threw last (as thrown), or null. */
  readonly storageError: unknown;
  /** True while storage does not hold the newest checkpoint (being written, or waiting to retry a failed write). */
  readonly behind: boolean;
}

/** A user edit the agent has not acknowledged yet (sync.pendingEdits()); frozen. */
export interface PendingEdit {
  readonly editId: string;
  /** sync.lastSeq when the edit was made. */
  readonly baseSeq: number | null;
  /** The RFC 6902 operations, as passed to edit(). */
  readonly ops: JsonPatchOperation[];
}

/** sync.edit() refused the edit: nothing changed. `reason` and `code` are the same code. */
export interface EditRefusal {
  ok: false;
  reason: EditReason;
  code: EditReason;
  message: string;
  /** The operation at fault, when one is. */
  opIndex?: number;
}

/** What sync.edit() returns. */
export type LocalEditResult = { ok: true; editId: string } | EditRefusal;

/** sync.runInput(): the parts of the next RunAgentInput that carry the user's edits. */
export interface StateSyncRunInput<S = JsonValue> {
  /** The visible state (for agents that only read RunAgentInput.state). */
  state: S;
  forwardedProps: { stateSync: { edits: PendingEdit[] } };
}

export type Unsubscribe = () => void;

/** What the person was shown: hand it back to guard.approve(). */
export interface ViewToken {
  path: string;
  /** lastSeq when viewed (null on an unsequenced stream). */
  seq: number | null;
  /** stateDigest() of the value at path. */
  digest: string;
  /** Set when the value is in that activity's content (guard.view(path, { messageId })); seq is then the activity's own. */
  messageId?: string;
}

/** Which document a guard call targets: the state (no messageId), or an activity's content (docs/wire.md section 11). */
export interface GuardTarget {
  /** The activity (sync.activities[messageId].content), judged by its own line. */
  messageId?: string;
}

/** Where an approval with a messageId is checked: emitter.activities, or { messageId: content }. */
export type ApprovalActivities = { content(messageId: string): unknown } | Record<string, unknown>;

/** An approval the agent can check against its own state, or its content of an activity (verifyApproval). */
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
  /** Set for a value in an activity's content: the agent checks it against its content of that activity. */
  messageId?: string;
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
  /** The value at `path` (JSON Pointer) and a token to approve it with; with { messageId }, in that activity's content. */
  view<V = JsonValue>(path: string, options?: GuardTarget): ViewResult<V>;
  /**
   * An approval if the state is verified, live, not waiting on a gap, and the
   * value at token.path still has token.digest. Never throws for state.
   */
  approve(token: ViewToken, options?: { interruptId?: string }): ApproveResult;
  /** null when approvals are possible now, else why not (resyncing, unverified, disconnected, stale, gap-pending, ...); with { messageId }, of that activity. */
  blocker(options?: GuardTarget): GuardReason | null;
  /**
   * Calls `listener` now and whenever the value at `path` (by identity) or its
   * approvability changes (checked after feed/end/reset and guard.check()).
   */
  watch<V = JsonValue>(path: string, listener: (state: GuardWatchState<V>) => void, options?: GuardTarget): Unsubscribe;
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
  /**
   * The visible state: the agent's, with the pending edits on top. Never
   * modified in place. Untouched subtrees keep their identity across deltas and edits.
   */
  readonly state: S;
  /** The agent's state (verified as of lastSeq), without pending edits; === state while none is pending. */
  readonly confirmedState: S;
  /** With the option `activities`: the activities held, by messageId (a new object only when one changed). */
  readonly activities: { readonly [messageId: string]: ActivityMirror };
  /**
   * A user edit (RFC 6902, `test` allowed), applied atomically to `state` at once
   * and pending until the agent acknowledges it. Never throws for `ops`: a
   * refusal ('agent-owned', 'invalid-patch', 'patch-failed', 'precondition-failed',
   * 'limit-exceeded') changes nothing.
   */
  edit(ops: JsonPatchOperation[]): LocalEditResult;
  /** The edits the agent has not acknowledged, oldest first (the same array until it changes). */
  pendingEdits(): readonly PendingEdit[];
  /** The visible state and forwardedProps.stateSync.edits for the next RunAgentInput. */
  runInput(): StateSyncRunInput<S>;
  readonly status: SyncStatus;
  readonly lastSeq: number | null;
  readonly lastEventId: string | null;
  resyncRequest(): ResyncRequest | null;
  /**
   * With { activities: true }: where each activity is, as a reconnecting client tells the server
   * (forwardedProps.stateSync.activities / X-AGUI-State-Activities; docs/wire.md section 11); null without.
   */
  activityPositions(): ActivityPosition[] | null;
  metrics(): SyncMetrics;
  /**
   * `listener` runs once after each feed()/end()/edit() call that changed the
   * state, the status or the pending edits. A listener that throws is reported (reportError / console.error)
   * and does not affect the engine or other listeners.
   */
  subscribe(listener: () => void): Unsubscribe;
  /**
   * With options.persist: what the restore found and how checkpoint writing
   * goes; null without. Readable after dispose().
   */
  readonly persistence: PersistenceInfo<S> | null;
  /**
   * Resolves once nothing is being written: the newest checkpoint is stored, or
   * its last attempt failed (persistence.behind; retried later). At once without persist.
   */
  flush(): Promise<void>;
  /**
   * Frees the engine and stops writing checkpoints (the write in flight ends on
   * its own). Idempotent; any other call afterwards throws an AguiSyncError
   * 'disposed' (guard answers 'disposed'; persistence and flush() still work).
   */
  dispose(): void;
  /** The sender's epoch (metadata.epoch of the snapshot the state came from), or null. */
  readonly epoch: string | null;
  /** The approval guard. */
  readonly guard: ApprovalGuard<S>;
}

/** Loads the WebAssembly engine (once per realm) and creates a StateSync (restored first, with options.persist). */
export function createStateSync<S = JsonValue>(options?: StateSyncOptions<S>): Promise<StateSync<S>>;

/** A CheckpointStorage over a Map (`entries`): tests, Node, or a checkpoint for the life of the realm. */
export function memoryStorage(): CheckpointStorage & { readonly entries: Map<string, unknown> };

/** The browsers' default CheckpointStorage: IndexedDB database `database` (default 'agui-state-sync'), store 'checkpoints'. */
export function indexedDbStorage(options?: { database?: string }): CheckpointStorage;

export interface EngineOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

/** Loads the engine (idempotent; shared with createStateSync) so that the synchronous helpers work. */
export function initEngine(options?: EngineOptions): Promise<void>;
/**
 * Loads the server (sender) engine, idempotent: renderStateForPrompt, promptMessage and effectKey
 * need it (no browser calls them, so the browser engine does not carry them). createStateEmitter
 * and consumeApproval load it too.
 */
export function initServerEngine(options?: EngineOptions): Promise<void>;

/**
 * RFC 8785 canonical JSON of `value` (synchronous, needs a loaded engine).
 * TypeError for what JSON cannot represent (undefined, functions, BigInt, NaN, ...).
 */
export function canonicalJson(value: unknown): string;
/** The key of `metadata` the wire fields ride under (docs/wire.md section 10). */
export declare const WIRE_KEY: 'agui-state-sync';
/**
 * The object holding an event's wire fields: `metadata['agui-state-sync']` when
 * it is an object, else (version 1) `metadata` itself; null without metadata.
 */
export function wireFields(event: unknown): SyncWireFields | null;
/** "sha256:" + hex SHA-256 of canonicalJson(value). */
export function stateDigest(value: unknown): `sha256:${string}`;
/**
 * True only if `agentState` at approval.path has approval.digest; for an approval with a
 * messageId, the agent's content of that activity (options.activities) instead. False for any
 * malformed input, and for an activity's approval without that activity.
 */
export function verifyApproval(approval: unknown, agentState: unknown, options?: { activities?: ApprovalActivities }): boolean;

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
  /**
   * With untrusted: 'auto': pointers that client edits wrote, untrusted whoever
   * owns them (emitter.provenance().map((w) => w.path)).
   */
  userWritten?: string[];
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
 * The state as one prompt-safe data block (synchronous, needs the server engine: initServerEngine()):
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
  /** Seqs whose written paths are kept for edits' three-way check (default 4096). */
  editHistory?: number;
  /** Edit verdicts kept, so a re-sent edit applies once (default 4096). */
  ackHistory?: number;
  /** Deepest accepted nesting (default 128). */
  maxDepth?: number;
  /** emitter.activities holds at most this many (default 64). */
  maxActivities?: number;
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

/** Who may write under a JSON Pointer (the longest matching prefix decides; default 'shared'). */
export type EditOwner = 'agent' | 'user' | 'shared';

/** How the agent side judges user edits (docs/wire.md section 9). */
export interface EditPolicy {
  /** JSON Pointer -> owner. An edit writing at or above an agent-owned path is rejected 'agent-owned'. */
  ownership?: Record<string, EditOwner>;
  /** 'agent-wins' (default): a shared-path edit someone else wrote over since its baseSeq is rejected 'conflict'. */
  onConflict?: 'agent-wins' | 'user-wins';
}

/** One user edit as it travels in RunAgentInput.forwardedProps.stateSync.edits. */
export interface EditRequest {
  /** "<clientId>:<n>", unique per client; the part before the last ':' is its origin. */
  editId: string;
  /** The client's confirmed seq when the edit was made (null or absent: none). */
  baseSeq?: number | null;
  /** RFC 6902 (`test` allowed), applied atomically or not at all. */
  ops: JsonPatchOperation[];
}

/** The agent's verdict on one edit, as in the events' metadata.acks. */
export interface EditResult {
  editId: string;
  status: 'applied' | 'rejected';
  /** Why it was rejected (only then). */
  reason?: EditReason;
  /** The seq of the event that first carried the verdict. */
  seq?: number;
}

/** What StateEmitter.applyEdits() did: the events to send (acks in metadata.acks) and one verdict per edit, grouped by origin like the events. */
export interface AppliedEdits<S = JsonValue> {
  events: StateEvent<S>[];
  results: EditResult[];
}

/** A pointer whose current value a client edit wrote (emitter.provenance()). */
export interface ClientWrite {
  path: string;
  writer: 'client';
  /** The edit's origin: its editId before the last ':'. */
  origin: string;
  /** The event that wrote it. */
  seq: number;
}

export interface StateEmitter<S = JsonValue> {
  /** Events that take receivers from the current state to `newState` ([] if equal). */
  update(newState: S): StateEvent<S>[];
  /** Applies RFC 6902 ops atomically; throws an EmitterError (an AguiSyncError with opIndex) if they do not apply. */
  patch(ops: JsonPatchOperation[]): StateEvent<S>[];
  /**
   * Judges user edits under `policy` and applies the accepted ones. An edit's own problem is its
   * verdict; throws an AguiSyncError ('invalid-request', 'invalid-options', 'limit-exceeded',
   * 'seq-exhausted') only when the call cannot be judged, and then nothing is applied.
   */
  /** `epoch`: the epoch the client's baseSeqs count in (null: this emitter's); another epoch's edits are judged as made at the emitter's first seq. */
  applyEdits(edits: readonly EditRequest[], policy?: EditPolicy, options?: { epoch?: string | null }): AppliedEdits<S>;
  /** The pointers whose values client edits wrote last (for untrusted: 'auto' with userWritten). */
  provenance(): ClientWrite[];
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
  /**
   * Continues a log another process wrote (a restart, another instance): create the emitter with the
   * stored state, startSeq and epoch, then pass the log's latest events, oldest first, the last at
   * `seq`. They become the replay ring and the edit ledger. Returns how many were adopted.
   */
  adoptHistory(events: readonly StateEvent<S>[]): number;
  /** The thread's activities (docs/wire.md section 11), in this emitter's epoch; catchUp() answers for them. */
  readonly activities: ActivityEmitter;
  dispose(): void;
}

/**
 * Where store-bound emitters keep a key's line (agui-state-sync/server: memoryStore(), redisStore()).
 * Every method rejects only when the store is unreachable; a lost race is `{ ok: false }`.
 */
export interface EmitterStore {
  load(key: string): Promise<{ epoch: string; seq: number; state: string; events: string[] } | null>;
  init(key: string, line: { epoch: string; seq: number; state: string }): Promise<{ ok: boolean }>;
  append(key: string, write: {
    baseSeq: number; epoch: string; state: string;
    events: { seq: number; text: string; snapshot: boolean }[];
    maxEvents: number; maxBytes: number;
  }): Promise<{ ok: boolean }>;
  head(key: string): Promise<{ epoch: string; seq: number } | null>;
  reset(key: string, expect: { epoch: string; seq: number }, line: { epoch: string; seq: number; state: string }): Promise<{ ok: boolean }>;
  claim(scope: string, id: string, value: string, ttlMs?: number): Promise<{ ok: true } | { ok: false; existing: string }>;
  peek(scope: string, id: string): Promise<string | null>;
  /** The store's logger (recoveries and outages are reported through it). */
  log?(level: 'warn' | 'info', message: string): void;
  close?(): Promise<void>;
}

/** EmitterStats plus what the store did. */
export interface DurableEmitterStats extends EmitterStats {
  store: { commits: number; conflicts: number; reloads: number; degradations: number; recoveries: number; degraded: boolean };
}

/**
 * An emitter bound to one key of a store (createStateEmitter({ store, key })): every event is
 * committed (with the seq and state, atomically, only if no other writer got there first) before it
 * is returned, so writes are async. A lost race re-reads the winner's line and recomputes; after 16
 * in a row it rejects with 'store-conflict'. While the store is unreachable it goes on alone under a
 * fresh epoch (starting with a snapshot), answers catch-ups with snapshots, and recovers by itself.
 */
export interface DurableStateEmitter<S = JsonValue> {
  readonly key: string;
  /** The thread's activities, stored with it (docs/wire.md section 11). */
  readonly activities: DurableActivities;
  /**
   * After a lost race the whole state is written again (the last writer wins), unless `rebase`:
   * then only this writer's change, from the state it last gave, goes on the line as it stands
   * (member by member; its whole state only where the line holds no object where it wrote).
   */
  update(newState: S, options?: { rebase?: boolean }): Promise<StateEvent<S>[]>;
  patch(ops: JsonPatchOperation[]): Promise<StateEvent<S>[]>;
  applyEdits(edits: readonly EditRequest[], policy?: EditPolicy, options?: { epoch?: string | null }): Promise<AppliedEdits<S>>;
  /** The catch-up of docs/wire.md section 3, after catching up with the store (what catchUp() calls). */
  catchUp(request: unknown): Promise<{ mode: 'current' | 'replay' | 'snapshot'; events: StateEvent<S>[] }>;
  snapshot(): Promise<StateSnapshotEvent<S>>;
  /** Catches up with what other instances wrote to the key. */
  refresh(): Promise<void>;
  /**
   * listener(events): every event of the key's line, in order, once each (this emitter's writes once
   * committed, other instances' as found, polled every `pollMs`, default 100, while anyone listens).
   * An instance's fan-out: encode once, write to each client. Returns unsubscribe().
   */
  subscribe(listener: (events: StateEvent<S>[]) => void, options?: { pollMs?: number }): () => void;
  /**
   * fn(catchUp) with a synchronous catchUp(request), while no write is under way and none starts until
   * fn returns: a catch-up and joining the fan-out in one step, with no event between them.
   */
  withCatchUp<T>(fn: (catchUp: (request: unknown) => { mode: 'current' | 'replay' | 'snapshot'; events: StateEvent<S>[] }) => T): Promise<T>;
  encode(event: AguiEvent | StateEvent<S>, options?: { id?: boolean }): string;
  heartbeat(): string;
  /** Of the last event returned. */
  readonly seq: number;
  readonly epoch: string;
  readonly state: S;
  /** True while the store is unreachable. */
  readonly degraded: boolean;
  stats(): DurableEmitterStats;
  dispose(): void;
}

/** With `store` and `key`: an emitter that continues that key's state, seq and epoch (options other than these count only for a new key). */
export function createStateEmitter<S = JsonValue>(options: StateEmitterOptions<S> & { store: EmitterStore; key: string }): Promise<DurableStateEmitter<S>>;
export function createStateEmitter<S = JsonValue>(options?: StateEmitterOptions<S>): Promise<StateEmitter<S>>;

/** Where a client is, as sent on reconnect (forwardedProps.stateSync, or the headers). */
export interface StateSyncPosition {
  lastSeq: number | null;
  epoch: string | null;
  reason: string | null;
  /** Seqs the client holds in its reorder window, ascending (X-AGUI-State-Held; [] when none). */
  held: number[];
  /** Its activity positions as they came (an array, or the X-AGUI-State-Activities value); null: it keeps none. */
  activities?: ActivityPosition[] | string | null;
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
