// Compiled with `tsc --noEmit -p tests/js/tsconfig.json` (types.test.mjs): the
// hand-written declarations must accept real usage and reject misuse.
import {
  AguiSyncError,
  canonicalJson,
  connectStateSync,
  createStateEmitter,
  createStateSync,
  indexedDbStorage,
  initEngine,
  initServerEngine,
  memoryStorage,
  renderStateForPrompt,
  stateDigest,
  verifyApproval,
} from 'agui-state-sync';
import type {
  AppliedEdits,
  AppliedOutcome,
  CheckpointStorage,
  PersistenceInfo,
  PersistOptions,
  RestoreResult,
  Approval,
  ConflictOutcome,
  EditRefusal,
  LocalEditResult,
  PendingEdit,
  StateSyncRunInput,
  ConnectStatus,
  Connection,
  EditPolicy,
  EditResult,
  EmitterError,
  EmitterStats,
  ErrorCode,
  GuardReason,
  IgnoredReason,
  GuardWatchState,
  Interrupt,
  JsonValue,
  Outcome,
  PromptRender,
  PromptRenderOptions,
  PromptTruncation,
  ResumeEntry,
  ResyncReason,
  ResyncRequest,
  StateEmitter,
  StateEvent,
  StateSync,
  StateSyncOptions,
  SyncMetrics,
  SyncStatus,
  ViewToken,
} from 'agui-state-sync';
import { useAgentState, usePendingEdits } from 'agui-state-sync/react';
import { catchUp, formatHeld, HEADER_HELD, parseHeld, promptMessage, readResyncRequest, SNAPSHOT_REASONS, startHeartbeat, writeCatchUp } from 'agui-state-sync/server';
import { applyRunEdits, MAX_RUN_EDITS, readRunEdits } from 'agui-state-sync/server';
import type { CatchUpMode, PromptMessage, SseResponse } from 'agui-state-sync/server';
import { createStateSyncProxy, EVENTS_LOST, HEADER_ABORT, HEADER_RESUME, PROXY_DEFAULTS, UPSTREAM_CONSISTENT, UPSTREAM_INCONSISTENT } from 'agui-state-sync/proxy';
import type { PromptContextOptions, ProxyRequest, ProxyResponse, StateSyncProxy, StateSyncProxyOptions, StateSyncProxyStats } from 'agui-state-sync/proxy';
import { sequenceState, SequenceStateMiddleware, StateSyncHttpAgent } from 'agui-state-sync/ag-ui';
import type { InconsistentStateInfo, SequenceStateOptions, StateSyncAgentOptions, StateSyncHttpAgentConfig } from 'agui-state-sync/ag-ui';
// This file compiles as CommonJS; the package is ESM, so @ag-ui/client's types are taken as an ESM importer sees them.
import type { AbstractAgent, HttpAgent, RunAgentInput } from '@ag-ui/client' with { 'resolution-mode': 'import' };

interface Todo {
  id: number;
  text: string;
  done: boolean;
}
interface AppState {
  todos: Todo[];
  title: string;
}

// User edits (issue 14): ownership, edit(), the two states, pending edits, runInput().
export async function editsUsage(): Promise<void> {
  const sync = await createStateSync<AppState>({
    ownership: { '/title': 'agent', '/todos': 'user' },
    onConflict: 'user-wins',
    clientId: 'tab-1',
  });
  const result: LocalEditResult = sync.edit([{ op: 'replace', path: '/todos/0/done', value: true }, { op: 'test', path: '/title', value: 'x' }]);
  if (result.ok) {
    const id: string = result.editId;
    void id;
  } else {
    const refusal: EditRefusal = result;
    const index: number | undefined = result.opIndex;
    void refusal, index, result.reason === result.code, result.message;
  }
  const visible: AppState = sync.state;
  const confirmed: AppState = sync.confirmedState;
  const pending: readonly PendingEdit[] = sync.pendingEdits();
  const base: number | null = pending[0].baseSeq;
  const input: StateSyncRunInput<AppState> = sync.runInput();
  const edits: PendingEdit[] = input.forwardedProps.stateSync.edits;
  const marked: readonly PendingEdit[] = usePendingEdits(sync);
  void visible, confirmed, base, edits, marked, input.state.title;
  // @ts-expect-error an owner is 'agent' | 'user' | 'shared'
  await createStateSync({ ownership: { '/x': 'nobody' } });
  // @ts-expect-error onConflict is a closed union
  await createStateSync({ onConflict: 'last-wins' });
  // @ts-expect-error edit() takes RFC 6902 operations
  sync.edit([{ op: 'frobnicate', path: '/x' }]);
  // @ts-expect-error confirmedState is read-only
  sync.confirmedState = visible;
  // @ts-expect-error pending edits are read-only
  pending[0].editId = 'x';
}

