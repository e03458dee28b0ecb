// Replays a thread log through the engine (a real StateSync), following the
// run lineage: a run that continues the run before it continues the same
// StateSync; a run that branches from an earlier run gets a StateSync
// restored to where that run ended (its state, and its seq and epoch when it
// was verified there). One pass, whatever the branching.
//
// Anything the engine would not apply cleanly stops the replay with an
// AguiSyncError naming the event: an 'error' outcome, a resync (a failed
// patch or precondition, a gap, a digest that does not match, ...), and a
// delta still held for a gap when its branch ends (it never applied).
import { ERROR_CODES } from '../engine/codes.js';
import { describeThrown } from '../engine/errors.js';
import { createStateSync } from '../client/sync.js';
import { logError } from './log-error.js';
import { ROOT } from './runs.js';
import { wireFields, withWireFields } from '../engine/wire-meta.js';

const KNOWN_CODES = new Set(ERROR_CODES);
// Resync reasons are not error codes; these are the closest ones. Every
// ordering problem is 'invalid-seq'; a digest mismatch or an undecodable
// event means the log itself is inconsistent: 'invalid-event'.
const SEQUENCE_REASONS = new Set(['gap', 'stale-base', 'epoch-changed', 'seq-regression', 'seq-conflict', 'anchor-mismatch']);

function resyncCode(reason) {
  if (KNOWN_CODES.has(reason)) return reason;
  return SEQUENCE_REASONS.has(reason) ? 'invalid-seq' : 'invalid-event';
}

function where(index, runKey) {
  return runKey === ROOT ? `event ${index}` : `event ${index} (run ${JSON.stringify(runKey)})`;
}

function sseOf(event, index, runKey) {
  let json;
  try {
    json = JSON.stringify(event);
  } catch (thrown) {
    throw logError('invalid-event', `${where(index, runKey)}: not JSON-serializable (${describeThrown(thrown)})`, { index });
  }
  return `data: ${json}\n\n`;
}

export class LineageReplayer {
  #options;
  #sync = null;
  #head = ROOT; // the run whose events the StateSync consumed last
  #ends = new Map(); // run key -> { state, seq, epoch, verified } where it ended
  #held = new Map(); // seq -> { index, run } of a delta waiting for a gap to fill
  #epochs = new Map(); // String(epoch) -> the epoch as the events wrote it (string or number)
  #changed = false;

  /** @internal use LineageReplayer.create() */
  constructor(options) {
    this.#options = options;
  }

  /** A replayer at the root: the state a fresh StateSync starts with ({}). */
  static async create(options) {
    const replayer = new LineageReplayer(options);
    replayer.#sync = await createStateSync(options);
    return replayer;
  }

  /** Where the replay stands: { state, seq, epoch, verified }. */
  position() {
    const sync = this.#sync;
    const epoch = sync.epoch === null ? null : (this.#epochs.get(sync.epoch) ?? sync.epoch);
    return { state: sync.state, seq: sync.lastSeq, epoch, verified: sync.status === 'synced' };
  }

  /** Where run `key` ended (once the replay has left it), or undefined. */
  endOf(key) {
    return this.#ends.get(key);
  }

  /** True if a state event applied since the last call. */
  takeChanged() {
    const changed = this.#changed;
    this.#changed = false;
    return changed;
  }

  /**
   * Leaves the current run for `run` ({ runId, parent }): a promise when the
   * run branches (a StateSync has to be restored), else undefined.
   */
  enterRun(run, index) {
    const left = this.#head;
    this.#ends.set(left, this.position());
    this.#head = run.runId;
    // The StateSync still holds the run just left: its child needs no restore.
    if (run.parent === left) return undefined;
    return this.#restore(this.#ends.get(run.parent), index);
  }

  async #restore(end, index) {
    this.#assertNothingHeld('its branch ended');
    this.#sync.dispose();
    this.#sync = null;
    if (end.seq === null || !end.verified) {
      // No verified position: the engine starts from the state alone, as the
      // original stream's next run would have (a RUN_STARTED drops an
      // anchored position; an unsequenced one has none).
      this.#sync = await createStateSync({ ...this.#options, initialState: end.state });
      return;
    }
    this.#sync = await createStateSync(this.#options);
    const metadata = withWireFields(null, end.epoch === null ? { seq: end.seq } : { seq: end.seq, epoch: end.epoch });
    this.feed({ type: 'STATE_SNAPSHOT', snapshot: end.state, metadata }, index);
    this.#changed = false;
  }

  /** Feeds one event; returns the engine's outcomes, or throws where it would not apply. */
  feed(event, index) {
    const epoch = wireFields(event)?.epoch;
    if (typeof epoch === 'string' || typeof epoch === 'number') this.#epochs.set(String(epoch), epoch);
    const outcomes = this.#sync.feed(sseOf(event, index, this.#head));
    for (const outcome of outcomes) this.#note(outcome, index);
    return outcomes;
  }

  #note(outcome, index) {
    switch (outcome.kind) {
      case 'applied':
        this.#changed = true;
        if (outcome.seq !== null) this.#held.delete(outcome.seq);
        return;
      case 'ignored':
        if (outcome.reason === 'reordered' && outcome.seq !== null) this.#held.set(outcome.seq, { index, run: this.#head });
        return;
      case 'error': {
        const code = KNOWN_CODES.has(outcome.code) ? outcome.code : 'invalid-event';
        throw logError(code, `${where(index, this.#head)}: ${outcome.message}`, { index });
      }
      case 'resync':
        throw logError(resyncCode(outcome.reason), `${where(index, this.#head)}: the engine asks for a resync (${outcome.reason}: ${outcome.detail})`, { index });
      default:
    }
  }

  /** The log ended: records where the last run ended; throws if a delta never applied. */
  finish() {
    this.#ends.set(this.#head, this.position());
    this.#assertNothingHeld('the log ended');
  }

  #assertNothingHeld(when) {
    if (this.#held.size === 0) return;
    const [seq, { index, run }] = this.#held.entries().next().value;
    throw logError('invalid-seq', `${where(index, run)}: the delta to seq ${seq} waited for a gap that never filled before ${when}`, { index });
  }

  dispose() {
    this.#sync?.dispose();
    this.#sync = null;
  }
}
