// The proxy's upstream receiver: RelayFacade (src/facade/relay_facade.h) in
// the sender's WebAssembly module, beside the thread's emitter and the run's
// cursor. It frames, decodes and verifies as a StateSync does (the same core,
// the same options), but hands out one event's outcomes at a time, so the
// run's cursor writes each state it verified while the engine holds exactly
// that state (UpstreamCursor.writeReceived): by reference into a thread in
// memory, and into a store-bound thread's local emitter from the engine's
// state where each try runs (or the core's own copy, out of step).
// The state is parsed once; no JSON text of it, nor a JS copy, is made between
// the receiver and the emitter. The relay (relay.js) takes the next outcome
// only once the last one's write settled.
import { EngineLink } from '../engine/engine-link.js';
import { syncError } from '../engine/errors.js';
import { syncOptions } from '../client/sync-options.js';
import { loadEmitterEngine } from '../server/emitter.js';

export class RelayEngine {
  #link;

  /** @internal use RelayEngine.create() */
  constructor(link) {
    this.#link = link;
    link.track(this);
  }

  /** A receiver with createStateSync()'s `options` (the proxy's: initialState, limits, activities). */
  static async create(options) {
    const { json } = syncOptions(options);
    return new RelayEngine(EngineLink.create(await loadEmitterEngine(), 'RelayFacade', json, 'RelayEngine'));
  }

  /**
   * The outcomes of one chunk of the upstream's body (bytes), event by event:
   * an applied state's outcome ({ kind, type, seq, ref, last, received }) is
   * written through `received` before the iteration goes on.
   */
  *feed(chunk) {
    const engine = this.#link.engine;
    this.#link.invoke((facade) => {
      const ptr = facade.inputBuffer(chunk.length);
      engine.heapU8.set(chunk, ptr); // heapU8 re-read: inputBuffer may have grown memory
      facade.pushInput(chunk.length);
    });
    for (let text = this.#next(); text !== ''; text = this.#next()) yield* this.#outcomes(text);
  }

  /**
   * The thread's activities as this run starts from them (unsequenced
   * snapshots' SSE text, ActivityFacade::seedText): a plain upstream's deltas
   * then apply without its snapshot first. Nothing of it is sent.
   */
  seed(text) {
    if (!text) return;
    for (const outcome of this.feed(new TextEncoder().encode(text))) void outcome;
  }

  /** The body ended: the outcomes left (a pending gap's resync). */
  end() {
    return this.#outcomes(this.#link.invoke((facade) => facade.end()));
  }

  /** Runs fn(the RelayFacade) for a write through it (UpstreamCursor.writeReceived). */
  withFacade(fn) {
    return this.#link.invoke(fn);
  }

  /** Frees the engine object. Idempotent. */
  dispose() {
    this.#link.release(this);
  }

  #next() {
    return this.#link.invoke((facade) => facade.next());
  }

  #outcomes(text) {
    const { outcomes } = this.#link.parse(text);
    for (const outcome of outcomes) {
      if (outcome.kind !== 'applied') continue;
      if (outcome.messageId === undefined) outcome.received = this;
      else Object.defineProperty(outcome, 'content', { get: () => this.#activityContent(outcome) });
    }
    return outcomes;
  }

  // What an applied activity event led to, read while the engine holds it (its step's last of that activity).
  #activityContent(outcome) {
    if (!outcome.last) {
      throw syncError('invalid-event', `the content activity ${outcome.messageId} had after this event was replaced within the same upstream event; its next write carries it`);
    }
    return this.#link.callJson((facade) => facade.activityJson(outcome.messageId));
  }
}