// Checkpoints (issue 16): persist, sync.persistence, flush(), storage adapters.
export async function persistUsage(): Promise<void> {
  const storage: CheckpointStorage = memoryStorage();
  const persist: PersistOptions = { key: 'thread-1', storage, lock: true, lockTimeoutMs: 1000 };
  const sync = await createStateSync<AppState>({ persist, initialState: { todos: [], title: '' } });
  const info: PersistenceInfo<AppState> | null = sync.persistence;
  if (info !== null) {
    const restore: RestoreResult = info.restore;
    if (info.error !== null && info.error.code === 'invalid-checkpoint') void info.error.message;
    if (info.inactiveReason === 'locked') void info.active;
    for (const outcome of info.outcomes) if (outcome.kind === 'edit-rejected') void outcome.editId;
    void restore, info.writes, info.behind, info.storageError;
  }
  await sync.flush();
  const browser: CheckpointStorage = indexedDbStorage({ database: 'my-app' });
  await createStateSync({ persist: { key: 'k', storage: browser } });
  const custom: CheckpointStorage = { get: async (key) => key, set: async () => {}, delete: async () => {} };
  void custom, memoryStorage().entries.size;
  // @ts-expect-error persist needs a key
  await createStateSync({ persist: { storage } });
  // @ts-expect-error a storage adapter has get, set and delete
  await createStateSync({ persist: { key: 'k', storage: { get: async () => null } } });
  // @ts-expect-error persistence is read-only
  sync.persistence = null;
}

export async function usage(): Promise<void> {
  const options: StateSyncOptions<AppState> = {
    reorderWindow: 64,
    maxEventBytes: 1 << 20,
    maxDepth: 64,
    maxStateBytes: 1 << 24,
    initialState: { todos: [], title: '' },
    locateFile: (path, prefix) => prefix + path,
  };
  const sync: StateSync<AppState> = await createStateSync<AppState>(options);
  const untyped: StateSync = await createStateSync();
  const anyState: JsonValue = untyped.state;
  void anyState;
  await createStateSync({ wasmBinary: new Uint8Array(0) });
  await createStateSync({ wasmBinary: new ArrayBuffer(0) });

  const outcomes: Outcome<AppState>[] = sync.feed('data: {}\n\n');
  sync.feed(new Uint8Array([1, 2]));
  for (const o of outcomes) {
    switch (o.kind) {
      case 'applied': {
        const applied: AppliedOutcome<AppState> = o;
        const title: string = o.state.title;
        const type: 'STATE_SNAPSHOT' | 'STATE_DELTA' = o.type;
        const seq: number | null = o.seq;
        const paths: string[] = o.changedPaths;
        void applied, title, type, seq, paths;
        break;
      }
      case 'resync': {
        const detail: string = o.detail;
        const lastSeq: number | null = o.lastSeq;
        const id: string | null = o.lastEventId;
        void detail, lastSeq, id, o.reason;
        break;
      }
      case 'event': {
        const type: string = o.event.type;
        void type;
        break;
      }
      case 'ignored': {
        const seq: number | null = o.seq;
        void seq, o.reason;
        break;
      }
      case 'error': {
        const message: string = o.message;
        void message, o.code;
        break;
      }
      case 'edit-acked': {
        const seq: number | null = o.seq;
        void seq, o.editId;
        break;
      }
      case 'edit-rejected': {
        void o.editId, o.reason;
        break;
      }
      case 'conflict': {
        const conflict: ConflictOutcome = o;
        const mine: JsonValue | undefined = o.mine;
        const winner: 'agent-wins' | 'user-wins' = o.resolution;
        void conflict, mine, winner, o.path, o.theirs, o.seq;
        break;
      }
      default: {
        const never: never = o;
        void never;
      }
    }
  }
  const ended: Outcome<AppState>[] = sync.end();
  void ended;
  sync.reset();
  const todos: Todo[] = sync.state.todos;
  const status: SyncStatus = sync.status;
  const lastSeq: number | null = sync.lastSeq;
  const lastEventId: string | null = sync.lastEventId;
  const request: ResyncRequest | null = sync.resyncRequest();
  if (request) {
    const reason: string = request.reason;
    void reason;
  }
  const metrics: SyncMetrics = sync.metrics();
  const tax: number = metrics.taxRate + metrics.deltasApplied + metrics.resyncs;
  const unsubscribe: () => void = sync.subscribe(() => undefined);
  unsubscribe();
  sync.dispose();
  void todos, status, lastSeq, lastEventId, tax;

  // React hook (types only; not rendered here).
  const whole: AppState = useAgentState(sync);
  const count: number = useAgentState(sync, (s) => s.todos.length);
  const titleUpper: string = useAgentState(sync, (s: AppState) => s.title.toUpperCase());
  void whole, count, titleUpper;

  // Misuse must not compile.
  // @ts-expect-error feed takes bytes or a string
  sync.feed(42);
  // @ts-expect-error state is read-only
  sync.state = { todos: [], title: '' };
  // @ts-expect-error status is a closed union
  const badStatus: 'connected' = sync.status;
  void badStatus;
  // @ts-expect-error reorderWindow is a number
  await createStateSync({ reorderWindow: '64' });
  // @ts-expect-error unknown option
  await createStateSync({ reorderWindw: 64 });
  // @ts-expect-error wrong initial state shape
  await createStateSync<AppState>({ initialState: { todos: 'none' } });
  // @ts-expect-error selector result type is checked
  const wrong: string = useAgentState(sync, (s) => s.todos.length);
  void wrong;
}

