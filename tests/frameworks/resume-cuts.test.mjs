// Runs held past their client's cut, with real frameworks (issue 39, item 4),
// in both set-ups: (a) the framework unchanged behind the Node proxy CLI,
// (b) StateSyncMiddleware in-process. Everything goes through the seeded
// fault link (tests/support/fault-link.mjs).
//
//  - The approval cut, LangGraph: run to the approval interrupt, approve
//    through StateSyncHttpAgent's guard, send the approved resume and cut that
//    connection right after its first bytes, then send the same resume again
//    (same runId, same resume entries) from the agent over a fresh connection:
//    while the approved run still goes on, and once it has ended. The graph
//    holds its payment (langgraph_app.hold) until the test releases it, so the
//    cut surely lands while the approved run is going, and the re-sent resume
//    surely arrives while it goes on (or after it ended): no timing luck. Then
//    the payment happened once, the graph completed (no node left, no pending
//    interrupt), and the client ends synced at the framework's final state.
//    Without a held run, the cut stopped the graph before it paid, the
//    approval was consumed, and the payment was lost.
//  - Side effects, PydanticAI: the tools of a run cut and resumed over the
//    faulty link ran exactly as often as those of a clean run of the same seed
//    and input (pydantic_app.TOOL_CALLS); re-running a cut run from its start
//    would call them again.
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFaultLink } from '../support/fault-link.mjs';
import { until } from '../support/until.mjs';
import { countingFetch, frameworkStates, repoRoot, sseEvents, startFramework, startProxy } from './support.mjs';

