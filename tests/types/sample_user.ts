// A user's program against the agui-state-sync package, the twin of
// sample_user.py: compiled with `tsc --noEmit --strict -p tests/types/tsconfig.json`
// by tests/js/types-strict.test.mjs, with no error. It uses only what the
// package's types (js/types/*.d.ts) declare.
import { AguiSyncError, createStateEmitter, createStateSync } from 'agui-state-sync';
import type {
  Approval, ApproveResult, EmitterStore, ErrorCode, GuardReason, Interrupt, Outcome, ResumeEntry,
  ResyncReason, StateSync, ViewToken,
} from 'agui-state-sync';
import {
  catchUp, consumeApproval, effectKey, memoryStore, once, promptMessage, readResyncRequest,
} from 'agui-state-sync/server';
import type { ConsumedApproval, PromptMessage } from 'agui-state-sync/server';
import { sequenceState } from 'agui-state-sync/ag-ui';
import { createStateSyncProxy } from 'agui-state-sync/proxy';

type Order = { order: { amount: number; currency?: string } };

function approved(sync: StateSync<Order>, token: ViewToken, interruptId: string): Approval {
  const result: ApproveResult = sync.guard.approve(token, { interruptId });
  if (!result.ok) {
    const reason: GuardReason = result.reason;
    throw new Error(`not approvable: ${reason}`);
  }
  return result.approval;
}

async function keyOf(approval: Approval, state: unknown, store: EmitterStore, threadId: string): Promise<string> {
  const decision: ConsumedApproval = await consumeApproval(approval, state, { store, threadId });
  if (!decision.ok || decision.effectKey === null) throw new Error(`refused: ${decision.reason ?? 'unknown'}`);
  return decision.effectKey;
}

async function pay(key: string): Promise<{ receipt: string }> {
  return { receipt: `paid:${key.slice(0, 8)}` };
}

function retryLater(error: AguiSyncError): boolean {
  const code: ErrorCode = error.code;
  return code === 'store-unavailable' || code === 'run-active';
}

function resyncReasons(outcomes: Outcome<Order>[]): ResyncReason[] {
  const reasons: ResyncReason[] = [];
  for (const o of outcomes) if (o.kind === 'resync') reasons.push(o.reason);
  return reasons;
}

export async function main(): Promise<void> {
  const store = memoryStore();
  const emitter = await createStateEmitter<Order>({ initialState: { order: { amount: 42 } } });
  const sync = await createStateSync<Order>();
  const outcomes: Outcome<Order>[] = [];
  for (const event of emitter.update({ order: { amount: 42, currency: 'EUR' } })) {
    outcomes.push(...sync.feed(emitter.encode(event)));
  }
  if (resyncReasons(outcomes).length > 0) throw new Error('resync');
  const view = sync.guard.view('/order');
  if (!view.ok) throw new Error(view.reason);
  const open: Interrupt[] = sync.guard.interrupts();
  const approval = approved(sync, view.token, open[0]?.id ?? 'interrupt-1');
  const entry: ResumeEntry<{ note: string }> = sync.guard.resumeEntry(approval, { note: 'ok' });
  const bound: string = entry.interruptId;

  const key = await keyOf(approval, emitter.state, store, 't1');
  const receipt: { receipt: string } = await once(store, key, pay);
  const same: string = effectKey(approval, { threadId: 't1', interruptId: bound });

  const where = readResyncRequest({ headers: { 'x-agui-state-seq': '0' } });
  const answer = catchUp(emitter, { headers: { 'x-agui-state-seq': '0' } });
  const message: PromptMessage = promptMessage(emitter.state);

  const durable = await createStateEmitter<Order>({ store, key: 't2', initialState: { order: { amount: 1 } } });
  const events = await durable.update({ order: { amount: 2 } }, { rebase: true });

  const middleware = sequenceState({ maxThreads: 10 });
  const proxy = createStateSyncProxy({ upstream: 'http://127.0.0.1:8000/agent' });
  try {
    emitter.update({ order: { amount: Number.NaN } });
  } catch (error) {
    if (error instanceof AguiSyncError && retryLater(error)) throw error;
  }
  console.log(receipt.receipt, same.length, where.lastSeq, answer.mode, message.role, events.length,
    middleware.threads, proxy.draining);
}
