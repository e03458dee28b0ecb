// ag-ui-validate (PyPI, pinned in tests/frameworks/requirements.lock) as the
// outside judge of what we send in front of each real framework (issue 24,
// section 3): the proxy CLI's stream and StateSyncMiddleware's, for the run to
// the approval interrupt and the resumed run, each captured whole by a
// StateSyncHttpAgent on a clean connection and judged as a file:
//  - each run alone and the thread (both runs, as the client saw them, one
//    after the other), each beside the framework's own bytes for it (from the
//    tap): no error the framework's own stream does not have, and exit 0
//    wherever the framework's own is clean. An error of the framework's that
//    we pass on must be explained in docs/wire.md (PydanticAI's resumed run:
//    AGUI207, section 8); nothing is switched off.
// Warnings and infos are printed as diagnostics.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { countingFetch, repoRoot, startFramework, startProxy, validateCapture } from './support.mjs';

const { StateSyncHttpAgent } = await import(join(repoRoot, 'js', 'src', 'ag-ui.js'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const WIRE = readFileSync(join(repoRoot, 'docs', 'wire.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'agui-validate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const USER = { id: 'user-1', role: 'user', content: 'Draft the offsite payment and pay it once I approve.' };
const initialState = (app) => (app === 'langgraph' ? { seed: 7 } : { seed: 7, proposal: { payee: '', amount: 0 }, document: [], paid: null });

/** Both runs (to the interrupt, then resumed) of a StateSyncHttpAgent; each response's bytes. */
async function captureRuns(url, threadId, app) {
  const log = { bytes: 0, requests: 0 };
  const agent = new StateSyncHttpAgent({ url, threadId, initialState: initialState(app), initialMessages: [USER], fetch: countingFetch(log) });
  await agent.ready;
  await agent.runAgent({ runId: `${threadId}-1` });
  const guard = agent.stateSync.guard;
  const [interrupt] = guard.interrupts();
  const approved = guard.approve(guard.view('/proposal').token, { interruptId: interrupt.id });
  assert.ok(approved.ok, approved.reason);
  await agent.runAgent({ runId: `${threadId}-2`, resume: [guard.resumeEntry(approved.approval)] });
  agent.dispose();
  assert.equal(log.requests, 2, 'one connection per run (no fault)');
  return log.bodies.map((chunks) => Buffer.concat(chunks));
}

/** The findings of a report, one line each: "AGUI302 error: message". */
function findings(report) {
  const list = report?.diagnostics;
  if (!Array.isArray(list)) return [`no report: ${JSON.stringify(report).slice(0, 300)}`];
  return list.map((d) => `${d.rule} ${d.severity}${d.eventIndex >= 0 ? ` at event ${d.eventIndex} (${d.eventType})` : ''}: ${d.message}`);
}

/** The rule ids of a report's error-level findings. */
function errorRules(report) {
  return (report?.diagnostics ?? []).filter((d) => d.severity === 'error').map((d) => d.rule);
}

function judge(name, bytes) {
  const file = join(dir, `${name}.sse`);
  writeFileSync(file, bytes);
  return { ...validateCapture(file), file };
}

for (const app of ['langgraph', 'pydantic-snapshot', 'pydantic-delta']) {
  for (const setup of ['proxy', 'middleware']) {
    test(`${app}, ${setup}: ag-ui-validate finds no error in our streams`, { timeout: 120000 }, async (t) => {
      const framework = await startFramework(app, setup === 'proxy' ? 'none' : 'middleware');
      const proxy = setup === 'proxy' ? await startProxy(framework.url) : null;
      try {
        const threadId = `validate-${app}-${setup}`;
        const streams = await captureRuns((proxy ?? framework).url, threadId, app);
        const truth = await framework.truth(threadId);
        for (const [i, bytes] of streams.entries()) {
          const ours = judge(`${threadId}-run${i + 1}`, bytes);
          const theirs = judge(`${threadId}-run${i + 1}-framework`, truth.runs[i].text);
          t.diagnostic(`run ${i + 1}: ours ${findings(ours.report).join('; ') || 'clean'} | the framework's own ${findings(theirs.report).join('; ') || 'clean'}`);
          // Judged alone, a resumed run may carry the framework's own errors (see the thread below); we add none.
          const added = errorRules(ours.report).filter((rule) => !errorRules(theirs.report).includes(rule));
          assert.deepEqual(added, [], `errors in our run ${i + 1} that the framework's own stream does not have:\n${findings(ours.report).join('\n')}`);
        }
        // The thread as the client saw it: both runs, one after the other, beside the framework's own.
        const thread = judge(`${threadId}-thread`, Buffer.concat(streams));
        const own = judge(`${threadId}-thread-framework`, truth.runs.map((run) => run.text).join(''));
        t.diagnostic(`thread: ${findings(thread.report).join('; ') || 'clean'}`);
        const errors = errorRules(thread.report);
        const theirs = errorRules(own.report);
        assert.deepEqual(errors.filter((rule) => !theirs.includes(rule)), [], `errors we added:\n${findings(thread.report).join('\n')}`);
        for (const rule of errors) assert.ok(WIRE.includes(rule), `${rule} (the framework's own) is not explained in docs/wire.md`);
        if (theirs.length === 0) assert.equal(thread.status, 0, `ag-ui-validate on the thread (${setup}):\n${findings(thread.report).join('\n')}`);
      } finally {
        await proxy?.stop();
        await framework.stop();
      }
    });
  }
}
