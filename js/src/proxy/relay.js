// The upstream's SSE bytes, read by a StateSync engine (our framer, decoder and
// patch applier), turned into what the run's clients get:
//  - 'event' outcomes: the upstream's non-state events, passed on as they are;
//  - 'applied' outcomes: the verified upstream state, re-stamped by the
//    thread's emitter (thread.js restamp) with the proxy's seq / epoch / digest;
//  - 'resync' outcomes: the upstream contradicted itself (a delta that does not
//    apply, a gap in its own numbering, ...). State events are then held: the
//    clients keep the last state the proxy can vouch for and get one CUSTOM
//    UPSTREAM_INCONSISTENT; the next upstream snapshot releases the hold
//    (UPSTREAM_CONSISTENT). Nothing derived from the inconsistent stream is sent.
import { customEvent, TERMINAL_TYPES, UPSTREAM_CONSISTENT, UPSTREAM_INCONSISTENT } from './events.js';

export class Relay {
  #run;
  #engine;
  #counters;
  #onError;
  #cursor; // { inStep, seq }: whether the emitter holds exactly the engine's state (thread.restamp)
  #held = false;

  constructor({ run, engine, cursor, counters, onError }) {
    this.#run = run;
    this.#engine = engine;
    this.#cursor = cursor;
    this.#counters = counters;
    this.#onError = onError;
  }

  /** One chunk of the upstream's body. */
  feed(chunk) {
    this.#counters.upstreamBytes += chunk.length;
    for (const outcome of this.#engine.feed(chunk)) this.#outcome(outcome);
  }

  /** The upstream's body ended: a pending gap in its numbering becomes a hold. */
  end() {
    for (const outcome of this.#engine.end()) this.#outcome(outcome);
  }

  dispose() {
    this.#engine.dispose();
  }

  #outcome(outcome) {
    switch (outcome.kind) {
      case 'event':
        this.#event(outcome.event);
        break;
      case 'applied':
        this.#applied(outcome);
        break;
      case 'resync':
        this.#hold(outcome.reason, outcome.detail);
        break;
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
      run.sawTerminal = false; // another run in the same stream reopens it
      run.send(event);
      run.writeCatchUp();
      return;
    }
    run.writeCatchUp();
    run.send(event);
    if (TERMINAL_TYPES.has(event.type)) run.sawTerminal = true;
  }

  #applied(outcome) {
    const run = this.#run;
    run.writeCatchUp();
    if (this.#held && outcome.type !== 'STATE_SNAPSHOT') {
      // Only a snapshot re-anchors a held stream; the emitter keeps the vouched state.
      this.#cursor.inStep = false;
      return;
    }
    let events;
    try {
      events = run.thread.restamp(outcome, this.#cursor);
    } catch (error) {
      this.#onError(error);
      this.#cursor.inStep = false;
      this.#hold('engine-failed', error.message);
      return;
    }
    // A stream with no position yet starts with a snapshot, never a delta.
    if (run.seq === null) events = [run.thread.emitter.snapshot()];
    for (const event of events) {
      run.send(event, true);
      this.#counters[event.type === 'STATE_DELTA' ? 'deltasSent' : 'snapshotsSent']++;
    }
    if (this.#held) {
      this.#held = false;
      run.send(customEvent(UPSTREAM_CONSISTENT, { seq: run.seq }));
    }
  }

  #hold(reason, detail) {
    this.#run.writeCatchUp();
    if (this.#held) return;
    this.#held = true;
    this.#counters.upstreamInconsistent++;
    this.#run.send(customEvent(UPSTREAM_INCONSISTENT, { reason, detail, seq: this.#run.seq }));
  }
}
