// One upstream agent run against its thread's emitter: the decisions come from
// the core (CursorFacade, src/emit/upstream_cursor.h: in step, out of step,
// rebase, suspended), the same ones Python's sequence_state makes; this file
// only carries each plan out against a StateEmitter, plain (answers at once) or
// store-bound (promises), and tells the core which try landed.
import { EngineLink } from '../engine/engine-link.js';
import { failureError } from '../engine/errors.js';
import { jsonText } from '../engine/options.js';
import { loadEmitterEngine } from './emitter.js';
import { after, NOT_APPLICABLE } from './emitter-writes.js';

/** What write() gives: the events to send, or none and why ({ refused: error } or a drop reason). */
const passed = (event) => ({ events: [event], state: false, dropped: null, error: null });

export class UpstreamCursor {
  #link;

  /** @internal use UpstreamCursor.create() */
  constructor(link) {
    this.#link = link;
    link.track(this);
  }

  /** A cursor ({ alwaysRebase, maxDepth }: see cursor_facade.h) on the loaded sender engine. */
  static async create(options = {}, engineOptions) {
    const engine = await loadEmitterEngine(engineOptions);
    const json = JSON.stringify({ alwaysRebase: options.alwaysRebase === true, maxDepth: options.maxDepth });
    return new UpstreamCursor(EngineLink.create(engine, 'CursorFacade', json, 'UpstreamCursor'));
  }

  /** The run starts from `view` (fromInput: the client's RunAgentInput.state), the emitter at `seq`. */
  begin(view, fromInput, seq) {
    const result = this.#link.callJson((f) => f.begin(jsonText(view ?? {}, 'the run\'s state'), fromInput, seq));
    if (!result.ok) throw failureError(result, 'invalid-json', `the run's state cannot be sequenced: ${result.message}`);
  }

  /** The emitter refused the run's input state: deltas wait for the agent's snapshot. */
  suspend() {
    this.#link.invoke((f) => f.suspend());
  }

  /**
   * One agent event through `emitter`: { events, state, dropped, error }.
   * events: what to send ([event] for a non-state event, the emitter's events
   * for a state one, [] when dropped); dropped: the reason a state event was not
   * sent, error: the emitter's refusal behind it. Sync for a plain emitter, a
   * Promise for a store-bound one.
   */
  write(emitter, event) {
    let plan;
    try {
      plan = this.#link.callJson((f) => f.plan(jsonText(event, 'an agent event'), emitter.seq));
    } catch (error) {
      return { events: [], state: true, dropped: error.code ?? 'invalid-json', error };
    }
    if (!plan.ok) return { events: [], state: true, dropped: plan.code, error: failureError(plan, 'invalid-json', plan.message) };
    if (plan.kind === 'pass') return passed(event);
    if (plan.kind === 'drop') return { events: [], state: true, dropped: plan.reason, error: null };
    return this.#try(emitter, event, plan.tries, 0);
  }

  // The plan's tries in order: a patch that does not apply moves on (its refusal
  // kept to report if none lands); the first that lands stands.
  #try(emitter, event, tries, index, refusal = null) {
    const fail = (error) => this.#landed(emitter, -1, [], error?.code ?? 'engine-failed', error);
    if (index >= tries.length) return fail(refusal);
    const update = 'update' in tries[index];
    let value = update ? tries[index].update : tries[index].patch;
    if (value === 'event') value = update ? event.snapshot : event.delta; // the event's own payload
    const next = (error) => (NOT_APPLICABLE.has(error?.code) && !update ? this.#try(emitter, event, tries, index + 1, error) : fail(error));
    let out;
    try {
      out = update ? emitter.update(value) : emitter.patch(value);
    } catch (error) {
      return next(error);
    }
    return after(out, (events) => this.#landed(emitter, index, events, null, null), next);
  }

  #landed(emitter, index, events, dropped, error) {
    this.#link.invoke((f) => f.settle(index, emitter.seq));
    return { events, state: true, dropped, error };
  }

  /** Frees the engine object. Idempotent. */
  dispose() {
    this.#link.release(this);
  }
}
