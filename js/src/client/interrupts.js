// Open AG-UI 1.0 interrupts, read from the pass-through events of a stream.
//
// A run that needs outside input ends with
//   RUN_FINISHED { outcome: { type: 'interrupt', interrupts: [{ id, reason, message?, toolCallId?, ... }] } }
// and the run that continues from it answers them with RunAgentInput.resume
// entries. So: an interrupt outcome replaces the open set with its interrupts;
// any other RUN_FINISHED, and a RUN_STARTED of another run (the next run has
// begun, resumed or not), closes them. A RUN_STARTED repeating the interrupted
// run's runId (a server re-announcing it on a reconnect) keeps them.
import { syncTypeError } from '../engine/errors.js';

export class InterruptTracker {
  #open = new Map(); // id -> Interrupt, in the order the run listed them
  #runId = null; // the run that opened them

  /** Looks at one pass-through ('event' outcome) AG-UI event. */
  noteEvent(event) {
    if (event === null || typeof event !== 'object') return;
    if (event.type === 'RUN_STARTED') {
      if (this.#open.size > 0 && typeof event.runId === 'string' && event.runId === this.#runId) return;
      this.clear();
      return;
    }
    if (event.type !== 'RUN_FINISHED') return;
    this.clear();
    this.#runId = typeof event.runId === 'string' ? event.runId : null;
    const outcome = event.outcome;
    if (outcome === null || typeof outcome !== 'object' || outcome.type !== 'interrupt') return;
    if (!Array.isArray(outcome.interrupts)) return;
    for (const interrupt of outcome.interrupts) {
      if (interrupt === null || typeof interrupt !== 'object' || typeof interrupt.id !== 'string') continue;
      if (!this.#open.has(interrupt.id)) this.#open.set(interrupt.id, interrupt);
    }
  }

  has(id) {
    return this.#open.has(id);
  }

  /** The open interrupts, as the server sent them (a new array each call). */
  list() {
    return [...this.#open.values()];
  }

  clear() {
    this.#open.clear();
    this.#runId = null;
  }
}

/**
 * The RunAgentInput.resume entry that answers `approval.interruptId`
 * (docs/wire.md section 7): { interruptId, status: 'resolved',
 * payload: { approved: true, approval, ...extraPayload } }.
 */
export function resumeEntry(approval, extraPayload) {
  if (approval === null || typeof approval !== 'object' || typeof approval.interruptId !== 'string') {
    throw syncTypeError(
      'invalid-argument',
      'resumeEntry() needs an approval bound to an interrupt (guard.approve(token, { interruptId }))',
    );
  }
  if (extraPayload !== undefined && (extraPayload === null || typeof extraPayload !== 'object' || Array.isArray(extraPayload))) {
    throw syncTypeError('invalid-argument', 'resumeEntry() extraPayload must be an object');
  }
  for (const key of ['approved', 'approval']) {
    if (extraPayload !== undefined && Object.prototype.hasOwnProperty.call(extraPayload, key)) {
      throw syncTypeError('invalid-argument', `resumeEntry() extraPayload must not set ${JSON.stringify(key)}`);
    }
  }
  return {
    interruptId: approval.interruptId,
    status: 'resolved',
    payload: { approved: true, approval, ...extraPayload },
  };
}