interface Proposal {
  amount: number;
  to: string;
}
interface Shared {
  proposal?: Proposal;
  items: string[];
}

export async function approvals(): Promise<void> {
  await initEngine();
  await initEngine({ wasmBinary: new Uint8Array(0), locateFile: (p) => p });
  await initServerEngine();
  const text: string = canonicalJson({ b: 1, a: [1, 'x'] });
  const digest: `sha256:${string}` = stateDigest(text);
  void digest;

  // Prompt-safe state.
  const renderOptions: PromptRenderOptions = {
    include: ['/form', '/items'],
    exclude: ['/form/secret'],
    untrusted: 'auto',
    ownership: { '/form': 'user', '/form/status': 'agent', '/items': 'shared' },
    maxBytes: 8192,
    maxStringBytes: 512,
    maxArrayItems: 20,
    maxDepth: 8,
    datamark: '^',
    tag: 'app_state',
  };
  const rendered: PromptRender = renderStateForPrompt({ form: { comment: 'hi' } }, renderOptions);
  const cut: PromptTruncation | undefined = rendered.truncated[0];
  const cutReason: 'string' | 'array' | 'depth' | 'budget' | 'key' | undefined = cut?.reason;
  const block: string = renderStateForPrompt([1, 2], { untrusted: ['/0'] }).text;
  const message: PromptMessage = promptMessage({ a: 1 }, { datamark: '^' });
  const role: 'user' = message.role;
  void rendered.bytes, rendered.untrustedPaths, cut?.droppedBytes, cut?.path, cutReason, block, role, message.content;
  // @ts-expect-error untrusted is pointers or 'auto'
  renderStateForPrompt({}, { untrusted: 'all' });
  // @ts-expect-error owners are 'user' | 'agent' | 'shared'
  renderStateForPrompt({}, { untrusted: 'auto', ownership: { '/a': 'admin' } });
  // @ts-expect-error maxBytes is a number
  renderStateForPrompt({}, { maxBytes: '32k' });

  let fakeTime = 0;
  const sync = await createStateSync<Shared>({
    staleAfterMs: 15000,
    trustUnsequenced: false,
    now: () => fakeTime++,
    staleCheckMs: 1000,
  });
  const epoch: string | null = sync.epoch;
  void epoch;
  const view = sync.guard.view<Proposal>('/proposal');
  if (view.ok) {
    const amount: number = view.value.amount;
    const token: ViewToken = view.token;
    const approved = sync.guard.approve(token, { interruptId: 'int-1' });
    if (approved.ok) {
      const approval: Approval = approved.approval;
      const seq: number | null = approval.seq;
      const entry: ResumeEntry<{ note: string }> = sync.guard.resumeEntry(approval, { note: 'ok' });
      const note: string = entry.payload.note;
      const yes: true = entry.payload.approved;
      const plainEntry: ResumeEntry = sync.guard.resumeEntry(approval);
      const ok: boolean = verifyApproval(approval, { proposal: { amount: 1 } });
      void amount, seq, note, yes, plainEntry, ok;
    } else {
      const reason: GuardReason = approved.reason;
      void reason;
    }
  } else {
    const reason: string = view.reason;
    void reason;
  }
  const blocker: GuardReason | null = sync.guard.blocker();
  const off: () => void = sync.guard.watch<Proposal>('/proposal', (s: GuardWatchState<Proposal>) => {
    const to: string | undefined = s.value?.to;
    const can: boolean = s.approvable;
    const token: ViewToken | null = s.token;
    void to, can, token;
  });
  off();
  // A form rendered from an activity: the same guard, with { messageId }.
  const formView = sync.guard.view<number>('/total', { messageId: 'm7' });
  if (formView.ok) {
    const formToken: ViewToken = formView.token;
    const mid: string | undefined = formToken.messageId;
    const formApproved = sync.guard.approve(formToken);
    if (formApproved.ok) {
      const approvedMid: string | undefined = formApproved.approval.messageId;
      const verified: boolean = verifyApproval(formApproved.approval, {}, { activities: { m7: { total: 1 } } });
      void approvedMid, verified;
    }
    void mid;
  }
  const formBlocker: GuardReason | null = sync.guard.blocker({ messageId: 'm7' });
  sync.guard.watch<number>('/total', (s: GuardWatchState<number>) => void s.value, { messageId: 'm7' })();
  // @ts-expect-error a messageId is a string
  sync.guard.view('/total', { messageId: 7 });
  void formBlocker;
  sync.guard.check();
  const open: Interrupt[] = sync.guard.interrupts();
  const firstId: string | undefined = open[0]?.id;
  void blocker, firstId;

  const emitter: StateEmitter<Shared> = await createStateEmitter<Shared>({
    epoch: 'e1', startSeq: 0, digestEvery: 16, guardedPaths: ['/proposal'], testAll: false, snapshotRatio: 0.8,
    replayMaxEvents: 1024, replayMaxBytes: 1 << 22, maxDepth: 64, initialState: { items: [] },
  });
  const events: StateEvent<Shared>[] = emitter.update({ items: ['a'] });
  emitter.patch([{ op: 'add', path: '/items/-', value: 'b' }]);
  const wire: string = events.map((e) => emitter.encode(e)).join('') + emitter.encode(emitter.snapshot(), { id: false });
  const hb: string = emitter.heartbeat();
  const replay: StateEvent<Shared>[] = emitter.replaySince(0, emitter.epoch);
  const skipped: StateEvent<Shared>[] = emitter.replaySince(0, null, [2, 3]);
  void skipped;
  const items: string[] = emitter.state.items;
  const stats: EmitterStats = emitter.stats();
  const seq: number = emitter.seq;
  try {
    emitter.patch([{ op: 'remove', path: '/nope' }]);
  } catch (e) {
    const code: string = (e as EmitterError).code;
    void code;
    if (e instanceof AguiSyncError) {
      const known: ErrorCode = e.code;
      const opIndex: number | undefined = e.opIndex;
      const status: number | undefined = e.status;
      const asError: Error = e;
      const refused: EmitterError = e as EmitterError;
      void known, opIndex, status, asError, refused;
    }
  }
  try {
    await createStateSync({ maxDepth: 0 });
  } catch (e) {
    if (e instanceof AguiSyncError && (e.code === 'invalid-options' || e.code === 'engine-failed')) void e.message;
  }
  const made = new AguiSyncError('http-error', 'agui-state-sync: HTTP 500', { status: 500, cause: new Error('x') });
  const reasons3: [ResyncReason, IgnoredReason, ErrorCode] = ['gap', 'stale-epoch', 'idle-timeout'];
  void reasons3;
  void wire, hb, replay, items, stats, seq;

  // The agent side of user edits (docs/wire.md section 9).
  const policy: EditPolicy = { ownership: { '/proposal': 'agent', '/items': 'user' }, onConflict: 'agent-wins' };
  const judged: AppliedEdits<Shared> = emitter.applyEdits(
    [{ editId: 'c1:1', baseSeq: seq, ops: [{ op: 'add', path: '/items/-', value: 'c' }] }, { editId: 'c1:2', baseSeq: null, ops: [] }],
    policy,
  );
  const verdict: EditResult | undefined = judged.results[0];
  const why: EditResult['reason'] = verdict?.status === 'rejected' ? verdict.reason : undefined;
  const ackEvents: StateEvent<Shared>[] = emitter.applyEdits([]).events;
  const runInput = { threadId: 't', runId: 'r', forwardedProps: { stateSync: { lastSeq: seq, epoch: 'e1', edits: [] } } };
  const ran = applyRunEdits(emitter, runInput, { onConflict: 'user-wins' });
  const runState: Shared | undefined = ran?.state;
  const checkedEdits = readRunEdits(runInput, { maxDepth: 64 });
  const firstBase: number | null | undefined = checkedEdits?.[0]?.baseSeq;
  void why, ackEvents, runState, firstBase, MAX_RUN_EDITS;

  const mode: CatchUpMode = catchUp(emitter, { headers: { 'x-agui-state-seq': '3' } }).mode;
  catchUp(emitter, { threadId: 't', runId: 'r', forwardedProps: { stateSync: { lastSeq: 3, epoch: 'e1' } } });
  catchUp(emitter, new Request('http://x/'));
  const res: SseResponse = { write: () => true, headersSent: false };
  writeCatchUp(res, emitter, undefined);
  const stop: () => void = startHeartbeat(res, emitter, 5000);
  const stopQueued: () => void = startHeartbeat(res, emitter, 5000, { write: (line: string) => void line.length });
  stop();
  stopQueued();
  const position = readResyncRequest({ headers: { [HEADER_HELD]: '4,6' } });
  const heldSeqs: number[] = position.held;
  const heldText: string = formatHeld(parseHeld('6,4'));
  const reasons: ReadonlySet<string> = SNAPSHOT_REASONS;
  void mode, position.lastSeq, reasons, heldSeqs, heldText;

  const connection: Connection = connectStateSync(sync, {
    url: '/agent',
    init: { headers: { authorization: 'x' } },
    body: (ctx) => ({ threadId: 't', runId: `r${ctx.attempt}`, messages: [], forwardedProps: {} }),
    backoff: { initialMs: 500, maxMs: 10000, factor: 2, jitter: 0.5 },
    signal: new AbortController().signal,
    onOutcome: (o: Outcome<Shared>) => void o.kind,
    onStatus: (s: ConnectStatus) => {
      if (s.state === 'waiting') void s.delayMs;
    },
  });
  connection.close();
  await connection.done;
  emitter.dispose();
  sync.dispose();

  // Misuse must not compile.
  // @ts-expect-error approve takes a token object
  sync.guard.approve('token');
  // @ts-expect-error interruptId is a string
  sync.guard.approve({ path: '', seq: 1, digest: '' }, { interruptId: 1 });
  // @ts-expect-error epoch is read-only
  sync.epoch = 'x';
  // @ts-expect-error staleAfterMs is a number
  await createStateSync({ staleAfterMs: '15s' });
  // @ts-expect-error unknown emitter option
  await createStateEmitter({ epochh: 'x' });
  // @ts-expect-error update takes the state type
  emitter.update({ items: 5 });
  // @ts-expect-error connectStateSync needs a url
  connectStateSync(sync, {});
  // @ts-expect-error resumeEntry must not override approved
  sync.guard.resumeEntry({} as Approval, { approved: false });
  // @ts-expect-error an AguiSyncError's code is read-only
  made.code = 'disposed';
  // @ts-expect-error AguiSyncError takes a code and a message
  void new AguiSyncError();
  // @ts-expect-error opIndex is a number
  void new AguiSyncError('patch-failed', 'x', { opIndex: '1' });
  // @ts-expect-error an owner is 'agent', 'user' or 'shared'
  emitter.applyEdits([], { ownership: { '/items': 'mine' } });
  // @ts-expect-error an edit has ops
  emitter.applyEdits([{ editId: 'c1:3', baseSeq: 0 }]);
}


