// Who may read, change or consume a thread (SECURITY.md, docs/wire.md
// section 12). The decision is the core's access gate (judgeAccess,
// src/facade/access_gate.h), the same the Python middleware drives; this file
// does what each verdict asks: reads and writes grants in the proxy's store
// (memory, or Redis: every instance sees them, and they expire), asks the
// deployer's authorize option, and hands the backend's answer back.
//
// admit() answers 'serve' (the requester is authorized for the thread) or
// 'forward' (not known yet, and the request carries nothing of the thread:
// the client's own RunAgentInput goes to the backend, which decides), or
// throws a 403 'not-authorized' refusal that names nothing of the thread.
// settle() takes the backend's status for a forwarded run: a 2xx grants (or
// renews) the requester's access; anything else denies and drops the grant.
import { EngineLink } from '../engine/engine-link.js';
import { syncError } from '../engine/errors.js';
import { loadEmitterEngine } from '../server/emitter.js';

const MAX_STEPS = 4; // lookup, ask, then the verdict
const GRANTED = 'granted';

export class Access {
  #store;
  #authorize;
  #ttlMs;
  #report;

  /** store: the claim/peek/release contract; authorize: the option (null: none); ttlMs: a grant's life. */
  constructor(store, { authorize, grantTtlMs }, report) {
    this.#store = store;
    this.#authorize = authorize;
    this.#ttlMs = grantTtlMs;
    this.#report = report;
  }

  /**
   * { kind: 'attach' | 'resume' | 'start', threadId, credentials (the credential headers' values), resume (a run's), headers }
   * -> 'serve' | 'forward'; throws the 403 refusal.
   */
  async admit(request) {
    const known = { kind: request.kind, threadId: request.threadId, credentials: request.credentials, resume: request.resume ?? null,
      looked: false, granted: false, hasAuthorizer: this.#authorize !== null, authorized: null, upstreamStatus: null };
    const verdict = await this.#drive(known, request);
    if (verdict === 'refuse') throw refusal();
    return verdict;
  }

  /** The backend's status for a run forwarded for `request`: true once granted, false when denied. */
  async settle(request, status) {
    const known = { kind: 'start', threadId: request.threadId, credentials: request.credentials, upstreamStatus: status };
    return (await this.#drive(known, request)) === 'serve';
  }

  async #drive(known, request) {
    const link = EngineLink.forEngine(await loadEmitterEngine());
    for (let step = 0; step < MAX_STEPS; step++) {
      const v = link.callJson((engine) => engine.module.judgeAccess(JSON.stringify(known)));
      if (!v.ok) throw refusedRequest(v.code, v.message); // a resume nested too deep, say
      switch (v.verdict) {
        case 'lookup':
          known.looked = true;
          known.granted = (await this.#store.peek(v.scope, v.id)) !== null;
          break;
        case 'ask':
          known.authorized = await this.#ask(request);
          break;
        case 'grant':
          await this.#grant(v.scope, v.id);
          return 'serve';
        case 'deny':
          await this.#store.release?.(v.scope, v.id, GRANTED);
          return 'deny';
        default:
          return v.verdict; // serve, forward, refuse
      }
    }
    throw new Error(`the access gate did not settle in ${MAX_STEPS} steps`); // a bug in the core's step function
  }

  // The deployer's answer: only true authorizes; a throw or anything else refuses (and a throw is reported).
  async #ask({ kind, threadId, headers }) {
    try {
      return (await this.#authorize({ kind, threadId, headers })) === true;
    } catch (error) {
      this.#report(error);
      return false;
    }
  }

  // Written anew, so a renewed grant lives grantTtlMs from now.
  async #grant(scope, id) {
    await this.#store.release?.(scope, id, GRANTED);
    await this.#store.claim(scope, id, GRANTED, this.#ttlMs);
  }
}

// The gate could not read the request: a 400 with its code (invalid-json, limit-exceeded, invalid-request).
function refusedRequest(code, message) {
  return syncError(code, `the request cannot be judged: ${message}`, { status: 400 });
}

function refusal() {
  return syncError('not-authorized', 'the backend has not accepted this requester for this thread', { status: 403 });
}
