// The flakySegments option: the tax study's policy 5 (docs/tax-study.md,
// "adaptive") in the proxy. A run's segment is its starting client's
// connection type (forwardedProps.stateSync.connection, else 'unknown'). The
// proxy reports what it already measures, each state update it frames for a
// run (the framed text's length) and each client that came back behind (the
// seqs it missed, and whether its catch-up was a snapshot); whether a
// segment's clients get a STATE_SNAPSHOT per update is decided in the core
// (SegmentTaxFacade, src/facade/segment_tax_facade.h), at its windows' ends.
import { syncTypeError } from '../engine/errors.js';
import { EngineLink } from '../engine/engine-link.js';
import { loadEmitterEngine } from '../server/emitter.js';

const TO_SNAPSHOTS = 1;
const TO_DELTAS = 2;

/** The option: undefined / false -> null (off); true -> {}; { window, breakEven } checked here for a synchronous error. */
export function flakySegmentsOption(value) {
  if (value === undefined || value === false) return null;
  if (value === true) return Object.freeze({});
  const where = 'createStateSyncProxy() option flakySegments';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw syncTypeError('invalid-options', `${where} must be true or { window, breakEven }`);
  }
  for (const key of Object.keys(value)) {
    if (key !== 'window' && key !== 'breakEven') throw syncTypeError('invalid-options', `${where}.${key} is not supported`);
  }
  const { window, breakEven } = value;
  if (window !== undefined && (!Number.isSafeInteger(window) || window <= 0)) {
    throw syncTypeError('invalid-options', `${where}.window must be a positive integer`);
  }
  if (breakEven !== undefined && (typeof breakEven !== 'number' || !(breakEven > 0 && breakEven <= 1))) {
    throw syncTypeError('invalid-options', `${where}.breakEven must be a number in (0, 1]`);
  }
  return Object.freeze({ window, breakEven });
}

export class FlakySegments {
  #link;
  #counters; // counters.flakySegments: { snapshotMode: { connection: 0 | 1 }, switches: { connection: n } }

  /** @internal use FlakySegments.create() */
  constructor(link, counters) {
    this.#link = link;
    this.#counters = counters;
    link.track(this);
  }

  /** The proxy's segments on the sender engine, with `option` (flakySegmentsOption's). */
  static async create(option, counters) {
    const engine = await loadEmitterEngine();
    return new FlakySegments(EngineLink.create(engine, 'SegmentTaxFacade', JSON.stringify(option), 'FlakySegments'), counters);
  }

  /** Whether runs of `segment` send a snapshot per update. */
  snapshots(segment) {
    return this.#link.invoke((f) => f.snapshots(segment));
  }

  /** One state update of `segment` framed: `bytes` long, a snapshot or a delta. */
  sent(segment, bytes, snapshot) {
    const change = this.#link.invoke((f) => f.sent(segment, bytes, snapshot));
    if (change !== TO_SNAPSHOTS && change !== TO_DELTAS) return;
    this.#counters.snapshotMode[segment] = change === TO_SNAPSHOTS ? 1 : 0;
    this.#counters.switches[segment] = (this.#counters.switches[segment] ?? 0) + 1;
  }

  /**
   * A client of `segment` came back at `position` while the thread stands at
   * `seq` / `epoch`; `bySnapshot`: its answer was a snapshot. Whether that was
   * a catch-up of seqs it missed is the core's to say (cameBack).
   */
  caughtUp(segment, position, seq, epoch, bySnapshot) {
    const { lastSeq } = position;
    const at = typeof lastSeq === 'number' ? lastSeq : -1;
    this.#link.invoke((f) => f.cameBack(segment, at, String(position.epoch ?? ''), seq, epoch, bySnapshot));
  }

  dispose() {
    this.#link.release(this);
  }
}