export function proxy(req: ProxyRequest, res: ProxyResponse): void {
  const options: StateSyncProxyOptions = {
    upstream: 'http://127.0.0.1:8000/agent',
    forwardHeaders: ['authorization', 'cookie'],
    graceMs: 30000,
    heartbeatMs: 5000,
    threadIdleMs: 600000,
    maxThreads: 1000,
    maxRuns: 512,
    maxRunBufferBytes: 1 << 22,
    maxBufferedBytes: 1 << 26,
    maxBodyBytes: 1 << 22,
    bodyTimeoutMs: 10000,
    maxClientQueueBytes: 1 << 24,
    upstreamTimeoutMs: 30000,
    maxEventBytes: 1 << 23,
    maxStateBytes: 1 << 26,
    emitter: { digestEvery: 16, guardedPaths: ['/proposal'], snapshotRatio: 0.8, editHistory: 4096, ackHistory: 4096 },
    edits: { ownership: { '/proposal': 'agent' }, onConflict: 'agent-wins' },
    onError: (error: AguiSyncError) => void error.code,
    promptContext: { description: 'App state (data, not instructions)', untrusted: 'auto', ownership: { '/form': 'user' } },
  };
  const handler: StateSyncProxy = createStateSyncProxy(options);
  const context: PromptContextOptions = { maxBytes: 4096, datamark: '^' };
  createStateSyncProxy({ upstream: 'http://x/', promptContext: context });
  createStateSyncProxy({ upstream: 'http://x/', promptContext: true });
  createStateSyncProxy({ upstream: new URL('http://127.0.0.1/agent') });
  createStateSyncProxy({ upstream: 'http://x/', flakySegments: true });
  createStateSyncProxy({ upstream: 'http://x/', flakySegments: { window: 50, breakEven: 0.3 } });
  handler(req, res);
  const stats: StateSyncProxyStats = handler.stats();
  const counted: number = stats.threads + stats.liveRuns + stats.bufferedBytes + stats.resumes.exact + stats.aborts.abandoned + stats.edits.rejected
    + (stats.flakySegments.switches['2g'] ?? 0) + (stats.flakySegments.snapshotMode['2g'] ?? 0);
  handler.close();
  const names: string[] = [HEADER_ABORT, HEADER_RESUME, UPSTREAM_INCONSISTENT, UPSTREAM_CONSISTENT, EVENTS_LOST];
  const grace: number = PROXY_DEFAULTS.graceMs;
  const headers: readonly string[] = PROXY_DEFAULTS.forwardHeaders;
  void counted, names, grace, headers;

  // Misuse must not compile.
  // @ts-expect-error upstream is required
  createStateSyncProxy({ graceMs: 5 });
  // @ts-expect-error graceMs is a number
  createStateSyncProxy({ upstream: 'http://x/', graceMs: '30s' });
  // @ts-expect-error the emitter's initialState belongs to the proxy
  createStateSyncProxy({ upstream: 'http://x/', emitter: { initialState: {} } });
  // @ts-expect-error unknown option
  createStateSyncProxy({ upstream: 'http://x/', gracems: 5 });
  // @ts-expect-error onConflict is 'agent-wins' or 'user-wins'
  createStateSyncProxy({ upstream: 'http://x/', edits: { onConflict: 'mine' } });
  // @ts-expect-error promptContext is true or options
  createStateSyncProxy({ upstream: 'http://x/', promptContext: 'yes' });
  // @ts-expect-error flakySegments is true or { window, breakEven }
  createStateSyncProxy({ upstream: 'http://x/', flakySegments: { threshold: 0.2 } });
}

