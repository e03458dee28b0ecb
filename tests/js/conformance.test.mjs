// Third-party conformance suites run through the public WASM API: the JSON
// Patch suite from the npm package json-patch-test-suite, the others from the
// external folder AGUI_CONFORMANCE_DIR (skipped when absent; see support.mjs).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assertMirrors, conformanceDir, conformanceSkip, engineState, pkg, plain, readConformance, readJsonPatchSuite, sse,
} from './support.mjs';

const { createStateSync } = pkg;

const fromB64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));

// The npm package (1.1.0), and the suite's newer revision where the external
// folder has it; the minimum sizes catch a silently truncated file.
const patchSuites = [
  { source: 'npm', file: 'tests.json', min: 75, records: () => readJsonPatchSuite('tests.json') },
  { source: 'npm', file: 'spec_tests.json', min: 16, records: () => readJsonPatchSuite('spec_tests.json') },
  ...(conformanceDir
    ? [{ source: 'external', file: 'tests.json', min: 92, records: () => readConformance('json-patch-tests/tests.json') }]
    : []),
];

describe('JSON-Patch (json-patch-tests) as unsequenced STATE_DELTA events', () => {
  for (const { source, file, min, records: read } of patchSuites) {
    const records = read();
    const enabled = records.filter((r) => !r.disabled);
    test(`${file} (${source}): ${enabled.length} enabled cases`, async () => {
      assert.ok(enabled.length >= min, 'suite unexpectedly small');
      const failures = [];
      for (const [index, record] of enabled.entries()) {
        const name = `${file}#${index} ${record.comment ?? ''}`;
        const sync = await createStateSync({ initialState: record.doc });
        try {
          const before = sync.state;
          const text = `data: {"type":"STATE_DELTA","delta":${JSON.stringify(record.patch)}}\n\n`;
          const outcomes = sync.feed(text);
          const applied = outcomes.filter((o) => o.kind === 'applied');
          if ('error' in record) {
            if (applied.length !== 0) failures.push(`${name}: applied a patch that must fail`);
            else if (sync.state !== before) failures.push(`${name}: state object changed on failure`);
            else if (!outcomes.some((o) => o.kind === 'resync' || o.kind === 'error')) {
              failures.push(`${name}: no resync/error outcome`);
            }
            assert.deepEqual(engineState(sync), plain(record.doc), `${name}: engine state changed`);
          } else {
            if (applied.length !== 1) {
              failures.push(`${name}: not applied: ${JSON.stringify(outcomes)}`);
              continue;
            }
            if ('expected' in record) {
              assert.deepEqual(plain(sync.state), plain(record.expected), name);
            }
            assert.equal(applied[0].state, sync.state);
            assertMirrors(sync, name);
          }
        } finally {
          sync.dispose();
        }
      }
      assert.deepEqual(failures, []);
    });
  }
});

describe('AG-UI client state application (agui-apply)', { skip: conformanceSkip }, () => {
  if (!conformanceDir) return;
  const suite = readConformance('agui-apply/state_cases.json');
  test(`state_cases.json has ${suite.cases.length} cases`, () => assert.ok(suite.cases.length >= 21));
  for (const c of suite.cases) {
    test(c.name, async () => {
      const sync = await createStateSync({ initialState: c.initial_state ?? {} });
      let updates = 0;
      sync.subscribe(() => updates++);
      const checkpoints = new Map(c.expected.map((e) => [e.after_event, e]));
      const passedThrough = [];
      for (const [i, event] of c.events.entries()) {
        const before = sync.state;
        const outcomes = sync.feed(sse(event));
        const isState = event.type === 'STATE_SNAPSHOT' || event.type === 'STATE_DELTA';
        if (!isState) {
          assert.deepEqual(outcomes, [{ kind: 'event', event }]);
          passedThrough.push(outcomes[0].event);
        }
        const expected = checkpoints.get(i);
        if (!expected) continue;
        if (expected.patch_error) {
          assert.ok(!outcomes.some((o) => o.kind === 'applied'), 'a failing patch must not apply');
          assert.equal(sync.state, before, 'state untouched (same object)');
          assert.ok(outcomes.some((o) => o.kind === 'resync'));
        } else if (isState) {
          assert.equal(outcomes.length, 1);
          assert.equal(outcomes[0].kind, 'applied');
        }
        assert.deepEqual(plain(sync.state), expected.state, `after event ${i}`);
        assertMirrors(sync, `after event ${i}`);
      }
      if (c.updates_emitted === 0) {
        // AG-UI emits no state update; here only the status (-> resyncing) may change.
        assert.equal(sync.state, sync.state);
        assert.ok(updates <= 1);
        assert.equal(sync.status, 'resyncing');
      }
      assert.equal(passedThrough.length, c.events.filter((e) => !e.type.startsWith('STATE_')).length);
      sync.dispose();
    });
  }

  const activity = readConformance('agui-apply/activity_cases.json');
  test(`activity_cases.json: ${activity.cases.length} cases pass through as events, verbatim`, async () => {
    for (const c of activity.cases) {
      const sync = await createStateSync();
      for (const event of c.events) {
        assert.deepEqual(sync.feed(sse(event)), [{ kind: 'event', event }]);
      }
      assert.deepEqual(sync.state, {});
      sync.dispose();
    }
  });

  const transform = readConformance('agui-apply/sse_transform_cases.json');
  for (const c of transform.cases) {
    test(`sse transform: ${c.name}`, async () => {
      const sync = await createStateSync();
      const outcomes = [];
      for (const chunk of c.chunks_b64) outcomes.push(...sync.feed(fromB64(chunk)));
      outcomes.push(...sync.end());
      const events = outcomes.filter((o) => o.kind === 'event').map((o) => o.event);
      assert.deepEqual(events, c.events);
      if (c.error) assert.ok(outcomes.some((o) => o.kind === 'error' && o.code === 'invalid-json'));
      else assert.ok(!outcomes.some((o) => o.kind === 'error'));
      sync.dispose();
    });
  }
});

