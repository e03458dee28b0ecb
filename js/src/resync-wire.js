// Names and rules of the resync conversation (docs/wire.md section 3), shared
// by the server helpers (server.js) and the client loop (connect.js).

export const HEADER_SEQ = 'X-AGUI-State-Seq';
export const HEADER_EPOCH = 'X-AGUI-State-Epoch';
export const HEADER_REASON = 'X-AGUI-Resync-Reason';
export const HEADER_LAST_EVENT_ID = 'Last-Event-ID';
/** Response header: how the server caught the client up ('current' | 'replay' | 'snapshot'). */
export const HEADER_CATCH_UP = 'X-AGUI-State-Sync';

/**
 * Reasons that mean the client's state is wrong, not just behind: replaying
 * from a wrong base cannot heal it, so the server must answer with a snapshot.
 */
export const SNAPSHOT_REASONS = new Set([
  'patch-failed',
  'precondition-failed',
  'digest-mismatch',
  'seq-conflict',
  'malformed',
  'limit-exceeded',
]);

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