// agui-state-sync/ag-ui: the engine inside @ag-ui/client.
export async function agUiUsage(serverAgent: AbstractAgent, input: RunAgentInput): Promise<void> {
  const stateSync: StateSyncAgentOptions<AppState> = {
    initialState: { todos: [], title: '' },
    reorderWindow: 64,
    backoff: { initialMs: 250, maxMs: 5000, jitter: true },
    idleTimeoutMs: 15000,
    abortUrl: '/agent',
    onStatus: (status: ConnectStatus) => void status.state,
    onOutcome: (outcome: Outcome<AppState>) => void outcome.kind,
  };
  const config: StateSyncHttpAgentConfig<AppState> = { url: '/agent', headers: { authorization: 'Bearer x' }, threadId: 't', stateSync };
  const agent = new StateSyncHttpAgent<AppState>(config);
  const asHttp: HttpAgent = agent; // a drop-in: usable wherever an HttpAgent is
  const sync: StateSync<AppState> = await agent.ready;
  const same: boolean = agent.stateSync === sync && agent.state === sync.state;
  const status: SyncStatus = agent.stateSync.status;
  const edited: LocalEditResult = agent.edit([{ op: 'replace', path: '/todos/0/done', value: true }]);
  void edited;
  agent.subscribe({ onStateChanged: ({ state }) => void state });
  const { result, newMessages } = await agent.runAgent({ runId: 'r1' });
  agent.setState({ todos: [], title: 'local' });
  agent.abortRun();
  agent.abortRequest('r1');
  const copy: StateSyncHttpAgent<AppState> = agent.clone();
  copy.dispose();
  agent.dispose();
  void asHttp, same, status, result, newMessages;

  const reports: InconsistentStateInfo[] = [];
  const options: SequenceStateOptions = {
    maxThreads: 100,
    idleTtlMs: 60000,
    emitter: { digestEvery: 16, guardedPaths: ['/proposal'], replayMaxEvents: 512 },
    edits: { ownership: { '/proposal': 'agent' }, onConflict: 'user-wins' },
    onInconsistent: (info) => void reports.push(info),
  };
  const middleware: SequenceStateMiddleware = sequenceState(options);
  serverAgent.use(middleware);
  middleware.run(input, serverAgent).subscribe((event) => void event.type);
  const emitter: StateEmitter | null = middleware.emitterFor('t');
  const kept: number = middleware.threads;
  middleware.dispose();
  void emitter, kept;

  // Misuse must not compile.
  // @ts-expect-error url is required
  new StateSyncHttpAgent({ stateSync: {} });
  // @ts-expect-error abortUrl is a string or URL
  new StateSyncHttpAgent({ url: '/a', stateSync: { abortUrl: 5 } });
  // @ts-expect-error each thread's epoch is set by sequenceState()
  sequenceState({ emitter: { epoch: 'x' } });
  // @ts-expect-error the thread bound is a number
  sequenceState({ maxThreads: '10' });
}

