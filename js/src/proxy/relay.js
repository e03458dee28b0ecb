// The upstream's SSE bytes, read by the run's receiver (our framer, decoder and
// patch applier in a RelayEngine, whose verified states reach the thread's
// emitter with no JSON text of them: relay-engine.js), turned into what the
// run's clients get:
//  - 'event' outcomes: the upstream's non-state events, passed on as they are;
//  - 'applied' outcomes: the verified upstream state, re-stamped by the
//    thread's emitter (thread.js restamp, as the run's cursor decides:
//    run-cursor.js) with the proxy's seq / epoch / digest;
//  - 'resync' outcomes: the upstream contradicted itself (a delta that does not
//    apply, a gap in its own numbering, ...). State events are then held: the
//    clients keep the last state the proxy can vouch for and get one CUSTOM
//    UPSTREAM_INCONSISTENT; the next upstream snapshot releases the hold
//    (UPSTREAM_CONSISTENT). Nothing derived from the inconsistent stream is sent.
// Activities (outcomes naming a messageId; docs/wire.md section 11) have lines
// of their own: an applied one is re-stamped on the thread's activities
// (thread.js restampActivity, the core's decision); an activity's resync only
// stops that activity in the run's engine until its next snapshot, and clients
// keep the content the proxy last vouched for (counted, never a state hold).
// With the flakySegments option (flaky-segments.js), each update is reported
// for the run's segment, and while the core has that segment on snapshots the
// run's clients get the thread's re-stamped snapshot instead of its deltas.
import { customEvent, TERMINAL_TYPES, UPSTREAM_CONSISTENT, UPSTREAM_INCONSISTENT } from './events.js';
import { after } from '../server/emitter-writes.js';

export class Relay {
  #run;
  #engine;
  #counters;
  #onError;
  #cursor; // the run's RunCursor: how each applied outcome goes on top of the thread's state
  #held = false;
  #queue = null; // an outcome's handling under way (a store-bound emitter's write): the rest wait their turn
  #sources = []; // what the engine gave and is not handled yet: iterators of outcomes, in order
  #segments; // FlakySegments, or null (the option is off)

  constructor({ run, engine, cursor, counters, onError, segments = null }) {
    this.#run = run;
    this.#segments = segments;
    this.#engine = engine;
    this.#cursor = cursor;
    this.#counters = counters;
    this.#onError = onError;
  }

  /** One chunk of the upstream's body. */
  feed(chunk) {
    this.#counters.upstreamBytes += chunk.length;
    this.#take(() => this.#engine.feed(chunk));
  }

  /** The upstream's body ended: a pending gap in its numbering becomes a hold. Returns settled(). */
  end() {
    this.#take(() => this.#engine.end());
    return this.settled();
  }

  /** Nothing (all outcomes handled), or a Promise of the pending ones being handled. */
  settled() {
    return this.#queue?.then(() => this.settled());
  }

  // The engine's outcomes are taken one at a time, and none while one is
  // being handled asynchronously: a RelayEngine's next step would move the
  // state that handling writes (relay-engine.js). `outcomes()` is asked only
  // when its turn comes, so the engine sees each chunk, and the end, in order.
  #take(outcomes) {
    this.#sources.push(outcomes);
    if (this.#queue === null) this.#drain();
  }

