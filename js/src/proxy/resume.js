// What a client that reconnects with Last-Event-ID "<key>:<n>" gets before
// the live events of the run:
//  - 'exact': the logged events after n, byte for byte (chat text, tool
//    calls, and the state events too). Chosen when the client's state position
//    is the one those events continue from: it says it is at the seq the
//    stream had reached at event n (same epoch, not resyncing), or it keeps no
//    position at all;
//  - 'caught-up': the state part by the catch-up rules (thread.catchUpEvents:
//    nothing, the missed deltas, or a snapshot), then the logged events after n
//    that are not state events. Chosen when the client's state does not line up
//    with event n (it is resyncing, or its seq or epoch differ), so replaying
//    deltas from the wrong base cannot happen;
//  - 'lost': events after n were already dropped from the bounded log: the
//    catch-up, one CUSTOM EVENTS_LOST, then every logged non-state event.
// Events written only for this connection (catch-up, notice) carry the id
// "<key>:<n>" again: a client cut during them resumes from the same point.
// A run that is over and fully delivered gets its terminal event again, so a
// client cut right after RUN_FINISHED learns that the run ended.
// An attach (X-AGUI-Attach: a client that was not on this stream, from n = 0,
// or one resuming its attached stream) is never answered 'exact' unless its
// position lines up: a client without state would get the starter's catch-up.
// When the run's oldest events were dropped, an attach still begins with the
// run's RUN_STARTED and leaves out what continues a lane it never saw open
// (TEXT_MESSAGE_CONTENT without its start): AG-UI clients refuse those.
import { customEvent, EVENTS_LOST } from './events.js';
import { OpenLanes } from '../shared/event-lanes.js';
import { formatEventId, frameEvent } from './sse-out.js';
import { parseActivities } from '../shared/resync-wire.js';

/**
 * True when replaying the logged events after `n` verbatim leaves this client
 * consistent. A client that says it is resyncing (any reason, its state's or
 * an activity's) is not given the same bytes again: whatever its engine
 * refused, the catch-up answers it.
 */
function fitsExactly(run, n, position, attach) {
  const { lastSeq, epoch, reason } = position;
  if (parseActivities(position.activities)?.some((a) => typeof a?.reason === 'string')) return false;
  if (lastSeq === null && epoch === null && reason === null) return !attach; // keeps no state position
  if (reason !== null) return false;
  const seq = run.log.seqAt(n);
  return typeof seq === 'number' && seq === lastSeq && epoch === run.thread.emitter.epoch;
}

/**
 * The text that brings a client resuming after event `n` of `run` up to date:
 * { text, mode }. catchUpEvents(position): the thread's (thread.withCatchUp).
 * attach: the client attached (X-AGUI-Attach) rather than started this stream.
 */
export function resumePreamble(run, n, position, catchUpEvents = (p, stream) => run.thread.catchUpEvents(p, stream), attach = false) {
  const entries = run.log.after(n);
  if (entries !== null && fitsExactly(run, n, position, attach)) {
    return { text: withTerminal(run, entries, entries.map((e) => e.text)), mode: 'exact' };
  }
  const rest = entries ?? run.log.all();
  const catchUp = catchUpParts(run, n, position, entries === null, catchUpEvents);
  // AG-UI clients take nothing before RUN_STARTED: a client that has not seen
  // it yet gets it first, its catch-up right after.
  const startedHeld = rest.some((entry) => entry.n === run.startedN);
  const parts = startedHeld ? [] : catchUp;
  const fresh = attach && n === 0; // a client that saw nothing of this run
  if (fresh && !startedHeld && run.startedN > 0) parts.unshift(run.startedText);
  const lanes = fresh && entries === null ? new OpenLanes() : null;
  for (const entry of rest) {
    if (entry.state || (lanes !== null && !lanes.see(loggedEvent(entry)))) continue;
    parts.push(entry.text);
    if (entry.n === run.startedN) parts.push(...catchUp);
  }
  return { text: withTerminal(run, rest, parts), mode: entries === null ? 'lost' : 'caught-up' };
}

// The event a log entry framed (its one data line), read back for the rare lost attach.
function loggedEvent(entry) {
  const start = entry.text.indexOf('\ndata: ') + 7;
  return JSON.parse(entry.text.slice(start, entry.text.length - 2));
}

// The catch-up (and, when events were trimmed, the EVENTS_LOST notice) for a
// resuming client, framed with its own resume id. Before the upstream's
// RUN_STARTED there is nothing to write yet: the run writes it after that event.
function catchUpParts(run, n, position, lost, catchUpEvents) {
  const id = formatEventId(run.key, n);
  let parts = [];
  if (run.startedN === 0) {
    run.deferCatchUp(position);
  } else {
    parts = catchUpEvents(position, run.catchUpStream).map((event) => frameEvent(id, JSON.stringify(event)));
    run.skipCatchUp();
  }
  if (lost) parts.push(frameEvent(id, JSON.stringify(customEvent(EVENTS_LOST, { after: n, resumedAt: run.log.firstN }))));
  return parts;
}

// A finished run with nothing left to send repeats its terminal event.
function withTerminal(run, entries, parts) {
  const last = run.log.last();
  if (run.finished && entries.length === 0 && last?.terminal) parts.push(last.text);
  return parts.join('');
}
