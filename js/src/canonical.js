// canonicalJson (RFC 8785) and stateDigest ("sha256:" + SHA-256 of it),
// computed by the C++ core (Facade::canonicalize) so that the browser, a Node
// agent and a C++ agent produce byte-identical digests. Synchronous: they need
// a loaded engine (init-engine.js).
import { describeThrown, PREFIX, syncError, syncTypeError } from './errors.js';
import { callEngine, requireEngine } from './init-engine.js';

function strictReplacer(key, value) {
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) throw syncTypeError(`JSON cannot represent ${value}${where(key)}`);
      return value;
    case 'bigint':
      throw syncTypeError(`JSON cannot represent a BigInt${where(key)}`);
    case 'function':
    case 'symbol':
      throw syncTypeError(`JSON cannot represent a ${typeof value}${where(key)}`);
    default:
      return value;
  }
}

function where(key) {
  return key === '' ? '' : ` (under key ${JSON.stringify(key)})`;
}

/**
 * JSON text of `value`, refusing what JSON cannot represent (TypeError): a
 * top-level undefined, functions, symbols, BigInt, NaN, ±Infinity, cycles.
 * Nested `undefined` follows JSON.stringify (omitted in objects, null in arrays).
 */
export function strictJsonText(value, what) {
  let text;
  try {
    text = JSON.stringify(value, strictReplacer);
  } catch (thrown) {
    if (thrown instanceof TypeError && thrown.message.startsWith(PREFIX)) {
      throw syncTypeError(`${what}: ${thrown.message.slice(PREFIX.length)}`);
    }
    throw syncTypeError(`${what}: the value is not JSON-serializable (${describeThrown(thrown)})`);
  }
  if (text === undefined) throw syncTypeError(`${what}: JSON cannot represent ${typeof value}`);
  return text;
}

function canonicalize(value, what) {
  const engine = requireEngine();
  const text = strictJsonText(value, what);
  const result = JSON.parse(callEngine(engine, () => engine.canonicalize(text)));
  if (result.ok) return result;
  // From JSON.stringify text the engine can only refuse a lone surrogate (not
  // valid Unicode, so RFC 8785 has no form for it) or excessive nesting.
  if (/deeper/.test(result.error)) throw syncError(`${what}: ${result.error}`);
  throw syncTypeError(`${what}: the value has no canonical form (${result.error}; a string holds a lone surrogate?)`);
}

/** RFC 8785 canonical JSON text of `value` (synchronous; needs a loaded engine). */
export function canonicalJson(value) {
  return canonicalize(value, 'canonicalJson').canonical;
}

/** "sha256:" + lowercase hex SHA-256 of canonicalJson(value) (synchronous; needs a loaded engine). */
export function stateDigest(value) {
  return canonicalize(value, 'stateDigest').digest;
}