// agui-state-sync/log: serialize, parse, compact, compare, time travel.
import { branchFrom, compactEvents, listRuns, LOG_VERSION, parseLog, parseLogStream, replayEquivalent, serializeLog, serializeLogEvent, serializeLogHeader, stateAt } from 'agui-state-sync/log';
import type { Branch, Equivalence, LogDifference, LogError, LogOptions, LogRun } from 'agui-state-sync/log';
import type { AguiEvent } from 'agui-state-sync';

async function logUsage(events: AguiEvent[], chunks: AsyncIterable<Uint8Array>) {
  const version: 1 = LOG_VERSION;
  const text: string = serializeLogHeader() + events.map((e) => serializeLogEvent(e)).join('');
  const same: AguiEvent[] = parseLog(serializeLog(events), { dropTornTail: true });
  for await (const event of parseLogStream(chunks)) void event.type;
  const options: LogOptions = { maxStateBytes: 1 << 20 };
  const compacted: AguiEvent[] = await compactEvents(events, options);
  const verdict: Equivalence = await replayEquivalent(events, compacted);
  const difference: LogDifference | null = verdict.firstDifference;
  if (difference?.kind === 'replay') void difference.code;
  else if (difference) void difference.path;
  const state = await stateAt<{ count: number }>(events, { runId: 'r1' });
  const count: number = state.count;
  await stateAt(events, { seq: 3, epoch: 'e1' });
  const branch: Branch<{ count: number }> = await branchFrom(events, 'r1');
  const emitter = await createStateEmitter({ initialState: branch.state, epoch: 'branch-1' });
  const parentRunId: string = branch.parentRunId;
  try {
    parseLog(text);
  } catch (error) {
    if (error instanceof AguiSyncError) void (error as LogError).line;
  }
  const runs: LogRun[] = listRuns(events);
  const parent: string | null = runs[0].parentRunId;
  const ended: boolean = runs[0].status !== 'running';
  void version, same, count, emitter, parentRunId, parent, ended;

  // @ts-expect-error stateAt needs a runId or a seq
  await stateAt(events, { epoch: 'e1' });
  // @ts-expect-error only engine limits are log options
  await compactEvents(events, { initialState: {} });
  // @ts-expect-error parseLog takes text
  parseLog(new Uint8Array(0));
}
void logUsage;

