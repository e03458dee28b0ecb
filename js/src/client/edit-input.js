// sync.edit()'s argument and answer. An edit is the app's data, so whatever
// it passes gets an answer of the shape, never a throw:
// { ok: false, reason, code, message, opIndex? } with `reason` (=== `code`)
// from the edit category of the code table (codes.js EDIT_REASONS). Only a
// disposed or failed StateSync throws, as every method does.
import { failureCode } from '../engine/errors.js';

/** { ok: false, reason, code, message[, opIndex] } */
function editRefusal(code, message, opIndex) {
  const refusal = { ok: false, reason: code, code, message };
  if (opIndex !== undefined && opIndex !== null) refusal.opIndex = opIndex;
  return refusal;
}

/** The refusal for a facade failure {ok:false, code, message, opIndex?}. */
export function engineRefusal(failure) {
  return editRefusal(failureCode(failure, 'invalid-patch'), failure.message, failure.opIndex);
}

/**
 * `ops` as the JSON text the engine takes: { text } or { refusal }. Refused
 * here, before any copy into the engine: not an array ('invalid-patch'), not
 * JSON ('invalid-patch': a BigInt, a cycle), nested too deep to serialize or
 * longer than `maxBytes` ('limit-exceeded': the engine's own limit is the
 * event size, and a UTF-8 byte count is at least the UTF-16 length).
 */
export function editText(ops, maxBytes) {
  if (!Array.isArray(ops)) return { refusal: editRefusal('invalid-patch', 'an edit is an array of RFC 6902 operations') };
  let text;
  try {
    text = JSON.stringify(ops);
  } catch (thrown) {
    // A RangeError here is the serializer's own recursion limit: nesting no engine limit would allow either.
    if (thrown instanceof RangeError) return { refusal: editRefusal('limit-exceeded', 'the edit nests too deep') };
    return { refusal: editRefusal('invalid-patch', `the edit is not JSON (${thrown?.message ?? thrown})`) };
  }
  if (text.length > maxBytes) return { refusal: editRefusal('limit-exceeded', `the edit is larger than maxEventBytes (${maxBytes})`) };
  return { text };
}