  #drain() {
    while (this.#sources.length > 0) {
      if (typeof this.#sources[0] === 'function') this.#sources[0] = this.#sources[0]()[Symbol.iterator]();
      const next = this.#sources[0].next();
      if (next.done) {
        this.#sources.shift();
        continue;
      }
      const pending = this.#outcome(next.value);
      if (typeof pending?.then === 'function') {
        // A failure of a pending one is reported, the run goes on.
        const report = (error) => this.#onError(error);
        this.#queue = pending.catch(report).then(() => {
          this.#queue = null;
          try {
            this.#drain();
          } catch (error) {
            report(error);
          }
        });
        return;
      }
    }
  }

  /** The upstream's own last state kept on the thread (RunCursor.keepView): a Promise for a store-bound one. */
  keepUpstreamView(report) {
    return this.#cursor.keepView(report);
  }

  dispose() {
    this.#engine.dispose();
    this.#cursor.dispose();
  }

  #outcome(outcome) {
    if (outcome.messageId !== undefined) return this.#activityOutcome(outcome);
    switch (outcome.kind) {
      case 'event':
        return this.#event(outcome.event);
      case 'applied':
        return this.#applied(outcome);
      case 'resync':
        return this.#hold(outcome.reason, outcome.detail);
      case 'error':
        // An event that is not JSON or not an object: there is nothing to pass
        // on (if it may have been a state event, a resync outcome follows).
        this.#counters.upstreamMalformed++;
        break;
      default: // 'ignored': a duplicate or a held-back delta of the upstream's own numbering
    }
  }

  #event(event) {
    const run = this.#run;
    this.#counters.passed++;
    if (event.type === 'RUN_STARTED') {
      run.send(event);
      return run.writeCatchUp();
    }
    return after(run.writeCatchUp(), () => after(this.#interruptBoundary(event), () => {
      run.send(event); // the core notes a terminal event (an upstream that ends without one gets RUN_ERROR)
    }));
  }

  // AG-UI asks for the state as a STATE_SNAPSHOT before a RUN_FINISHED that
  // carries an interrupt, and the upstream's snapshot may have gone out as a
  // delta: a plain client's stream gets the thread's state whole there. A
  // sequenced client's seqs already prove its state (docs/wire.md section 8).
  #interruptBoundary(event) {
    const run = this.#run;
    if (event.type !== 'RUN_FINISHED' || event.outcome?.type !== 'interrupt') return undefined;
    if (!run.plain || this.#held || run.lastStateType !== 'STATE_DELTA' || !run.thread.vouched) return undefined;
    return after(run.thread.emitter.snapshot(), (snapshot) => this.#sendStates([snapshot], false));
  }

  #applied(outcome) {
    return after(this.#run.writeCatchUp(), () => {
      // Only a snapshot re-anchors a held stream; the emitter keeps the vouched state.
      if (this.#held && outcome.type !== 'STATE_SNAPSHOT') return undefined;
      let events;
      try {
        events = this.#run.thread.restamp(outcome, this.#cursor);
      } catch (error) {
        return this.#restampFailed(error);
      }
      return after(events, (stamped) => this.#sendApplied(stamped), (error) => this.#restampFailed(error));
    });
  }

  #activityOutcome(outcome) {
    if (outcome.kind === 'resync') this.#counters.upstreamActivityResyncs++;
    else if (outcome.kind === 'error') this.#counters.upstreamMalformed++;
    if (outcome.kind !== 'applied') return undefined;
    return after(this.#run.writeCatchUp(), () => {
      let events;
      try {
        events = this.#run.thread.restampActivity(outcome, this.#run.activityStream);
      } catch (error) {
        this.#onError(error);
        return undefined;
      }
      return after(events, (stamped) => {
        for (const event of stamped) {
          this.#run.send(event, false, true);
          this.#counters.activityEventsSent++;
        }
      }, (error) => this.#onError(error));
    });
  }

  #restampFailed(error) {
    this.#onError(error);
    return this.#hold('engine-failed', error.message);
  }

  #sendApplied(stamped) {
    const run = this.#run;
    // A stream with no position yet starts with a snapshot, never a delta; a
    // segment the core put on snapshots gets the thread's snapshot for its deltas.
    const asSnapshot = run.seq === null
      || (this.#segments !== null && stamped.some((event) => event.type === 'STATE_DELTA') && this.#segments.snapshots(run.segment));
    if (asSnapshot) return after(run.thread.emitter.snapshot(), (snapshot) => this.#sendStates([snapshot], true));
    return this.#sendStates(stamped, true);
  }

  // update: the events carry an upstream change (reported for the run's segment).
  #sendStates(events, update) {
    const run = this.#run;
    for (const event of events) {
      const bytes = run.send(event, true);
      const snapshot = event.type === 'STATE_SNAPSHOT';
      this.#counters[snapshot ? 'snapshotsSent' : 'deltasSent']++;
      if (update && this.#segments !== null && bytes > 0) this.#segments.sent(run.segment, bytes, snapshot);
    }
    if (this.#held) {
      this.#held = false;
      run.send(customEvent(UPSTREAM_CONSISTENT, { seq: run.seq }));
    }
  }

  #hold(reason, detail) {
    return after(this.#run.writeCatchUp(), () => {
      if (this.#held) return;
      this.#held = true;
      this.#counters.upstreamInconsistent++;
      this.#run.send(customEvent(UPSTREAM_INCONSISTENT, { reason, detail, seq: this.#run.seq }));
    });
  }
}
