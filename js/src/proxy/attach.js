// X-AGUI-Attach: <threadId> (a GET): a client that did not start the thread's
// run (a reloaded page, a second device, StateSyncHttpAgent.connect()) joins it
// (docs/wire.md section 8):
//  - a Last-Event-ID of a run of that thread the proxy holds: that stream is
//    resumed, as any resume (the client was cut from the stream it attached to);
//  - else the thread's running run (the one started last; with a Redis store,
//    also one another instance holds, from its stored log): its RUN_STARTED,
//    the client's own catch-up right after it, the run's other events so far,
//    then live, on one more connection of the run ('run'). An attach that
//    comes before the run's RUN_STARTED waits for it;
//  - else ('idle'): a stream of its own that brings the state up to date and
//    ends: RUN_STARTED, the catch-up, a heartbeat at the seq it left the
//    client at, RUN_FINISHED (one complete AG-UI run that ran nothing, with
//    a runId of its own, so every AG-UI client accepts it). No id: it is no
//    run's stream, nothing to resume.
import { randomUUID } from 'node:crypto';
import { HEADER_ATTACH, HEADER_CATCH_UP } from '../shared/resync-wire.js';
import { wireSeq } from '../engine/wire-meta.js';
import { frameEvent, heartbeatLine, SSE_HEAD } from './sse-out.js';

/**
 * Serves an attach request ({ threadId, eventId, position }).
 * resume(run, n): the proxy's resume of `run` after event n, as an attach.
 */
export async function serveAttach(ctx, res, request, resume) {
  const { registry } = ctx;
  const { threadId, eventId, position } = request;
  const held = eventId === null ? null : registry.lookup(eventId.key)?.run ?? (await ctx.remote?.byKey(eventId.key)) ?? null;
  if (held && held.thread.id === threadId && eventId.n <= held.lastN) return resume(held, eventId.n);
  const thread = await registry.thread(threadId);
  let live;
  try {
    live = runningRun(thread) ?? (await ctx.remote?.runningOn(threadId)) ?? null;
    if (live === null) {
      ctx.counters.attaches.idle++;
      return await answerIdle(res, thread, position);
    }
  } finally {
    thread.pins--;
  }
  ctx.counters.attaches.run++;
  return new Promise((resolve, reject) => {
    live.whenStarted(() => {
      try {
        Promise.resolve(resume(live, 0)).then(resolve, reject);
      } catch (error) {
        reject(error);
      }
    });
  });
}

// The thread's run still streaming from its upstream, the one started last; null when none is.
function runningRun(thread) {
  let found = null;
  for (const run of thread.runs) if (!run.finished) found = run;
  return found;
}

function catchUpMode(events) {
  if (events.length === 0) return 'current';
  return events[0].type === 'STATE_SNAPSHOT' ? 'snapshot' : 'replay';
}

// No run is going on: the client's catch-up, framed as a complete run of its own.
function answerIdle(res, thread, position) {
  return thread.withCatchUp((catchUpEvents) => {
    const events = catchUpEvents(position);
    const seq = thread.vouched ? (wireSeq(events.at(-1)) ?? position.lastSeq ?? thread.emitter.seq) : null;
    const ids = { threadId: thread.id, runId: randomUUID() };
    const parts = [frameEvent(null, JSON.stringify({ type: 'RUN_STARTED', ...ids }))];
    for (const event of events) parts.push(frameEvent(null, JSON.stringify(event)));
    parts.push(heartbeatLine(seq), frameEvent(null, JSON.stringify({ type: 'RUN_FINISHED', ...ids })));
    res.writeHead(200, { ...SSE_HEAD, [HEADER_ATTACH]: 'idle', [HEADER_CATCH_UP]: thread.vouched ? catchUpMode(events) : 'current' });
    res.end(parts.join(''));
  });
}
