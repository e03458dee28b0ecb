#!/usr/bin/env node
// The state healing and the approval verified, for either example backend
// (examples/langgraph, examples/pydantic-ai), run by hand from a clone:
//
//   uvicorn --app-dir examples/langgraph app:app --port 8000     (or examples/pydantic-ai)
//   make wasm npm-deps && node examples/heal.mjs --url http://127.0.0.1:8000/agent [--seed 3]
//
// Behind the proxy (app:unchanged): --url the proxy's endpoint, --backend the app's.
//
// A StateSyncHttpAgent (js/src/ag-ui.js) talks to the backend through a seeded
// faulty TCP link (tests/support/fault-link.mjs: cuts, stalls, re-chunking)
// and prints what heals: each cut, each resync and catch-up, the state when it
// is verified again. Then its guard approves the proposal the person sees, the
// resume carries the approval, and the backend pays it once: the same resume
// sent again (a client whose connection broke after sending it) pays nothing
// more. Last, the client's state beside the backend's own (GET /state).
// make frameworks-test runs this against both examples, started with uvicorn
// (tests/frameworks/examples.test.mjs).
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { StateSyncHttpAgent } from '../js/src/ag-ui.js';
import { startFaultLink } from '../tests/support/fault-link.mjs';

// Most connections are cut somewhere in their first few KB: the client heals each time.
const FAULTS = { cutProbability: 0.7, cutAfterBytes: [200, 6000], stallProbability: 0.02, stallMs: 20, delayMs: [0, 0], chunkBytes: [1, 1400] };
const USER = { id: 'user-1', role: 'user', content: 'Book the offsite.' };
const plain = (value) => JSON.parse(JSON.stringify(value));
const brief = (value) => JSON.stringify(value).slice(0, 160);
// What a person looks at: the proposal and the payment (the rest, e.g. LangGraph's messages, is counted).
const summary = (state) => `${brief({ proposal: state?.proposal ?? null, paid: state?.paid ?? null })} (${Object.keys(state ?? {}).length} keys in all)`;

/** The client side of one thread: run to the interrupt, heal, approve, resume. */
async function approveThroughLink(linkUrl, threadId, print) {
  const agent = new StateSyncHttpAgent({
    url: linkUrl, threadId, initialState: {}, initialMessages: [USER],
    stateSync: {
      backoff: { initialMs: 5, maxMs: 50, jitter: 0 },
      onStatus: ({ state }) => { if (state === 'waiting') print('  link cut: reconnecting, asking for a catch-up from seq', agent.stateSync.lastSeq); },
      onOutcome: (o) => { if (o.kind === 'resync') print(`  resync (${o.reason}): the state is not trusted until a catch-up heals it`); },
    },
  });
  await agent.ready;
  let last = null;
  const off = agent.stateSync.subscribe(() => {
    const { status, state, lastSeq } = agent.stateSync;
    if (status === 'synced' && !isDeepStrictEqual(plain(state), last)) print(`  synced at seq ${lastSeq}: ${summary((last = plain(state)))}`);
  });
  try {
    await agent.runAgent({ runId: `${threadId}-1` });
    const guard = agent.stateSync.guard;
    const [interrupt] = guard.interrupts();
    if (!interrupt) throw new Error('the run did not stop at the approval interrupt');
    const view = guard.view('/proposal');
    const approved = view.ok ? guard.approve(view.token, { interruptId: interrupt.id }) : view;
    if (!approved.ok) throw new Error(`the guard refused the approval: ${approved.reason}`);
    print(`approved ${brief(view.value)} (digest ${approved.approval.digest.slice(0, 19)}…, seq ${approved.approval.seq})`);
    const entry = guard.resumeEntry(approved.approval);
    await agent.runAgent({ runId: `${threadId}-2`, resume: [entry] });
    return { agent, entry };
  } finally {
    off();
  }
}

/** The resume sent again, straight to the backend: what a client that lost its connection after sending it does. */
async function resendResume(url, threadId, agent, entry) {
  const input = { threadId, runId: `${threadId}-2`, state: plain(agent.state), messages: plain(agent.messages), tools: [], context: [], forwardedProps: {}, resume: [entry] };
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(input) });
  const text = await response.text();
  return text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
}

/**
 * One seeded session against the AG-UI endpoint at `url` (the backend's, or a
 * proxy's in front of it); `backend`: the backend's endpoint, whose GET /state
 * sits beside it (default `url`). Returns { state, status, own, payments, cuts, resent }.
 */
export async function heal({ url, backend = url, seed = 1, threadId = `heal-${seed}`, print = console.log }) {
  const target = new URL(url);
  const link = await startFaultLink({ target: { host: target.hostname, port: Number(target.port) }, seed, ...FAULTS });
  let session;
  try {
    print(`seed ${seed}: ${threadId} through a faulty link to ${url}`);
    session = await approveThroughLink(link.url(target.pathname), threadId, print);
  } finally {
    await link.close();
  }
  const { agent, entry } = session;
  const paid = plain(agent.state).paid;
  print(`the approval verified, paid: ${brief(paid)} (${link.stats.cuts} cuts, ${link.stats.connections} connections)`);
  const resent = await resendResume(url, threadId, agent, entry);
  const own = await (await fetch(new URL(`state?threadId=${encodeURIComponent(threadId)}`, new URL('.', backend)))).json();
  const result = { state: plain(agent.state), status: agent.stateSync.status, own: own.state, payments: own.payments, cuts: link.stats.cuts, resent };
  agent.dispose();
  print(`the same resume again ends with ${resent.at(-1)?.type}${resent.at(-1)?.code ? ` ${resent.at(-1).code}` : ''}; payments for ${threadId}: ${own.payments.length}`);
  print(`client ${result.status}: ${summary(result.state)}`);
  print(`backend's own:  ${summary(own.state)}`);
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const options = { url: { type: 'string', default: 'http://127.0.0.1:8000/agent' }, backend: { type: 'string' }, seed: { type: 'string', default: '1' } };
  const { values } = parseArgs({ options });
  const result = await heal({ url: values.url, backend: values.backend ?? values.url, seed: Number(values.seed) });
  const same = Object.entries(result.own ?? {}).every(([key, value]) => isDeepStrictEqual(result.state[key], value));
  console.log(same && result.payments.length === 1 ? 'healed: the client holds the backend\'s state; paid once' : 'NOT healed (see above)');
  process.exit(same && result.payments.length === 1 ? 0 : 1);
}
