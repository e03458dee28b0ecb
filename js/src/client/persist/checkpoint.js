// The stored form of a checkpoint (issue 16): what a reloaded page needs to
// resume by replay, as one string, and the check that what comes back from
// storage is exactly what was stored.
//
// Stored text: a header line, then the body:
//
//   agui-checkpoint/1 sha256:<64 hex>\n
//   {"key":…,"clientId":…,"editCounter":…,"lastSeq":…,"epoch":…,"lastEventId":…,"edits":[…],"state":…}
//
// The body is JSON with its members always in that order and no whitespace,
// each value as JSON.stringify writes it (edits as [{editId, baseSeq, ops}],
// oldest first; `state` is the confirmed state, never the visible one). The
// digest is SHA-256 (crypto.subtle) of the body's UTF-8 bytes, exactly as
// stored: no re-serialization is involved in checking it, so any change to the
// text (a torn or partial write, a flipped byte, an edit by hand) is caught.
// It is an integrity check, not a signature: whoever can write the storage can
// write a valid checkpoint. (Such a state still meets the agent's digests,
// metadata.digest on every 16th seq, at the first replay.)
// The body is what SyncFacade.restore() takes; `key` guards against a
// checkpoint copied under another key.
import { syncError } from '../../engine/errors.js';

export const FORMAT = 'agui-checkpoint/1';

const encoder = new TextEncoder();

/** True when this environment can compute the digest (crypto.subtle: browsers' secure contexts, Node >= 19). */
export function canDigest() {
  return typeof globalThis.crypto?.subtle?.digest === 'function';
}

async function sha256Hex(text) {
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text)));
  let hex = '';
  for (const byte of hash) hex += byte.toString(16).padStart(2, '0');
  return `sha256:${hex}`;
}

/**
 * The body of checkpoint `view` ({ key, clientId, editCounter, lastSeq, epoch,
 * lastEventId, edits, state }) with `stateText` as the state's JSON (the
 * caller may reuse it while the state object is unchanged).
 */
export function checkpointBody(view, stateText) {
  const edits = view.edits.map(({ editId, baseSeq, ops }) => ({ editId, baseSeq, ops }));
  return `{"key":${JSON.stringify(view.key)},"clientId":${JSON.stringify(view.clientId)}`
    + `,"editCounter":${JSON.stringify(view.editCounter)},"lastSeq":${JSON.stringify(view.lastSeq)}`
    + `,"epoch":${JSON.stringify(view.epoch)},"lastEventId":${JSON.stringify(view.lastEventId)}`
    + `,"edits":${JSON.stringify(edits)},"state":${stateText}}`;
}

/** The stored text for `body`: the header line with its digest, then the body. */
export async function sealCheckpoint(body) {
  return `${FORMAT} ${await sha256Hex(body)}\n${body}`;
}

// The body's leading members as checkpointBody() writes them.
function bodyPrefix(key, clientId, editCounter) {
  return `{"key":${JSON.stringify(key)},"clientId":${JSON.stringify(clientId)},"editCounter":${JSON.stringify(editCounter)},`;
}

/**
 * `body` (of parsed `checkpoint`) with another clientId and editCounter: the
 * leading members are swapped without re-serializing the state.
 */
export function rebaseClient(body, checkpoint, clientId, editCounter) {
  const old = bodyPrefix(checkpoint.key, checkpoint.clientId, checkpoint.editCounter);
  const next = bodyPrefix(checkpoint.key, clientId, editCounter);
  if (body.startsWith(old)) return next + body.slice(old.length);
  return JSON.stringify({ ...checkpoint, clientId, editCounter }); // members in another order (written by hand)
}

function invalid(why) {
  return syncError('invalid-checkpoint', `the stored checkpoint was discarded: ${why}`);
}

/**
 * Checks stored text against its digest and `key`. Returns { body (the text
 * for SyncFacade.restore), checkpoint (parsed) } or { error } (an
 * AguiSyncError 'invalid-checkpoint' that says why).
 */
export async function openCheckpoint(stored, key) {
  if (typeof stored !== 'string') return { error: invalid(`not a checkpoint (a ${stored === null ? 'null' : typeof stored})`) };
  const newline = stored.indexOf('\n');
  const header = newline < 0 ? stored : stored.slice(0, newline);
  const match = /^agui-checkpoint\/1 (sha256:[0-9a-f]{64})$/.exec(header);
  if (!match) return { error: invalid(`the header is not "${FORMAT} sha256:<hex>"`) };
  const body = stored.slice(newline + 1);
  if ((await sha256Hex(body)) !== match[1]) return { error: invalid('its digest does not match its content (corrupt or changed storage)') };
  let checkpoint;
  try {
    checkpoint = JSON.parse(body);
  } catch {
    return { error: invalid('its body is not JSON') };
  }
  if (checkpoint === null || typeof checkpoint !== 'object' || checkpoint.key !== key) {
    return { error: invalid(`it was stored for another key (${JSON.stringify(checkpoint?.key)})`) };
  }
  return { body, checkpoint };
}