// ---- stores (issue 17): store-bound emitters, consumeApproval, effectKey
import { consumeApproval, effectKey, memoryStore, redisStore } from 'agui-state-sync/server';
import type { ConsumedApproval, DurableStateEmitter, EmitterStore } from 'agui-state-sync/server';

async function storeUsage(res: SseResponse, approval: Approval) {
  const store: EmitterStore = Math.random() < 0.5 ? memoryStore({ ttlMs: 60_000 }) : redisStore({ url: 'redis://127.0.0.1:6379', prefix: 'app:' });
  const durable: DurableStateEmitter<{ count: number }> = await createStateEmitter({ store, key: 'thread-1', initialState: { count: 0 } });
  const events: StateEvent<{ count: number }>[] = await durable.update({ count: 1 });
  const result = await writeCatchUp(res, durable, { headers: {} });
  const mode: CatchUpMode = result.mode;
  const plain = await createStateEmitter({ initialState: { count: 0 } });
  const adopted: number = plain.adoptHistory(events);
  const sync: CatchUpMode = catchUp(plain, null).mode; // still synchronous without a store
  const consumed: ConsumedApproval = await consumeApproval(approval, durable.state, { store, threadId: 'thread-1', interruptId: 'i1' });
  const ofForm: ConsumedApproval = await consumeApproval(approval, durable.state, { store, threadId: 'thread-1', activities: plain.activities });
  void ofForm;
  const key: string | null = consumed.ok ? consumed.effectKey : effectKey(approval, { threadId: 'thread-1' });
  const degraded: boolean = durable.degraded || durable.stats().store.degraded;
  void mode, adopted, sync, key, degraded;
  // @ts-expect-error a store-bound emitter's writes are promises
  const wrong: StateEvent<{ count: number }>[] = durable.update({ count: 2 });
  // @ts-expect-error consumeApproval needs a threadId
  await consumeApproval(approval, {}, { store });
  void wrong;
}
void storeUsage;

