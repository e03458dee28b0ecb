// The proxy's own SSE framing. Every event it sends carries an id
// "<stream key>:<n>": the key is random per run (so an id names one run's
// stream and cannot be guessed), n counts that stream's events from 1. The
// StateEmitter's encode() would write "id: <seq>" on state events only; a
// resumable stream needs an id on every event, chat text included.
import { randomBytes } from 'node:crypto';

const KEY_BYTES = 16;
const ID_PATTERN = /^([A-Za-z0-9_-]{22}):(0|[1-9][0-9]{0,15})$/;
const MAX_ID_LENGTH = 22 + 1 + 16;

/** A fresh stream key: 128 random bits, base64url (22 characters). */
export function newStreamKey() {
  return randomBytes(KEY_BYTES).toString('base64url');
}

/**
 * A Last-Event-ID value -> { key, n } if it is one of ours, else null (ids
 * from elsewhere, e.g. the agent's own, are not ours to interpret).
 */
export function parseEventId(value) {
  if (typeof value !== 'string' || value.length > MAX_ID_LENGTH) return null;
  const match = ID_PATTERN.exec(value);
  if (!match) return null;
  const n = Number(match[2]);
  return Number.isSafeInteger(n) ? { key: match[1], n } : null;
}

/** Response head of every stream the proxy sends. */
export const SSE_HEAD = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });

/**
 * One SSE event: "id: <id>\ndata: <json>\n\n" (JSON text never holds a raw
 * line break); without an id line when id is null (an event of no run's log).
 */
export function frameEvent(id, json) {
  return id === null ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`;
}

/**
 * The heartbeat comment: ": hb <seq>" carries the last seq this stream sent
 * (docs/wire.md section 4); before the stream has a position, a plain ": hb".
 */
export function heartbeatLine(seq) {
  return seq === null ? ': hb\n\n' : `: hb ${seq}\n\n`;
}
