// RFC 6901 JSON Pointer helpers for the JS state mirror and the guard. Their
// errors are caught inside the package (the mirror then re-reads the engine's
// state; guard.watch() reports its own 'invalid-argument').
import { syncError } from '../engine/errors.js';

// Agents write the same few paths over and over, so parsed pointers are cached
// (bounded; cleared when full). Cached token arrays are frozen: callers share them.
const CACHE_LIMIT = 4096;
const cache = new Map();

/**
 * "" -> [], "/a~1b/~0c" -> ["a/b", "~c"]. Throws on a pointer without leading "/".
 * The returned array is frozen (it may be shared with other callers).
 */
export function parsePointer(pointer) {
  const cached = cache.get(pointer);
  if (cached !== undefined) return cached;
  const tokens = Object.freeze(splitPointer(pointer));
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pointer, tokens);
  return tokens;
}

function splitPointer(pointer) {
  if (pointer === '') return [];
  if (typeof pointer !== 'string' || pointer.charCodeAt(0) !== 47 /* / */) {
    throw syncError('invalid-patch', `invalid JSON pointer ${JSON.stringify(pointer)}`);
  }
  const tokens = pointer.slice(1).split('/');
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.indexOf('~') !== -1) tokens[i] = t.replace(/~1/g, '/').replace(/~0/g, '~');
  }
  return tokens;
}

/** Escapes one reference token: "~" -> "~0", "/" -> "~1". */
export function escapeToken(token) {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Array index per RFC 6901: "0" or digits without a leading zero. */
export function parseIndex(token, length, allowEnd) {
  if (allowEnd && token === '-') return length;
  // A char-code loop, not a RegExp: this runs for every array step of every op.
  const n = token.length;
  let valid = n > 0 && n <= 16 && !(n > 1 && token.charCodeAt(0) === 48 /* 0 */);
  for (let i = 0; valid && i < n; i++) {
    const c = token.charCodeAt(i);
    valid = c >= 48 && c <= 57;
  }
  if (!valid) throw syncError('patch-failed', `invalid array index ${JSON.stringify(token)}`);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) throw syncError('patch-failed', `array index ${token} out of range`);
  return index;
}
