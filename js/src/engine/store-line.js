// The durable line's rules (StoreLineFacade, src/facade/store_line_facade.h)
// for a store-bound emitter (server/store/durable-emitter.js): the state at a
// stored line's head, when a write carries the whole state, and the committed
// state moved along each committed batch, decided in the core so that a Node
// and a Python emitter writing one key agree on them. The store's I/O stays
// with the caller. One per store-bound emitter, on the sender engine.
import { EngineLink } from './engine-link.js';
import { failureError } from './errors.js';

export class StoreLine {
  #link;

  /** @internal use StoreLine.create() */
  constructor(link) {
    this.#link = link;
    link.track(this);
  }

  /**
   * The rules of one line on `engine` (the loaded sender module). options:
   * incremental (the store takes appends without the state), replayMaxEvents,
   * replayMaxBytes (the log's caps: the emitter's), maxDepth.
   */
  static create(engine, options) {
    return new StoreLine(EngineLink.create(engine, 'StoreLineFacade', JSON.stringify(options), 'StoreLine'));
  }

  /**
   * Opens a stored line: `state` (JSON text at `stateSeq`) and `events` (the
   * log's JSON texts, oldest first). Returns the JSON text of the state at its
   * head, which also becomes the committed state. Throws 'store-conflict'
   * (the log does not apply), 'invalid-json' or 'limit-exceeded', `what`
   * leading the message.
   */
  open(state, stateSeq, events, what) {
    const line = JSON.stringify({ state, stateSeq, events });
    const opened = this.#link.callJson((f) => f.open(line));
    if (!opened.ok) throw failureError(opened, 'store-conflict', `${what}: ${opened.message}`);
    return this.#link.invoke((f) => f.headStateJson());
  }

  /** Whether a batch of `events` (`bytes` of JSON text, `snapshot`: one is a STATE_SNAPSHOT) goes with the whole state. */
  needsState(events, bytes, snapshot) {
    return this.#link.invoke((f) => f.needsState(events, bytes, snapshot));
  }

  /** The batch landed (`withState`: with the whole state); `eventsText` is its events' JSON array. False: the committed state is unknown now (seed() it). */
  committed(withState, events, bytes, eventsText) {
    return this.#link.invoke((f) => {
      f.committed(withState, events, bytes);
      return f.advance(eventsText);
    });
  }

  /** A new line with an empty log (the store took this emitter's line whole), committed at `stateText`. */
  restart(stateText) {
    this.#link.invoke((f) => f.restart());
    this.seed(stateText);
  }

  /** The committed state is `stateText` (JSON). */
  seed(stateText) {
    const seeded = this.#link.callJson((f) => f.seed(stateText));
    if (!seeded.ok) throw failureError(seeded, 'invalid-json', `the committed state cannot be kept: ${seeded.message}`);
  }

  /** The log's caps ({ maxEvents, maxBytes }: the emitter's replay caps), for the store's append. */
  caps() {
    return this.#link.invoke((f) => ({ maxEvents: f.maxEvents(), maxBytes: f.maxBytes() }));
  }

  /** The committed state's JSON text, or '' when unknown. */
  committedStateText() {
    return this.#link.invoke((f) => f.committedStateJson());
  }

  /** Frees the engine object. Idempotent. */
  dispose() {
    this.#link.release(this);
  }
}
