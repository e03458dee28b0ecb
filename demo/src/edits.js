// The two panes' edit fields (issue 14), one tracker each. Both record what
// became of the user's last edit of one field, so the page (and the e2e test)
// can show it:
//  - left, as @ag-ui/client's setState: the value is shown until the next
//    state event replaces the whole state, then it is silently gone;
//  - right, agui-state-sync's sync.edit: pending, a conflict when the agent
//    writes the same field (both values), then acknowledged or rejected.
import { store } from './store.js';

export function valueAt(state, pointer) {
  let cur = state;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

// A copy of `state` with `value` at `pointer` (copies only the path's objects).
function setAt(state, tokens, value) {
  if (tokens.length === 0) return value;
  const [key, ...rest] = tokens;
  const copy = Array.isArray(state) ? [...state] : { ...state };
  copy[key] = setAt(state[key], rest, value);
  return copy;
}

// Left pane: `reference.setState` replaces what the UI shows; the run keeps
// applying events to its own copy, so the next state event brings that back.
export function trackReferenceEdits(reference, pointer, now) {
  const last = store(null); // { value, t, status: 'shown' | 'lost', replacedBy, lostAfterMs }
  const tokens = pointer.split('/').slice(1);
  const unsubscribe = reference.subscribe(() => {
    const e = last.get();
    if (!e || e.status !== 'shown') return;
    const there = valueAt(reference.state, pointer);
    if (there !== e.value) last.set({ ...e, status: 'lost', replacedBy: there, lostAfterMs: now() - e.t });
  });
  function edit(value) {
    if (valueAt(reference.state, pointer) === undefined) return { ok: false, reason: 'no such field yet' };
    last.set({ value, t: now(), status: 'shown' });
    reference.setState(setAt(reference.state, tokens, value));
    return { ok: true };
  }
  return { last, edit, dispose: unsubscribe };
}

// Right pane: one record per edit the user made, updated from the outcomes
// the engine reports for it (an edit is never dropped without one).
export function trackSyncEdits(sync, pointer, now) {
  const last = store(null); // { editId, value, status, conflict?, seq?, reason? }
  const update = (editId, fn) => last.set((e) => (e && e.editId === editId ? { ...e, ...fn(e) } : e));
  function edit(value) {
    const r = sync.edit([{ op: 'replace', path: pointer, value }]);
    if (r.ok) last.set({ editId: r.editId, value, t: now(), status: 'pending' });
    return r;
  }
  function onOutcome(o) {
    if (o.kind === 'conflict') {
      const conflict = { path: o.path, mine: o.mine, theirs: o.theirs, resolution: o.resolution, seq: o.seq };
      // agent-wins settles the edit here; user-wins keeps it pending for the agent.
      update(o.editId, () => ({ conflict, ...(o.resolution === 'agent-wins' ? { status: 'overruled' } : {}) }));
    } else if (o.kind === 'edit-acked') {
      update(o.editId, () => ({ status: 'acked', seq: o.seq }));
    } else if (o.kind === 'edit-rejected') {
      update(o.editId, () => ({ status: 'rejected', reason: o.reason }));
    }
  }
  // After a reload: the restored pending edit of this field (the last one), marked pending again.
  function restore(pending) {
    const edit = pending.findLast((e) => e.ops.some((op) => op.op === 'replace' && op.path === pointer));
    if (!edit) return;
    const op = edit.ops.findLast((o) => o.path === pointer);
    last.set({ editId: edit.editId, value: op.value, t: now(), status: 'pending', restored: true });
  }
  return { last, edit, onOutcome, restore };
}
