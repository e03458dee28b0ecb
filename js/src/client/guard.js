// sync.guard: the drift-aware approval guard (include/agui_sync/approval_guard.h) as seen
// from JS. The C++ guard decides (status, liveness, pending gap, digest of the
// value at the path); this file reads values from the JS mirror, turns the
// facade's JSON into objects, notifies watchers, and binds approvals to open
// AG-UI interrupts.
//
// A value in an activity's content (docs/wire.md section 11: a form rendered
// from an ACTIVITY_SNAPSHOT) is a target too: view/watch/blocker take
// { messageId }, the token and the approval carry it, and the C++ guard judges
// it by that activity's own line (its status, its held deltas, its seq), never
// the state's. Activities take no user edits, so 'edit-pending' never applies.
//
// Staleness is a function of time, and nothing here runs on its own: watchers
// are re-evaluated after every feed()/end()/reset() and on guard.check(). An
// approval flips to `stale` when no byte (heartbeats included) arrived within
// staleAfterMs, which by nature happens while nothing is fed; so call
// guard.check() from a timer, or pass `staleCheckMs` to createStateSync to have
// the guard do that while it has watchers (an unref'd interval under Node).
import { reportListenerError, syncTypeError } from '../engine/errors.js';
import { InterruptTracker, resumeEntry } from './interrupts.js';
import { parseIndex, parsePointer } from '../shared/json-pointer.js';

const MISSING = Symbol('missing');
const hasOwn = Object.prototype.hasOwnProperty;

// The value at `tokens` in the mirror, or MISSING. Never throws.
function lookup(root, tokens) {
  let node = root;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      let index;
      try {
        index = parseIndex(token, node.length, false);
      } catch {
        return MISSING;
      }
      node = node[index];
    } else if (node !== null && typeof node === 'object' && hasOwn.call(node, token)) {
      node = node[token];
    } else {
      return MISSING;
    }
  }
  return node;
}

// The activity a view/watch/blocker call targets: undefined (the state) or a messageId.
function targetOf(options, who) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') throw syncTypeError('invalid-argument', `${who} options must be an object`);
  const { messageId } = options;
  if (messageId !== undefined && typeof messageId !== 'string') {
    throw syncTypeError('invalid-argument', `${who} options.messageId must be a string`);
  }
  return messageId;
}

function isSeq(value) {
  return value === null || value === undefined || (Number.isSafeInteger(value) && value >= 0);
}

export class ApprovalGuard {
  #host; // { link: the StateSync's EngineLink, state() (visible), confirmed(), editing(), activity(messageId) (its mirror entry), now(), unusable() -> reason | null }
  #watchers = new Set();
  #interrupts = new InterruptTracker();
  #staleCheckMs;
  #timer = null;

  /** @internal created by StateSync */
  constructor(host, staleCheckMs) {
    this.#host = host;
    this.#staleCheckMs = staleCheckMs;
  }

  /**
   * The value at `path` (RFC 6901; "" = whole state) from sync.confirmedState
   * (the agent's: tokens and digests are always of the agent's value), and a
   * token {path, seq, digest} to approve it with. {ok:false, reason} when the
   * path does not resolve ('missing'), is not a pointer ('invalid-token'), has
   * a pending edit at, under or above it ('edit-pending': the person would
   * approve their own value, which the agent does not hold), or the StateSync
   * is gone ('disposed'). Where there is no pending edit, sync.state has the
   * same value.
   * With { messageId }: the value at `path` in that activity's content
   * (sync.activities[messageId].content), and a token {path, seq, digest,
   * messageId} whose seq is the activity's own; 'missing' when no such
   * activity is held.
   */
  view(path, options) {
    const messageId = targetOf(options, 'guard.view()');
    const unusable = this.#host.unusable();
    if (unusable) return { ok: false, reason: unusable };
    if (typeof path !== 'string') return { ok: false, reason: 'invalid-token' };
    const result = this.#viewToken(path, messageId);
    if (!result.ok) return result;
    const doc = this.#document(messageId, true);
    const value = doc === MISSING ? MISSING : lookup(doc, parsePointer(path));
    if (value === MISSING) return { ok: false, reason: 'missing' };
    return { ok: true, value, token: result.token };
  }