// Operating the proxy: drain() and the operator's handler.
import { createOpsHandler, createStateSyncProxy as makeProxy } from 'agui-state-sync/proxy';
const operated = makeProxy({ upstream: 'http://127.0.0.1:8000/agent' });
const drained: Promise<void> = operated.drain();
const isDraining: boolean = operated.draining;
void drained;
void isDraining;
void createOpsHandler(operated, { storeTimeoutMs: 500 });

// Activities on the sender (emitter.activities) and where a client's are (docs/wire.md section 11).
import { formatActivities, HEADER_ACTIVITIES } from 'agui-state-sync/server';
import type { ActivityEmitter, ActivityPosition } from 'agui-state-sync';
async function activityUsage(): Promise<void> {
  const emitter = await createStateEmitter({ maxActivities: 8 });
  const activities: ActivityEmitter = emitter.activities;
  const first = activities.snapshot('m1', 'form', { amount: 10 });
  const next = activities.patch('m1', 'form', [{ op: 'replace', path: '/amount', value: 12 }]);
  const { events, dropped } = activities.write({ type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'form', content: {} });
  const seq: number | null = activities.seq('m1');
  const sync = await createStateSync({ activities: true });
  const positions: ActivityPosition[] | null = sync.activityPositions();
  const header: string = formatActivities(positions ?? []);
  const answer = catchUp(emitter, { headers: { [HEADER_ACTIVITIES]: header } });
  const modes: string[] = (answer.activities ?? []).map((a) => a.mode);
  void first, next, events, dropped, seq, modes;
  // @ts-expect-error the content of an activity is JSON, not a function
  activities.snapshot('m1', 'form', () => 1);
}
void activityUsage;
