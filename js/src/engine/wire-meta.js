// Where an event's wire fields (seq, baseSeq, epoch, digest, acks; docs/wire.md
// sections 1 and 10) are, for JS that reads events without a call into the
// engine: the thread-log tools, the store line, the proxy's bookkeeping. The
// rule is src/wire/wire_meta.h's, and tests/vectors/wire_meta_vectors.json
// holds the engine, this and Python to the same answers:
//   version 2: metadata[WIRE_KEY] when it is an object; it alone counts;
//   version 1: else `metadata` itself.
import { WIRE_KEY } from './codes.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The object holding `event`'s wire fields, or null when it has none. */
export function wireFields(event) {
  const meta = event?.metadata;
  if (!isObject(meta)) return null;
  return isObject(meta[WIRE_KEY]) ? meta[WIRE_KEY] : meta;
}

/** wireFields(event).seq (undefined when absent). */
export const wireSeq = (event) => wireFields(event)?.seq;

/** True when `event` carries version-2 wire fields (then the top level's seq / base_seq do not count). */
export const hasWireKey = (event) => isObject(event?.metadata) && isObject(event.metadata[WIRE_KEY]);

/** A new `metadata`: `metadata`'s own members (if an object) with `fields` under WIRE_KEY. */
export function withWireFields(metadata, fields) {
  return { ...(isObject(metadata) ? metadata : {}), [WIRE_KEY]: fields };
}

export { WIRE_KEY };