// SSE framing. These streams carry arbitrary text, not AG-UI events, so through
// the public API each dispatched event shows up as one outcome: an 'event' when
// its data is an AG-UI event object, else an 'error' (which may be followed by a
// 'resync', filtered out here). What is checked: the number and order of
// dispatched events, the parsed payload of every JSON-object event, the event
// id at each dispatch (fed byte by byte, so each outcome is seen with the
// lastEventId of its own dispatch), the final id, and the comment count.
function predict(data) {
  let value;
  try {
    value = JSON.parse(data);
  } catch {
    return { kind: 'error' };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof value.type === 'string' &&
    value.type !== 'STATE_SNAPSHOT' && value.type !== 'STATE_DELTA') {
    return { kind: 'event', event: value };
  }
  return { kind: 'error' };
}

async function runSseCase(c) {
  const sync = await createStateSync();
  const seen = []; // [outcome, lastEventId at dispatch]
  const breaks = new Set(c.connection_breaks ?? []);
  c.chunks_b64.forEach((b64, index) => {
    const bytes = fromB64(b64);
    for (let i = 0; i < bytes.length; i++) {
      for (const o of sync.feed(bytes.subarray(i, i + 1))) {
        if (o.kind !== 'resync') seen.push([o, sync.lastEventId]);
      }
    }
    if (breaks.has(index)) {
      sync.end();
      sync.reset();
    }
  });
  const result = { seen, lastEventId: sync.lastEventId, heartbeats: sync.metrics().heartbeats };
  sync.dispose();
  return result;
}

function checkSseCase(c, { seen, lastEventId, heartbeats }) {
  const expected = c.events ?? [];
  if (c.events_exhaustive) assert.equal(seen.length, expected.length, 'number of dispatched events');
  else assert.ok(seen.length >= expected.length, `at least ${expected.length} events, got ${seen.length}`);
  expected.forEach((e, i) => {
    const [outcome, id] = seen[i];
    if ('data' in e) {
      const p = predict(e.data);
      assert.equal(outcome.kind, p.kind, `event ${i} kind (data ${JSON.stringify(e.data).slice(0, 80)})`);
      if (p.kind === 'event') assert.deepEqual(outcome.event, p.event, `event ${i} payload`);
    }
    if ('id' in e) assert.equal(id, e.id === '' ? null : e.id, `event ${i} id`);
  });
  if ('last_event_id' in c) assert.equal(lastEventId, c.last_event_id === '' ? null : c.last_event_id, 'last event id');
  if (Array.isArray(c.comments)) assert.equal(heartbeats, c.comments.length, 'comments (heartbeats)');
}

describe('SSE framing conformance through the WASM API', { skip: conformanceSkip }, () => {
  if (!conformanceDir) return;
  for (const file of ['wpt_eventsource.json', 'launchdarkly_sse_contract_tests.json', 'eventsource_parser.json']) {
    const suite = readConformance(`sse/${file}`);
    test(`${file}: ${suite.cases.length} cases`, async () => {
      assert.ok(suite.cases.length > 30);
      const failures = [];
      for (const c of suite.cases) {
        try {
          checkSseCase(c, await runSseCase(c));
        } catch (error) {
          failures.push(`${c.name}: ${error.message.split('\n')[0]}`);
        }
      }
      assert.deepEqual(failures, []);
    });
  }

  test('AG-UI payloads framed every way the suites exercise (CRLF, CR, BOM, multi-line data, comments)', async () => {
    const event = { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'a\nb' };
    const json = JSON.stringify(event);
    const half = Math.floor(json.length / 2);
    const streams = [
      `data: ${json}\n\n`,
      `data: ${json}\r\n\r\n`,
      `data: ${json}\r\r`,
      `\uFEFFdata: ${json}\n\n`,
      `: comment\nevent: ignored\nid: 1\nretry: 10\ndata:${json}\n\n`,
      `data: ${json.slice(0, half)}\ndata: ${json.slice(half)}\n\n`, // joined with "\n" (JSON whitespace)
      `data:${json}\n\n`, // no space after the colon
      `id: 9\r\ndata: ${json}\n\r\n`, // mixed line endings
    ];
    for (const text of streams) {
      for (const step of [1, 3, text.length]) {
        const sync = await createStateSync();
        const outcomes = [];
        for (let i = 0; i < text.length; i += step) outcomes.push(...sync.feed(text.slice(i, i + step)));
        const events = outcomes.filter((o) => o.kind === 'event');
        assert.equal(events.length, 1, JSON.stringify(text));
        assert.deepEqual(events[0].event, event);
        sync.dispose();
      }
    }
  });
});
