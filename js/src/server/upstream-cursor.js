// One upstream agent run against its thread's emitter: the decisions come from
// the core (CursorFacade, src/emit/upstream_cursor.h: in step, out of step,
// rebase, suspended), the same ones Python's sequence_state makes; this file
// only carries each plan out against a StateEmitter and tells the core which
// try landed. A plain emitter is written by the core in the same call that
// plans (CursorFacade.planWrite: one parse of a snapshot instead of two); a
// store-bound one, whose writes are promises, tries the plan's ways itself.
import { EngineLink } from '../engine/engine-link.js';
import { failureCode, failureError } from '../engine/errors.js';
import { kCommitThrough, kWriteThrough } from '../engine/internals.js';
import { jsonText } from '../engine/options.js';
import { loadEmitterEngine } from './emitter.js';
import { after, NOT_APPLICABLE } from './emitter-writes.js';

/** What write() gives: the events to send, or none and why ({ refused: error } or a drop reason). */
const passed = (event) => ({ events: [event], state: false, dropped: null, error: null });
const dropped = (reason, error) => ({ events: [], state: true, dropped: reason, error });

// The member of an AG-UI state event the core reads (null: not a state event, passed on as it is).
function payloadOf(event) {
  if (event?.type === 'STATE_SNAPSHOT') return 'snapshot';
  return event?.type === 'STATE_DELTA' ? 'delta' : null;
}

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

  /**
   * The run starts from `view` (fromInput: the client's RunAgentInput.state),
   * which the emitter holds at `seq`; `epoch`: a store-bound emitter's there
   * (its line: the proxy's received states then try the emitter's own diff
   * first, where nobody else wrote since).
   */
  begin(view, fromInput, seq, epoch = null) {
    this.#begun(this.#link.callJson((f) => f.begin(jsonText(view ?? {}, 'the run\'s state'), fromInput, seq)));
    if (typeof epoch === 'string') this.#link.invoke((f) => f.onLine(epoch, seq));
  }

  /** The run starts from `view`, the client's state, which the emitter does not hold (the proxy forwards it as it is). */
  beginApart(view) {
    this.#begun(this.#link.callJson((f) => f.beginApart(jsonText(view ?? {}, 'the run\'s state'))));
  }

  /** Does a sequencer move the emitter to RunAgentInput.state before a run? Not a store-bound one (UpstreamCursor::writesInput). */
  writesInput() {
    return this.#link.invoke((f) => f.writesInput());
  }

  /**
   * A sequencer's run starts (after writesInput()'s write, if any): at the
   * thread's `state` (its seq, its `epoch` for a store-bound one) when the
   * client sent no `input` state or the thread's, else apart from the
   * client's: 'thread' | 'apart'.
   */
  startRun(input, state, seq, epoch = null) {
    const text = input === undefined ? '' : jsonText(input, 'the run\'s state');
    const result = this.#link.callJson((f) => f.startRun(text, jsonText(state ?? {}, 'the thread\'s state'), seq));
    this.#begun(result);
    if (result.start === 'thread' && typeof epoch === 'string') this.#link.invoke((f) => f.onLine(epoch, seq));
    return result.start;
  }

  #begun(result) {
    if (!result.ok) throw failureError(result, 'invalid-json', `the run's state cannot be sequenced: ${result.message}`);
  }

  /**
   * Another state the agent may have started from (the input state it was
   * sent, when not the thread's; its own last state, agentView() of its
   * previous run): its first snapshot goes on top only by what it changed
   * from every start (UpstreamCursor::addStart).
   */
  addStart(state) {
    this.#begun(this.#link.callJson((f) => f.addStart(jsonText(state, 'the agent\'s start'))));
  }

  /** The agent's own state now (its last snapshot, its deltas applied), or undefined when it sent no state event. */
  agentView() {
    const text = this.#link.invoke((f) => f.agentView());
    return text === '' ? undefined : JSON.parse(text);
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
    const name = payloadOf(event);
    if (name === null) return passed(event);
    let plan;
    try {
      const text = jsonText({ type: event.type, [name]: event[name] }, 'an agent event'); // what the core reads of it
      if (typeof emitter[kWriteThrough] === 'function') return this.#planWrite(emitter, event, text);
      plan = this.#link.callJson((f) => f.plan(text, emitter.seq));
    } catch (error) {
      return dropped(error.code ?? 'invalid-json', error);
    }
    if (!plan.ok) return dropped(plan.code, failureError(plan, 'invalid-json', plan.message));
    if (plan.kind === 'pass') return passed(event);
    if (plan.kind === 'drop') return dropped(plan.reason, null);
    return this.#try(emitter, event, plan.tries, 0);
  }

  // A plain emitter: planned, tried and settled by the core in one call.
  #planWrite(emitter, event, text) {
    return this.#written(emitter[kWriteThrough]((facade) => this.#link.callJson((f) => f.planWrite(text, facade))), event);
  }

  /**
   * The proxy's route: the applied state `ref` of `relay`'s current step (a
   * RelayEngine in this module) written with no JSON text of it, in `mode`
   * (CursorFacade::writeReceived's). A plain emitter is written by reference
   * in one call; a store-bound one tries the plan's ways as write() does, each
   * carried out by the core on its local emitter's facade, from the relay's
   * state or the core's copy of it. As write() answers; `later`: an earlier
   * state of the step, which the step's last one covers. The relay must not
   * step before it settled (a try that finds it moved on is refused).
   */
  writeReceived(emitter, relay, ref, mode) {
    const plain = typeof emitter[kWriteThrough] === 'function';
    let result;
    try {
      result = plain
        ? emitter[kWriteThrough]((facade) => relay.withFacade((r) => this.#link.callJson((f) => f.writeReceived(r, ref, facade, mode))))
        : relay.withFacade((r) => this.#link.callJson((f) => f.planReceived(r, ref, mode, emitter.seq)));
    } catch (error) {
      return dropped(error.code ?? 'engine-failed', error);
    }
    if (result.kind === 'later') return { events: [], state: true, dropped: null, error: null, later: true };
    if (plain || !result.ok || result.kind !== 'write') return this.#written(result, null);
    return this.#try(emitter, null, result.tries, 0, null, relay);
  }

  // A write-through answer (planWrite's, writeReceived's): write()'s.
  #written(result, event) {
    if (!result.ok) return dropped(result.code, failureError(result, 'invalid-json', result.message));
    if (result.kind === 'pass') return passed(event);
    if (result.kind === 'drop') return dropped(result.reason, null);
    if (result.landed >= 0) return { events: result.events, state: true, dropped: null, error: null };
    const { failure } = result;
    const code = failureCode(failure, 'patch-failed');
    return dropped(code, failureError(failure, 'patch-failed', `the write refused (${code}): ${failure.message}; the state is unchanged`));
  }

  // The plan's tries in order: a patch that does not apply, or an in-step try
  // whose thread moved, moves on (its refusal kept to report if none lands); the
  // first that lands stands.
  // received: the RelayEngine of a received state's plan (writeReceived), whose
  // tries the core holds and carries out (a held snapshot's reading the relay's state).
  #try(emitter, event, tries, index, refusal = null, received = null) {
    const fail = (error) => this.#landed(emitter, -1, [], error?.code ?? 'engine-failed', error, received);
    if (index >= tries.length) return fail(refusal);
    const update = 'update' in tries[index];
    const skippable = !update || tries[index].inStep === true;
    const next = (error) => (NOT_APPLICABLE.has(error?.code) && skippable ? this.#try(emitter, event, tries, index + 1, error, received) : fail(error));
    let out;
    try {
      if (received) out = emitter[kCommitThrough]((facade) => this.#tryReceived(received, index, facade));
      else if (typeof emitter[kCommitThrough] === 'function') {
        // A store-bound emitter: the core carries each attempt out on its local facade,
        // checking an in-step try's line there (a retry after a lost race finds it moved).
        out = emitter[kCommitThrough]((facade) => this.#tryPlanned(index, facade));
      } else {
        let value = update ? tries[index].update : tries[index].patch;
        if (value === 'event') value = update ? event.snapshot : event.delta; // the event's own payload
        out = update ? emitter.update(value) : emitter.patch(value);
      }
    } catch (error) {
      return next(error);
    }
    return after(out, (events) => this.#landed(emitter, index, events, null, null, received), next);
  }

  // One try of a received state's plan on a store-bound emitter's local facade: its events, or its refusal thrown.
  #tryReceived(relay, index, facade) {
    const result = relay.withFacade((r) => this.#link.callJson((f) => f.tryReceived(r, index, facade)));
    if (!result.ok) throw failureError(result, 'patch-failed', `the write refused (${result.code}): ${result.message}; the state is unchanged`);
    return result.events;
  }

  #tryPlanned(index, facade) {
    const result = this.#link.callJson((f) => f.tryPlanned(index, facade));
    if (!result.ok) throw failureError(result, 'patch-failed', `the write refused (${result.code}): ${result.message}; the state is unchanged`);
    return result.events;
  }

  #landed(emitter, index, events, reason, error, received) {
    const planned = !received && typeof emitter[kCommitThrough] === 'function';
    this.#link.invoke((f) => (received ? f.settleReceived(index, emitter.seq) : planned ? f.settlePlanned(index, emitter.seq) : f.settle(index, emitter.seq)));
    return { events, state: true, dropped: reason, error };
  }

  /** Frees the engine object. Idempotent. */
  dispose() {
    this.#link.release(this);
  }
}
