// Compiled with `tsc --noEmit -p tests/js/tsconfig.json` (types.test.mjs): the
// hand-written declarations must accept real usage and reject misuse.
import { createStateSync } from 'agui-state-sync';
import type {
  AppliedOutcome,
  JsonValue,
  Outcome,
  ResyncRequest,
  StateSync,
  StateSyncOptions,
  SyncMetrics,
  SyncStatus,
} from 'agui-state-sync';
import { useAgentState } from 'agui-state-sync/react';

interface Todo {
  id: number;
  text: string;
  done: boolean;
}
interface AppState {
  todos: Todo[];
  title: string;
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
