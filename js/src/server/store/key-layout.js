// The Redis key layout, shared with the Python store
// (python/agui_state_sync/stores/_layout.py; both replay
// tests/vectors/store_keys.json). Version 2: every key names its kind, and
// the caller's part is escaped, so no threadId, runId or claim scope can name
// a key of another kind or another thread (issue 38). The hash tag ({...})
// keeps each thread's and each run's keys in one slot.
//   <prefix>v2:{t:<threadId>}:meta|state|log|live   a thread
//   <prefix>v2:{r:<stream key>}:meta|log|lease|present   a proxy run's log
//   <prefix>v2:{i:<runId>}:runs                     the runs of a runId
//   <prefix>v2:{c:<scope>}:claim:<id>               a claim (approvals, grants, once())
export const LAYOUT = 'v2';

const ESCAPES = { '%': '%25', '{': '%7B', '}': '%7D', ':': '%3A' };

/** `text` with the characters that delimit a key's parts escaped. */
export function escapeKeyPart(text) {
  return String(text).replace(/[%{}:]/g, (c) => ESCAPES[c]);
}

const base = (prefix, kind, part) => `${prefix}${LAYOUT}:{${kind}:${escapeKeyPart(part)}}`;

export const threadBase = (prefix, threadId) => base(prefix, 't', threadId);
export const runBase = (prefix, key) => base(prefix, 'r', key);
export const runIdKey = (prefix, runId) => `${base(prefix, 'i', runId)}:runs`;
export const claimKey = (prefix, scope, id) => `${base(prefix, 'c', scope)}:claim:${escapeKeyPart(id)}`;
