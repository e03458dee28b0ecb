// A client of an activity stream for the fault-link tests (not a test file):
// createStateSync({ activities: true }) + connectStateSync POSTing one
// RunAgentInput, recording every activity content it showed as verified
// ('synced') with its seq, so a test can hold each to what the agent held.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';

const plain = (value) => JSON.parse(JSON.stringify(value));

/**
 * Records every activity content `sync` shows as verified ('synced'), each
 * (messageId, epoch, lastSeq) once: { verified: [{ messageId, lastSeq, content }], off() }.
 */
export function recordVerified(sync) {
  const verified = [];
  const seen = new Set();
  let last = null;
  const off = sync.subscribe(() => {
    const view = sync.activities;
    if (view === last) return;
    last = view;
    for (const a of Object.values(view)) {
      const key = `${a.messageId}@${a.epoch}:${a.lastSeq}`;
      if (a.status !== 'synced' || seen.has(key)) continue;
      seen.add(key);
      verified.push({ messageId: a.messageId, lastSeq: a.lastSeq, content: plain(a.content) });
    }
  });
  return { verified, off };
}

/**
 * Connects `pkg`'s engine to `url` with `input`: { sync, done, verified, outcomes }.
 * verified: [{ messageId, lastSeq, content }], each (messageId, lastSeq) once.
 */
export async function connectActivityClient(pkg, url, input, backoff) {
  const sync = await pkg.createStateSync({ activities: true });
  const { verified, off } = recordVerified(sync);
  const outcomes = [];
  const connection = pkg.connectStateSync(sync, { url, body: () => input, backoff, onOutcome: (o) => outcomes.push(o) });
  const done = connection.done.finally(off);
  return { sync, done, verified, outcomes, close: connection.close };
}

/**
 * Every content the client showed as verified is one the agent held
 * (`history`: { messageId: [contents] }), and it ends synced on `current`
 * ({ messageId: content }, the sender's). Returns how many were checked.
 */
export function checkActivities(client, history, current, what) {
  for (const { messageId, lastSeq, content } of client.verified) {
    assert.ok((history[messageId] ?? []).some((held) => isDeepStrictEqual(held, content)),
      `${what}: ${messageId} at seq ${lastSeq} was shown verified with content the agent never held: ${JSON.stringify(content)}`);
  }
  for (const [messageId, content] of Object.entries(current)) {
    const mirror = client.sync.activities[messageId];
    assert.ok(mirror, `${what}: the client has no ${messageId}`);
    assert.equal(mirror.status, 'synced', `${what}: ${messageId} ends synced (${JSON.stringify(mirror.resync)})`);
    assert.deepEqual(plain(mirror.content), content, `${what}: ${messageId} converged on the sender's content`);
  }
  return client.verified.length;
}