const { StateSyncHttpAgent } = await import(join(repoRoot, 'js', 'src', 'ag-ui.js'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const T = { timeout: 120000 };
const FAST = { initialMs: 5, maxMs: 50, jitter: 0 };
// As frameworks.test.mjs: cuts anywhere in the first few KB of a stream.
const FAULTS = { cutProbability: 0.7, cutAfterBytes: [200, 6000], stallProbability: 0.02, stallMs: 20, delayMs: [0, 0], chunkBytes: [1, 1400] };
// The approved resume's own connection: cut within its first bytes (the response head included).
const CUT_EARLY = { cutProbability: 1, cutAfterBytes: [1, 400] };
const SETUPS = { proxy: '(a) unchanged, behind the Node proxy', middleware: '(b) StateSyncMiddleware in-process' };
const USER = { id: 'user-1', role: 'user', content: 'Draft the offsite payment and pay it once I approve.' };
const plain = (value) => JSON.parse(JSON.stringify(value));

function initialState(app, seed) {
  return app === 'langgraph' ? { seed } : { seed, proposal: { payee: '', amount: 0 }, document: [], paid: null };
}

/** The framework (and the proxy in front, for set-up (a)), started before a suite's tests and stopped after. */
function serveFor(app, setup) {
  const served = {};
  before(async () => {
    served.framework = await startFramework(app, setup === 'proxy' ? 'none' : 'middleware');
    served.proxy = setup === 'proxy' ? await startProxy(served.framework.url) : null;
    served.endpoint = served.proxy ?? served.framework;
  });
  after(async () => {
    await served.proxy?.stop();
    await served.framework?.stop();
  });
  return served;
}

/** A StateSyncHttpAgent run to the approval interrupt, approved through its guard: { agent, log, proposal, entry }. */
async function toApproval(url, threadId, app, seed) {
  const log = { bytes: 0, requests: 0 };
  const agent = new StateSyncHttpAgent({
    url, threadId, initialState: initialState(app, seed), initialMessages: [USER], fetch: countingFetch(log), stateSync: { backoff: FAST },
  });
  await agent.ready;
  await agent.runAgent({ runId: `${threadId}-1` });
  const guard = agent.stateSync.guard;
  const [interrupt] = guard.interrupts();
  assert.ok(interrupt, 'run 1 ended at the approval interrupt');
  const view = guard.view('/proposal');
  assert.ok(view.ok, `the proposal can be viewed: ${view.reason}`);
  const approved = guard.approve(view.token, { interruptId: interrupt.id });
  assert.ok(approved.ok, `the guard approves: ${approved.reason}`);
  return { agent, log, proposal: plain(view.value), entry: guard.resumeEntry(approved.approval) };
}

/** The RunAgentInput of a resume, as the agent sends it (approvals.test.mjs). */
function resumeInput(agent, runId, entry) {
  const sync = agent.stateSync;
  return {
    threadId: agent.threadId, runId, state: sync.state, messages: agent.messages, tools: [], context: [], resume: [entry],
    forwardedProps: { stateSync: { lastSeq: sync.lastSeq, epoch: sync.epoch ?? null, reason: null, held: [] } },
  };
}

/**
 * POSTs `input` on a connection of its own (fetch would reuse one the link
 * accepted earlier, under other faults) and drops it as soon as the first
 * bytes of the answer's body arrive, unless the link cut it even earlier (in
 * the response head): { text (the body bytes that came), head (whether the
 * response head came) }.
 */
function postCut(url, input) {
  const body = Buffer.from(JSON.stringify(input));
  return new Promise((resolve) => {
    const answer = { text: '', head: false };
    const request = http.request(url, {
      method: 'POST', agent: false, headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': body.length },
    }, (response) => {
      answer.head = true;
      response.once('data', (chunk) => {
        answer.text = chunk.toString('utf8');
        request.destroy();
      });
      response.once('close', () => resolve(answer));
    });
    request.once('error', () => resolve(answer)); // the link cut it (or we did, after the first chunk)
    request.once('close', () => resolve(answer));
    request.end(body);
  });
}

/** The thread's truth once every run the framework got has ended (its tap saw the last byte). */
function settledTruth(framework, threadId, runs) {
  let seen = null;
  return until(async () => {
    seen = await framework.truth(threadId);
    return seen.runs.length >= runs && seen.runs.every((run) => run.complete) ? seen : null;
  }, () => `the framework's ${runs} runs of ${threadId} to end (seen: ${JSON.stringify(seen?.runs.map((r) => [r.runId, r.complete]))})`);
}

/** What the client ended with, checked against the framework's truth: synced, at its final state, its own state. */
function assertClientAtFrameworkState(agent, truth) {
  assert.equal(agent.stateSync.status, 'synced', 'the client ends synced');
  assert.deepEqual(plain(agent.state), frameworkStates(truth).at(-1), 'at the framework\'s final state');
  for (const [key, value] of Object.entries(truth.state)) assert.deepEqual(agent.state[key], value, `the framework's own ${key}`);
  assert.deepEqual(agent.stateSync.guard.interrupts(), [], 'no interrupt left open on the client');
}

const RESENDS = {
  // The re-sent resume arrives while the approved run is held at its payment: it joins that run.
  'while the approved run still goes on': async ({ agent, runId, entry, framework, threadId }) => {
    const events = [];
    let settled = false;
    const resent = agent.runAgent({ runId, resume: [entry] }, { onEvent: ({ event }) => events.push(event) }).finally(() => {
      settled = true;
    });
    await until(() => events.length > 0 || settled, 'the re-sent resume\'s first event');
    const truth = await framework.truth(threadId);
    assert.equal(truth.facts.waiting, 1, 'the payment still waited when the re-sent resume was answered');
    await framework.hold(threadId, false);
    await resent;
  },
  // The approved run ended (paid) before the resume is sent again.
  'after the approved run ended': async ({ agent, runId, entry, framework, threadId }) => {
    await framework.hold(threadId, false);
    await settledTruth(framework, threadId, 2);
    await agent.runAgent({ runId, resume: [entry] });
  },
};

for (const [setup, title] of Object.entries(SETUPS)) {
  describe(`langgraph: ${title}: the approved resume cut after its first bytes, then sent again`, () => {
    const served = serveFor('langgraph', setup);
    for (const [when, resend] of Object.entries(RESENDS)) {
      for (const seed of [1, 2, 3]) {
        test(`seed ${seed}, sent again ${when}: paid once, the graph completed, the client synced at its final state`, T, async (t) => {
          const { framework, endpoint } = served;
          const threadId = `langgraph-${setup}-cut-${when.split(' ')[0]}-${seed}`;
          const link = await startFaultLink({ target: { host: '127.0.0.1', port: endpoint.port }, seed, ...FAULTS });
          try {
            const { agent, proposal, entry, log } = await toApproval(link.url('/agent'), threadId, 'langgraph', seed);
            const runId = `${threadId}-2`;
            await framework.hold(threadId, true);
            link.setFaults(CUT_EARLY);
            const cutsBefore = link.stats.cuts;
            const cut = await postCut(link.url('/agent'), resumeInput(agent, runId, entry));
            assert.ok(!cut.text.includes('"RUN_FINISHED"'), 'the cut connection never got the run\'s end');
            // The client is gone; the approved run goes on without it, up to its payment (held there).
            await until(async () => (await framework.truth(threadId)).facts.waiting === 1, 'the approved run to reach its payment after its client was cut');
            link.setFaults(FAULTS);
            await resend({ agent, runId, entry, framework, threadId });
            const truth = await settledTruth(framework, threadId, 2);
            t.diagnostic(JSON.stringify({ setup, seed, when, cutBytes: Buffer.byteLength(cut.text), head: cut.head, linkCut: link.stats.cuts > cutsBefore, linkCuts: link.stats.cuts, requests: log.requests, frameworkRuns: truth.runs.length }));
            assert.equal(truth.runs.length, 2, 'the framework got the run to the interrupt and the approved resume, once each');
            assert.equal(truth.effects, 1, 'the approved payment happened exactly once');
            assert.deepEqual(truth.state.paid, proposal, 'it paid what the person approved');
            assert.deepEqual(truth.facts.next, [], 'the graph completed: no node left to run');
            assert.equal(truth.facts.interrupts, 0, 'not paused at interrupt()');
            const last = sseEvents(truth.runs.at(-1).text).at(-1);
            assert.equal(last?.type, 'RUN_FINISHED', 'the framework ended the approved run');
            assert.notEqual(last.outcome?.type, 'interrupt', 'past the interrupt');
            assertClientAtFrameworkState(agent, truth);
            agent.dispose();
          } finally {
            await framework.hold(threadId, false);
            await link.close();
          }
        });
      }
    }
  });
}

/** One runAgent() to the interrupt and the approved resume, through `url`: the framework's settled truth. */
async function approvedRun(url, framework, threadId, app, seed) {
  const { agent, entry } = await toApproval(url, threadId, app, seed);
  await agent.runAgent({ runId: `${threadId}-2`, resume: [entry] });
  const truth = await settledTruth(framework, threadId, 2);
  assertClientAtFrameworkState(agent, truth);
  agent.dispose();
  return truth;
}

for (const [setup, title] of Object.entries(SETUPS)) {
  describe(`pydantic-snapshot: ${title}: tools run as often as in a clean run`, () => {
    const served = serveFor('pydantic-snapshot', setup);
    let cuts = 0;
    for (const seed of [1, 2, 3]) {
      test(`seed ${seed}: the tool calls through the cutting link equal a clean run's`, T, async (t) => {
        const { framework, endpoint } = served;
        const clean = await approvedRun(endpoint.url, framework, `pydantic-${setup}-clean-${seed}`, 'pydantic-snapshot', seed);
        const link = await startFaultLink({ target: { host: '127.0.0.1', port: endpoint.port }, seed, ...FAULTS });
        let cut;
        try {
          cut = await approvedRun(link.url('/agent'), framework, `pydantic-${setup}-cut-${seed}`, 'pydantic-snapshot', seed);
        } finally {
          cuts += link.stats.cuts;
          await link.close();
        }
        t.diagnostic(JSON.stringify({ setup, seed, linkCuts: link.stats.cuts, cleanToolCalls: clean.facts.toolCalls, cutToolCalls: cut.facts.toolCalls }));
        assert.ok(clean.facts.toolCalls > 0, 'the clean run called its tools (the comparison is not vacuous)');
        assert.equal(cut.facts.toolCalls, clean.facts.toolCalls, 'each tool ran as often as in the clean run');
        assert.equal(cut.runs.length, clean.runs.length, 'the framework ran once per runAgent(), as in the clean run');
        assert.equal(cut.effects, 1, 'the approved payment happened once');
        assert.equal(clean.effects, 1);
      });
    }
    test('the link cut connections: the runs above were resumed', () => {
      assert.ok(cuts > 0, 'no seed was cut');
    });
  });
}