  /**
   * Turns a token from view()/watch() into an approval, if the state is still
   * verifiably what the person saw. {ok:false, reason}: resyncing, unverified,
   * disconnected, stale, gap-pending, changed, missing, invalid-token,
   * unknown-interrupt, disposed, engine-failed. A token with a messageId is
   * judged by that activity (missing: it is no longer held), and the approval
   * carries the messageId.
   */
  approve(token, options) {
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw syncTypeError('invalid-argument', 'guard.approve() options must be an object');
    }
    const interruptId = options?.interruptId;
    if (interruptId !== undefined && typeof interruptId !== 'string') {
      throw syncTypeError('invalid-argument', 'guard.approve() options.interruptId must be a string');
    }
    const unusable = this.#host.unusable();
    if (unusable) return { ok: false, reason: unusable };
    let tokenJson;
    try {
      if (token === null || typeof token !== 'object') return { ok: false, reason: 'invalid-token' };
      const { path, seq, digest, messageId } = token;
      if (typeof path !== 'string' || typeof digest !== 'string' || !isSeq(seq)) {
        return { ok: false, reason: 'invalid-token' };
      }
      tokenJson = JSON.stringify({ path, seq: seq ?? null, digest, messageId }); // a messageId of another type: the core's invalid-token
    } catch {
      return { ok: false, reason: 'invalid-token' };
    }
    if (interruptId !== undefined && !this.#interrupts.has(interruptId)) return { ok: false, reason: 'unknown-interrupt' };
    const host = this.#host;
    const result = host.link.callJson((f) => f.guardApprove(tokenJson, host.now()));
    if (!result.ok) return { ok: false, reason: result.code }; // the facade's failure code is the guard reason
    const a = result.approval;
    const approval = { path: a.path, seq: a.seq, viewedSeq: a.viewedSeq, digest: a.digest, epoch: a.epoch };
    if (a.messageId !== undefined) approval.messageId = a.messageId;
    if (interruptId !== undefined) approval.interruptId = interruptId;
    return { ok: true, approval };
  }

  /**
   * null when approvals are possible right now, else why not (resyncing,
   * unverified, disconnected, stale, gap-pending, disposed). With { messageId }:
   * of a value in that activity (its own line; 'missing' when not held).
   */
  blocker(options) {
    const messageId = targetOf(options, 'guard.blocker()');
    const unusable = this.#host.unusable();
    if (unusable) return unusable;
    return this.#blocker(messageId);
  }

