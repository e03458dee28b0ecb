// canonicalJson (RFC 8785) and stateDigest ("sha256:" + SHA-256 of it),
// computed by the C++ core (SyncFacade::canonicalize) so that the browser, a
// Node agent and a C++ agent produce byte-identical digests. Synchronous: they
// need a loaded engine (init-engine.js).
import { describeThrown, syncError, syncTypeError } from './errors.js';
import { loadedEngineLink } from './init-engine.js';

// What strictReplacer throws for a value JSON cannot represent: the detail, caught below.
class Unrepresentable {
  constructor(detail) {
    this.detail = detail;
  }
}

function strictReplacer(key, value) {
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) throw new Unrepresentable(`JSON cannot represent ${value}${where(key)}`);
      return value;
    case 'bigint':
      throw new Unrepresentable(`JSON cannot represent a BigInt${where(key)}`);
    case 'function':
    case 'symbol':
      throw new Unrepresentable(`JSON cannot represent a ${typeof value}${where(key)}`);
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
    if (thrown instanceof Unrepresentable) throw syncTypeError('invalid-argument', `${what}: ${thrown.detail}`);
    throw syncTypeError('invalid-argument', `${what}: the value is not JSON-serializable (${describeThrown(thrown)})`);
  }
  if (text === undefined) throw syncTypeError('invalid-argument', `${what}: JSON cannot represent ${typeof value}`);
  return text;
}

function canonicalize(value, what) {
  const link = loadedEngineLink();
  const text = strictJsonText(value, what);
  const result = link.callJson((engine) => engine.canonicalize(text));
  if (result.ok) return result;
  // From JSON.stringify text the engine can only refuse excessive nesting
  // ('limit-exceeded') or a lone surrogate ('invalid-json': not valid Unicode,
  // so RFC 8785 has no form for it; the value is the caller's mistake).
  if (result.code === 'limit-exceeded') throw syncError('limit-exceeded', `${what}: ${result.message}`);
  throw syncTypeError('invalid-argument', `${what}: the value has no canonical form (${result.message}; a string holds a lone surrogate?)`);
}

/** RFC 8785 canonical JSON text of `value` (synchronous; needs a loaded engine). */
export function canonicalJson(value) {
  return canonicalize(value, 'canonicalJson').canonical;
}

/** "sha256:" + lowercase hex SHA-256 of canonicalJson(value) (synchronous; needs a loaded engine). */
export function stateDigest(value) {
  return canonicalize(value, 'stateDigest').digest;
}
