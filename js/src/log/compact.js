// compactEvents(): a thread log made small without changing what it replays to.
//
//  - Text and tool-call arguments: merge-streams.js.
//  - State: every stretch of state events between run boundaries (RUN_STARTED,
//    RUN_FINISHED, RUN_ERROR) becomes one STATE_SNAPSHOT of the state at the
//    stretch's end, placed there. That state comes from replaying the log
//    through the engine along the run lineage (replayer.js), so a run that
//    only sends deltas starts from the state the runs before it (or its
//    parent run) left, never from {} (@ag-ui/client issue #1720), and a delta
//    that does not apply stops compaction with the engine's AguiSyncError.
//  - The snapshot's wire fields (metadata[WIRE_KEY], docs/wire.md section 10)
//    keep where the log stands: seq and epoch of the stretch's end, and the
//    digest of the folded state, whenever the engine had a verified position
//    there. Without one (an unsequenced or half-sequenced stream) the snapshot
//    is unsequenced too, as the original position was: claiming a seq the
//    stream never proved would change how the next deltas are checked. Other
//    metadata keys of the stretch's state events are kept (a later event's
//    value wins), and so are other wire fields (acks, also from version-1
//    events, whose wire fields sit at the top of metadata); baseSeq is dropped.
//
// One pass over the events (plus one StateSync restore per branch point).
import { stateDigest } from '../engine/canonical.js';
import { checkEventArray } from './log-error.js';
import { StreamMerger } from './merge-streams.js';
import { logOptions } from './options.js';
import { LineageReplayer } from './replayer.js';
import { scanRuns } from './runs.js';
import { WIRE_KEY, wireFields, withWireFields } from '../engine/wire-meta.js';

const BOUNDARIES = new Set(['RUN_STARTED', 'RUN_FINISHED', 'RUN_ERROR']);
const POSITION_KEYS = new Set(['seq', 'baseSeq', 'epoch', 'digest']);
const V1_WIRE_KEYS = new Set([...POSITION_KEYS, 'acks']); // at the top of a version-1 metadata

export const isStateEvent = (type) => type === 'STATE_SNAPSHOT' || type === 'STATE_DELTA';

// The state events of one stretch, folded into one snapshot by flush().
class StateFold {
  #out;
  #replayer;
  #extra = null; // metadata keys other than the wire fields
  #wire = null; // wire fields other than the position's

  constructor(out, replayer) {
    this.#out = out;
    this.#replayer = replayer;
  }

  note(event) {
    const metadata = event.metadata;
    const fields = wireFields(event);
    if (fields === null) return;
    const ownKeys = fields === metadata ? V1_WIRE_KEYS : new Set([WIRE_KEY]);
    for (const key of Object.keys(metadata)) {
      if (!ownKeys.has(key)) (this.#extra ??= {})[key] = metadata[key];
    }
    for (const key of Object.keys(fields)) {
      if (!POSITION_KEYS.has(key) && (fields !== metadata || V1_WIRE_KEYS.has(key))) (this.#wire ??= {})[key] = fields[key];
    }
  }

  /** Ends the stretch: one snapshot if any state event of it applied. */
  flush() {
    const extra = this.#extra, wire = this.#wire;
    this.#extra = this.#wire = null;
    if (!this.#replayer.takeChanged()) return;
    this.#out.push(foldedSnapshot(this.#replayer.position(), extra, wire));
  }
}

function foldedSnapshot(position, extra, wire) {
  const fields = { ...wire };
  if (position.verified && position.seq !== null) {
    fields.seq = position.seq;
    if (position.epoch !== null) fields.epoch = position.epoch;
    fields.digest = stateDigest(position.state);
  }
  const metadata = Object.keys(fields).length > 0 ? withWireFields(extra, fields) : { ...extra };
  const event = { type: 'STATE_SNAPSHOT', snapshot: position.state };
  if (Object.keys(metadata).length > 0) event.metadata = metadata;
  return event;
}

/** The compacted events and where the replay ended ({ state, seq, epoch, verified }). */
export async function compactLog(events, options) {
  checkEventArray(events);
  const engineOptions = logOptions(options);
  const scan = scanRuns(events);
  const replayer = await LineageReplayer.create(engineOptions);
  try {
    const out = [];
    const merger = new StreamMerger(out);
    const fold = new StateFold(out, replayer);
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const boundary = BOUNDARIES.has(event.type);
      if (boundary) fold.flush();
      const run = scan.starts.get(i);
      if (run !== undefined) await replayer.enterRun(run, i);
      if (isStateEvent(event.type)) {
        replayer.feed(event, i);
        fold.note(event);
        continue;
      }
      // Only state events and run starts change what the engine holds (a
      // RUN_STARTED drops an anchored position); the rest pass it untouched.
      if (boundary) replayer.feed(event, i);
      merger.push(event);
    }
    fold.flush();
    merger.closeAll();
    replayer.finish();
    return { events: out, position: replayer.position() };
  } finally {
    replayer.dispose();
  }
}

/**
 * `events` compacted (a new array; events it does not change are the same
 * objects). Needs the engine: resolves once it is loaded.
 */
export async function compactEvents(events, options) {
  return (await compactLog(events, options)).events;
}