  /**
   * Calls `listener({value, approvable, reason, token})` now, and again whenever
   * the value at `path` (by identity in sync.state) or whether it can be
   * approved changes. `token` approves exactly the `value` delivered with it
   * (null when the path is missing). Returns the unsubscribe function.
   * With { messageId }: the value at `path` in that activity's content (by
   * identity in sync.activities), approvable by that activity's own line.
   */
  watch(path, listener, options) {
    const messageId = targetOf(options, 'guard.watch()');
    if (typeof listener !== 'function') throw syncTypeError('invalid-argument', 'guard.watch() takes a listener function');
    let tokens;
    try {
      tokens = parsePointer(path);
    } catch {
      throw syncTypeError('invalid-argument', `guard.watch(): ${JSON.stringify(path)} is not a JSON Pointer`);
    }
    if (this.#host.unusable()) return () => {};
    const entry = { path, tokens, listener, messageId, last: null };
    this.#watchers.add(entry);
    this.#evaluate([entry], true);
    this.#startTimer();
    return () => {
      this.#watchers.delete(entry);
      if (this.#watchers.size === 0) this.#stopTimer();
    };
  }

  /** Re-evaluates every watcher now (staleness depends on the clock; see the file comment). */
  check() {
    this.refresh();
  }

  /** The open AG-UI interrupts (RUN_FINISHED outcome 'interrupt'), as sent. */
  interrupts() {
    return this.#interrupts.list();
  }

  /** The RunAgentInput.resume entry for an approval bound to an interrupt. */
  resumeEntry(approval, extraPayload) {
    return resumeEntry(approval, extraPayload);
  }

  // --- called by StateSync ----------------------------------------------------

  /** @internal a pass-through AG-UI event */
  noteEvent(event) {
    this.#interrupts.noteEvent(event);
  }

  /** @internal after feed/end/reset */
  refresh() {
    if (this.#watchers.size === 0 || this.#host.unusable()) return;
    this.#evaluate([...this.#watchers], false);
  }

  /** @internal */
  dispose() {
    this.#watchers.clear();
    this.#stopTimer();
    this.#interrupts.clear();
  }

  // --- internals ---------------------------------------------------------------

  #viewToken(path, messageId) {
    const host = this.#host;
    const result = host.link.callJson((f) => (messageId === undefined ? f.guardView(path) : f.guardViewActivity(messageId, path)));
    if (!result.ok) return { ok: false, reason: result.code }; // the facade's failure code is the guard reason
    const { seq, digest } = result.token;
    return { ok: true, token: messageId === undefined ? { path, seq, digest } : { path, seq, digest, messageId } };
  }

  #blocker(messageId) {
    const host = this.#host;
    const reason = host.link.invoke((f) => (messageId === undefined ? f.guardBlocker(host.now()) : f.guardActivityBlocker(messageId, host.now())));
    return reason || null;
  }

  // The document a target reads: the state (the agent's for a token, else the
  // visible one), or an activity's content mirror (MISSING when none is held).
  #document(messageId, confirmed) {
    if (messageId === undefined) return confirmed ? this.#host.confirmed() : this.#host.state();
    const activity = this.#host.activity(messageId);
    return activity === undefined ? MISSING : activity.content;
  }

  // A watcher sees the visible value (what the person sees). With a pending
  // edit at, under or above its path that value is the person's own, so the
  // engine refuses a token ('edit-pending'); elsewhere the visible and the
  // confirmed value are the same object, and a token is reused while it is.
  #evaluate(entries, initial) {
    const blockers = new Map(); // per target: the state's (undefined) or an activity's
    const editing = this.#host.editing();
    for (const entry of entries) {
      if (!initial && !this.#watchers.has(entry)) continue; // unsubscribed by an earlier listener
      if (this.#host.unusable()) return; // an earlier listener disposed the StateSync
      const { messageId } = entry;
      if (!blockers.has(messageId)) blockers.set(messageId, this.#blocker(messageId));
      const blocker = blockers.get(messageId);
      const doc = this.#document(messageId, false);
      const found = doc === MISSING ? MISSING : lookup(doc, entry.tokens);
      const value = found === MISSING ? undefined : found;
      // While edits are pending, ask the engine for this path every time: an edit may have landed on it.
      const view = found !== MISSING && editing && messageId === undefined ? this.#viewToken(entry.path) : null;
      const reason = blocker ?? (found === MISSING ? 'missing' : view !== null && !view.ok ? view.reason : null);
      const approvable = reason === null;
      const last = entry.last;
      if (last && last.value === value && last.approvable === approvable && last.reason === reason) continue;
      const notice = { value, approvable, reason, token: this.#watchToken(entry, found, view) };
      entry.last = notice;
      try {
        entry.listener(notice);
      } catch (error) {
        reportListenerError(error, 'a guard.watch() listener');
      }
    }
  }

  // The token a watcher gets with `found` (null when missing or refused).
  #watchToken(entry, found, view) {
    if (found === MISSING) return null;
    if (view !== null) return view.ok ? view.token : null;
    const last = entry.last;
    if (last && last.value === found && last.token) return last.token;
    const fresh = this.#viewToken(entry.path, entry.messageId);
    return fresh.ok ? fresh.token : null;
  }

  #startTimer() {
    if (this.#timer !== null || !(this.#staleCheckMs > 0)) return;
    this.#timer = setInterval(() => this.refresh(), this.#staleCheckMs);
    if (typeof this.#timer === 'object' && typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  #stopTimer() {
    if (this.#timer === null) return;
    clearInterval(this.#timer);
    this.#timer = null;
  }
}
