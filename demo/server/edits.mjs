// The user's edits as the demo agent receives them (issue 14): a RunAgentInput
// carries them in forwardedProps.stateSync.edits, and the thread's emitter
// judges them with the page's own policy (applyEdits: ownership, the three-way
// check since each edit's baseSeq, idempotent by editId). The verdicts travel
// to the client as metadata.acks on the state event they produce.
import { EDIT_POLICY } from '../src/edit-policy.js';

export function editsOf(input) {
  const edits = input && input.forwardedProps && input.forwardedProps.stateSync && input.forwardedProps.stateSync.edits;
  return Array.isArray(edits) ? edits : [];
}

// Applies the edits to `emitter` and returns { events, results }. Every POST
// may carry them (a reconnect re-sends the pending ones): an editId seen
// before gets its first verdict again and changes nothing.
export function applyClientEdits(emitter, input) {
  const edits = editsOf(input);
  if (edits.length === 0) return { events: [], results: [] };
  return emitter.applyEdits(edits, EDIT_POLICY);
}

export function describeResult(r) {
  return r.status === 'applied' ? `edit ${r.editId} applied at seq ${r.seq}` : `edit ${r.editId} refused (${r.reason})`;
}
