// The proxy and StateSyncMiddleware check and consume approvals for
// frameworks that cannot (issue 24, section 2; js/src/proxy/approvals.js,
// python/agui_state_sync/_asgi_approvals.py), with the real LangGraph and
// PydanticAI servers, unchanged, behind the proxy CLI or wrapped in-process:
//  - a stale approval (of the proposal as it stood before the agent revised
//    it) never reaches the framework: RUN_ERROR 'approval-stale', the catch-up, and
//    the framework saw no request; a fresh approval then pays once;
//  - two tabs: tab B's run moves the proposal after tab A's person approved
//    it (PydanticAI: B's run starts from B's state; LangGraph: B edits the
//    request, and ag-ui-langgraph forks the interrupted thread at it); A's
//    resume is refused and never reaches the framework, the effect happens
//    once (LangGraph: B's own approval pays B's proposal);
//  - a resume cut at seeded byte offsets and sent again, with the same runId
//    or as a new run, is not forwarded again: the framework ran it once and
//    paid once, and the re-sent request gets the paid state.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { prng } from '../support/fault-link.mjs';
import { repoRoot, sseEvents, startFramework, startProxy } from './support.mjs';

const { StateSyncHttpAgent } = await import(join(repoRoot, 'js', 'src', 'ag-ui.js'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const T = { timeout: 120000 };
const USER = { id: 'user-1', role: 'user', content: 'Draft the offsite payment and pay it once I approve.' };
/** The same request, edited in another tab to name the amount (langgraph_app.py drafts it). */
const EDITED = { ...USER, content: 'Draft the offsite payment of 250 and pay it once I approve.' };
const initialState = (app) => (app === 'langgraph' ? { seed: 5 } : { seed: 5, proposal: { payee: '', amount: 0 }, document: [], paid: null });

/** Run 1 to the interrupt; `early`: an approval of the first proposal the client held while synced. */
async function toInterrupt(url, threadId, app) {
  const agent = new StateSyncHttpAgent({ url, threadId, initialState: initialState(app), initialMessages: [USER] });
  await agent.ready;
  let early = null;
  const off = agent.stateSync.subscribe(() => {
    if (early || agent.stateSync.status !== 'synced') return;
    const view = agent.stateSync.guard.view('/proposal');
    if (view.ok && view.value.payee) early = agent.stateSync.guard.approve(view.token).approval;
  });
  await agent.runAgent({ runId: `${threadId}-1` });
  off();
  const [interrupt] = agent.stateSync.guard.interrupts();
  return { agent, interrupt, early };
}

/** The RunAgentInput of a resume, as the agent would send it. */
function resumeInput(agent, runId, entry) {
  const sync = agent.stateSync;
  return {
    threadId: agent.threadId, runId, state: sync.state, messages: agent.messages, tools: [], context: [], resume: [entry],
    forwardedProps: { stateSync: { lastSeq: sync.lastSeq, epoch: sync.epoch ?? null, reason: null, held: [] } },
  };
}

/** POSTs `input`; reads `limit` bytes (then drops the connection) or all of it: the text read. */
async function post(url, input, limit = Infinity) {
  const controller = new AbortController();
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(input), signal: controller.signal });
  let text = '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
      if (text.length >= limit) {
        controller.abort();
        break;
      }
    }
  } catch (error) {
    if (error.name !== 'AbortError') throw error;
  }
  return text;
}

