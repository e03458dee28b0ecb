// Names and rules of the resync conversation (docs/wire.md section 3), shared
// by the server helpers (server.js) and the client loop (connect.js).
import { SNAPSHOT_REASONS as SNAPSHOT_REASON_LIST } from '../engine/codes.js';

export const HEADER_SEQ = 'X-AGUI-State-Seq';
export const HEADER_EPOCH = 'X-AGUI-State-Epoch';
export const HEADER_REASON = 'X-AGUI-Resync-Reason';
export const HEADER_LAST_EVENT_ID = 'Last-Event-ID';
/**
 * Request header: the seqs of the deltas the client holds in its reorder
 * window, ascending, comma-separated ("12,13,15"). The server may leave them
 * out of a replay; the client must still accept them if they come (duplicates).
 */
export const HEADER_HELD = 'X-AGUI-State-Held';
/**
 * Request header: where the client's activities are (docs/wire.md section 11),
 * the JSON array [{ messageId, lastSeq, epoch, reason }] percent-encoded as
 * encodeURIComponent writes it. Absent: the client keeps no activities.
 */
export const HEADER_ACTIVITIES = 'X-AGUI-State-Activities';
/** At most this many activity positions travel (the engine's default maxActivities). */
export const MAX_ACTIVITY_POSITIONS = 64;
/** At most this many held seqs travel (the engine's default reorderWindow); the rest are simply replayed. */
export const MAX_HELD = 64;
/** A longer X-AGUI-State-Held value is ignored unread: MAX_HELD 16-digit seqs, commas and spaces. */
export const MAX_HELD_HEADER = MAX_HELD * 18;
/**
 * Request header of an explicit abort, `X-AGUI-Abort: <runId>`, POSTed to the
 * stream's path: a broken connection is not an abort (docs/wire.md section 8).
 */
export const HEADER_ABORT = 'X-AGUI-Abort';
/**
 * `X-AGUI-Attach: <threadId>` on a GET to the stream's path: attach to the
 * thread's running run, or, with none, be brought up to date (docs/wire.md
 * section 8). The response carries it too: 'run' or 'idle'.
 */
export const HEADER_ATTACH = 'X-AGUI-Attach';
/** Response header: how the server caught the client up ('current' | 'replay' | 'snapshot'). */
export const HEADER_CATCH_UP = 'X-AGUI-State-Sync';

/**
 * forwardedProps.stateSync.connection: the browser's effective connection type
 * (the Network Information API's effectiveType), when it reports one, for
 * servers to label their metrics by (docs/wire.md section 3). In the body, not
 * a header: a new request header would fail the CORS preflight of deployments
 * that list the ones they allow.
 */
export const CONNECTION_TYPES = Object.freeze(['slow-2g', '2g', '3g', '4g']);

/** One of CONNECTION_TYPES, or null for anything else (a server reads hostile input). */
export function connectionTypeOf(value) {
  return CONNECTION_TYPES.includes(value) ? value : null;
}

/**
 * Reasons that mean the client's state is wrong, not just behind: replaying
 * from a wrong base cannot heal it, so the server must answer with a snapshot.
 * From the code table (codes.js).
 */
export const SNAPSHOT_REASONS = new Set(SNAPSHOT_REASON_LIST);

/** True if `value` can travel as an HTTP header value unchanged (visible ASCII and spaces). */
export function isHeaderSafe(value) {
  return typeof value === 'string' && /^[\x20-\x7e]*$/.test(value) && value.trim() === value;
}

/** "12" -> 12; anything that is not a canonical integer in [0, 2^53-1] -> null. */
export function parseSeq(value) {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : null;
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]*)$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

// Valid seqs only, ascending, no repeats, the lowest MAX_HELD.
function normalizeHeld(values) {
  const seqs = [];
  for (const value of values) {
    const seq = parseSeq(value);
    if (seq !== null) seqs.push(seq);
  }
  seqs.sort((a, b) => a - b);
  return seqs.filter((seq, i) => i === 0 || seq !== seqs[i - 1]).slice(0, MAX_HELD);
}

/**
 * The held seqs a request carries: an X-AGUI-State-Held value ("12,13,15") or
 * a forwardedProps.stateSync.held array. Entries that are not canonical seqs
 * (parseSeq) are ignored, as is a header value longer than MAX_HELD_HEADER or
 * anything that is neither a string nor an array; never throws. Ascending, no
 * repeats, at most MAX_HELD.
 */
export function parseHeld(value) {
  if (typeof value === 'string') {
    if (value.length > MAX_HELD_HEADER) return [];
    return normalizeHeld(value.split(',').map((entry) => entry.trim()));
  }
  if (Array.isArray(value)) return normalizeHeld(value.slice(0, MAX_HELD * 4).map((v) => (typeof v === 'number' ? v : null)));
  return [];
}

/** [15, 12, 13] -> "12,13,15" (normalized as parseHeld does); "" when none is valid. */
export function formatHeld(held) {
  return Array.isArray(held) ? normalizeHeld(held.map((v) => (typeof v === 'number' ? v : null))).join(',') : '';
}

/**
 * A client's activity positions ([{ messageId, lastSeq, epoch, reason }], as
 * sync.activities gives them) as the X-AGUI-State-Activities value: at most
 * MAX_ACTIVITY_POSITIONS, percent-encoded JSON (the server's core reads it).
 */
export function formatActivities(positions) {
  return encodeURIComponent(JSON.stringify(positions.slice(0, MAX_ACTIVITY_POSITIONS)));
}

/**
 * The activity positions a request carries, as an array: an
 * X-AGUI-State-Activities value (formatActivities) or a stateSync.activities
 * array; null for anything else (what the server's core reads is the value
 * itself; this is for code that only looks, e.g. for a resyncing activity).
 */
export function parseActivities(value) {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return null;
  try {
    const parsed = JSON.parse(decodeURIComponent(value));
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
