// The agent side's edit policy (edits.h, docs/wire.md section 9):
// { ownership: { "/pointer": 'agent' | 'user' | 'shared' }, onConflict:
// 'agent-wins' | 'user-wins' }, both optional. Checked here, where a mistake
// can name the option it came from (emitter.applyEdits(), the proxy's and
// sequenceState()'s `edits` option), so that a server refuses a bad policy
// when it is configured rather than at the first run that carries edits.
import { syncTypeError } from '../engine/errors.js';

const OWNERS = new Set(['agent', 'user', 'shared']);
const CONFLICT_POLICIES = new Set(['agent-wins', 'user-wins']);
// RFC 6901: "" or "/"-separated tokens, where "~" only starts "~0" or "~1".
const POINTER = /^(?:\/(?:[^~/]|~[01])*)*$/;

function describe(value) {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * The policy as a plain frozen object ({} for undefined/null); an AguiSyncError
 * 'invalid-options' (a TypeError) naming `who` for anything else.
 */
export function checkEditPolicy(policy, who) {
  if (policy === undefined || policy === null) return Object.freeze({});
  if (typeof policy !== 'object' || Array.isArray(policy)) throw syncTypeError('invalid-options', `${who} must be an object`);
  const { ownership, onConflict, ...rest } = policy;
  const unknown = Object.keys(rest);
  if (unknown.length) throw syncTypeError('invalid-options', `${who}: unknown key ${JSON.stringify(unknown[0])}`);
  const out = {};
  if (ownership !== undefined && ownership !== null) out.ownership = checkOwnership(ownership, who);
  if (onConflict !== undefined && onConflict !== null) {
    if (!CONFLICT_POLICIES.has(onConflict)) {
      throw syncTypeError('invalid-options', `${who}.onConflict must be 'agent-wins' or 'user-wins', got ${describe(onConflict)}`);
    }
    out.onConflict = onConflict;
  }
  return Object.freeze(out);
}

function checkOwnership(ownership, who) {
  if (typeof ownership !== 'object' || Array.isArray(ownership)) {
    throw syncTypeError('invalid-options', `${who}.ownership must be an object of JSON Pointer -> 'agent' | 'user' | 'shared'`);
  }
  const out = {};
  for (const [path, owner] of Object.entries(ownership)) {
    if (!POINTER.test(path)) throw syncTypeError('invalid-options', `${who}.ownership: ${JSON.stringify(path)} is not a JSON Pointer`);
    if (!OWNERS.has(owner)) {
      throw syncTypeError('invalid-options', `${who}.ownership of ${JSON.stringify(path)} must be 'agent', 'user' or 'shared', got ${describe(owner)}`);
    }
    out[path] = owner;
  }
  return Object.freeze(out);
}