for (const [app, setup] of [['langgraph', 'proxy'], ['pydantic-snapshot', 'proxy'], ['langgraph', 'middleware'], ['pydantic-snapshot', 'middleware']]) {
  describe(`${app}, ${setup === 'proxy' ? 'behind the proxy' : 'with StateSyncMiddleware'}: approvals checked and consumed once`, () => {
    let framework;
    let proxy;
    let endpoint;
    before(async () => {
      framework = await startFramework(app, setup === 'proxy' ? 'none' : 'middleware');
      proxy = setup === 'proxy' ? await startProxy(framework.url) : null;
      endpoint = proxy ?? framework;
    });
    after(async () => {
      await proxy?.stop();
      await framework?.stop();
    });

    test('a stale approval never reaches the framework; a fresh one pays once', T, async () => {
      const threadId = `${app}-${setup}-stale`;
      const { agent, interrupt, early } = await toInterrupt(endpoint.url, threadId, app);
      assert.ok(early && interrupt, 'an approval of the first proposal, and the interrupt');
      const stale = await post(endpoint.url, resumeInput(agent, `${threadId}-2`, agent.stateSync.guard.resumeEntry({ ...early, interruptId: interrupt.id })));
      const events = sseEvents(stale);
      assert.deepEqual(events.at(-1), { type: 'RUN_ERROR', code: 'approval-stale', message: events.at(-1).message });
      let truth = await framework.truth(threadId);
      assert.equal(truth.runs.length, 1, 'the stale resume never reached the framework');
      assert.equal(truth.effects, 0);
      const view = agent.stateSync.guard.view('/proposal');
      const fresh = agent.stateSync.guard.approve(view.token, { interruptId: interrupt.id });
      assert.ok(fresh.ok, fresh.reason);
      await agent.runAgent({ runId: `${threadId}-3`, resume: [agent.stateSync.guard.resumeEntry(fresh.approval)] });
      truth = await framework.truth(threadId);
      assert.equal(truth.effects, 1, 'the fresh approval paid once');
      assert.deepEqual(agent.state.paid, truth.state.paid);
      agent.dispose();
    });

    // PydanticAI starts each run from the client's state: tab B, with another seed, makes the agent propose
    // anew. (LangGraph: the next test.)
    if (app.startsWith('pydantic')) test('two tabs: B moves the proposal after A approved it; A\'s approval never reaches the framework', T, async () => {
      const threadId = `${app}-${setup}-tabs`;
      const { agent: tabA, interrupt } = await toInterrupt(endpoint.url, threadId, app);
      const approvedA = tabA.stateSync.guard.approve(tabA.stateSync.guard.view('/proposal').token, { interruptId: interrupt.id });
      assert.ok(approvedA.ok, approvedA.reason);
      const tabB = new StateSyncHttpAgent({ url: endpoint.url, threadId, initialState: { ...initialState(app), seed: 9 }, initialMessages: [USER] });
      await tabB.ready;
      await tabB.runAgent({ runId: `${threadId}-b1` });
      assert.notDeepEqual(tabB.state.proposal, tabA.state.proposal, 'tab B\'s run moved the proposal');
      const answer = sseEvents(await post(endpoint.url, resumeInput(tabA, `${threadId}-a2`, tabA.stateSync.guard.resumeEntry(approvedA.approval))));
      assert.equal(answer.at(-1).code, 'approval-stale');
      const truth = await framework.truth(threadId);
      assert.equal(truth.runs.length, 2, 'the framework ran A\'s first run and B\'s, never A\'s resume');
      assert.equal(truth.effects, 0);
      tabA.dispose();
      tabB.dispose();
    });

    // LangGraph on a thread paused at interrupt() (ag_ui_langgraph's LangGraphAgent.prepare_stream): a run
    // without `resume` does not take RunAgentInput.state; it answers with the pending interrupt again
    // (RUN_STARTED, RUN_FINISHED), unless the request edits a human message the checkpoint holds (same id,
    // other content). Then it forks the thread at the checkpoint before that message and runs the graph
    // again from there (the checkpoint's state, not the client's): the paused interrupt is abandoned and the
    // graph pauses at a new one. Tab B, which holds the thread's state, edits the request to name an amount
    // (langgraph_app.py drafts it), so the proposal moves. ag-ui-langgraph resumes a single resolved entry
    // as Command(resume=payload) whatever its interruptId: without a check, A's resume would resume B's
    // interrupt and pay B's amount (the control, straight to the framework, shows it).
    if (app === 'langgraph') test('two tabs: B edits the request, LangGraph moves the proposal after A approved it; A\'s approval never reaches the framework, B\'s pays once', T, async () => {
      const threadId = `${app}-${setup}-tabs`;
      const { agent: tabA, interrupt } = await toInterrupt(endpoint.url, threadId, app);
      const approvedA = tabA.stateSync.guard.approve(tabA.stateSync.guard.view('/proposal').token, { interruptId: interrupt.id });
      assert.ok(approvedA.ok, approvedA.reason);
      const tabB = new StateSyncHttpAgent({ url: endpoint.url, threadId, initialState: structuredClone(tabA.state), initialMessages: [EDITED] });
      await tabB.ready;
      await tabB.runAgent({ runId: `${threadId}-b1` });
      const [interruptB] = tabB.stateSync.guard.interrupts();
      assert.ok(interruptB && interruptB.id !== interrupt.id, 'LangGraph paused at a new interrupt');
      let truth = await framework.truth(threadId);
      assert.deepEqual(tabB.state.proposal, truth.state.proposal, 'tab B holds the framework\'s proposal');
      assert.notDeepEqual(truth.state.proposal, tabA.state.proposal, 'the framework moved the proposal A approved');
      const answer = sseEvents(await post(endpoint.url, resumeInput(tabA, `${threadId}-a2`, tabA.stateSync.guard.resumeEntry(approvedA.approval))));
      assert.equal(answer.at(-1).code, 'approval-stale');
      truth = await framework.truth(threadId);
      assert.equal(truth.runs.length, 2, 'the framework ran A\'s first run and B\'s, never A\'s resume');
      assert.equal(truth.effects, 0);
      const viewB = tabB.stateSync.guard.view('/proposal');
      const approvedB = tabB.stateSync.guard.approve(viewB.token, { interruptId: interruptB.id });
      assert.ok(approvedB.ok, approvedB.reason);
      await tabB.runAgent({ runId: `${threadId}-b2`, resume: [tabB.stateSync.guard.resumeEntry(approvedB.approval)] });
      truth = await framework.truth(threadId);
      assert.equal(truth.effects, 1, 'B\'s approval paid once');
      assert.deepEqual(truth.state.paid, viewB.value, 'it paid what B approved');
      assert.deepEqual(tabB.state.paid, truth.state.paid);
      tabA.dispose();
      tabB.dispose();
    });

    if (app === 'langgraph' && setup === 'proxy') test('control, straight to LangGraph: A\'s resume after B\'s edit pays what B\'s run proposed, not what A approved', T, async () => {
      const threadId = `${app}-control-tabs`;
      const input = (runId, messages, extra = {}) => ({ threadId, runId, state: initialState(app), messages, tools: [], context: [], forwardedProps: {}, ...extra });
      const first = sseEvents(await post(framework.url, input(`${threadId}-1`, [USER])));
      const approvedA = first.findLast((e) => e.type === 'STATE_SNAPSHOT').snapshot.proposal;
      const interruptA = first.at(-1).outcome.interrupts[0];
      const second = sseEvents(await post(framework.url, input(`${threadId}-b1`, [EDITED])));
      assert.notEqual(second.at(-1).outcome.interrupts[0].id, interruptA.id);
      await post(framework.url, input(`${threadId}-a2`, [USER], { resume: [{ interruptId: interruptA.id, status: 'resolved', payload: { approved: true } }] }));
      const truth = await framework.truth(threadId);
      assert.equal(truth.effects, 1, 'A\'s resume acted');
      assert.notDeepEqual(truth.state.paid, approvedA, 'on a proposal A never approved');
    });

    for (const seed of [1, 2, 3]) {
      test(`seed ${seed}: a resume cut and sent again (same runId, then a new run) acts once`, T, async () => {
        const threadId = `${app}-${setup}-resend-${seed}`;
        const { agent, interrupt } = await toInterrupt(endpoint.url, threadId, app);
        const approved = agent.stateSync.guard.approve(agent.stateSync.guard.view('/proposal').token, { interruptId: interrupt.id });
        const entry = agent.stateSync.guard.resumeEntry(approved.approval);
        const input = resumeInput(agent, `${threadId}-2`, entry);
        const random = prng(seed);
        await post(endpoint.url, input, 1 + Math.floor(random() * 1500)); // cut somewhere in the first 1.5 KB
        const again = sseEvents(await post(endpoint.url, input));
        const other = sseEvents(await post(endpoint.url, { ...input, runId: `${threadId}-3` }));
        const truth = await framework.truth(threadId);
        assert.equal(truth.runs.length, 2, 'the framework got the resume once');
        assert.equal(truth.effects, 1, 'and paid once');
        for (const events of [again, other]) {
          assert.ok(['RUN_FINISHED'].includes(events.at(-1)?.type), `the re-sent resume ends: ${events.map((e) => e.type)}`);
        }
        agent.dispose();
      });
    }
  });
}
