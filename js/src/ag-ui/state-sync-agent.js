// StateSyncHttpAgent: @ag-ui/client's HttpAgent with the shared state kept by
// the engine. The response bytes go to sync.feed() (framing, sequencing,
// atomic apply); every other AG-UI event goes on into @ag-ui/client's own
// pipeline unchanged; agent.state is always the engine's state (the very
// object stateSync.state is). A broken connection or a resync request makes the
// same runAgent() call reconnect with the catch-up request (docs/wire.md
// section 3), through the loop connectStateSync uses (reconnect.js).
// User edits (agent.edit, or agent.stateSync.edit) show in agent.state at once
// and travel with every request of every run (forwardedProps.stateSync.edits,
// RunAgentInput.state = the visible state) until the agent acknowledges them.
// connect() (@ag-ui/client's connectAgent()) attaches to the thread's running
// run on a server that keeps runs (the agui-state-sync proxy: a GET with
// X-AGUI-Attach, docs/wire.md section 8): the state by catch-up, the run's
// events so far, then live; with no run going on, it brings the state up to date.
import { enforceOutgoingInput, HttpAgent } from '@ag-ui/client';
import { Observable } from 'rxjs';
import { AppliedStates, RunDelivery } from './agent-delivery.js';
import { applyEvents, handOut, stateViews } from './agent-apply.js';
import { failureError, reportListenerError, syncError, syncTypeError } from '../engine/errors.js';
import { initEngine } from '../engine/init-engine.js';
import { kLocalEdit } from '../engine/internals.js';
import { jsonText } from '../engine/options.js';
import { syncOptions } from '../client/sync-options.js';
import { backoffOptions, checkIdleTimeout, Fatal, ReconnectLoop, setCatchUpHeaders, stateSyncProps } from '../client/reconnect.js';
import { SseEventIds } from './sse-ids.js';
import { createStateSync } from '../client/sync.js';
import { HEADER_ABORT, HEADER_ATTACH } from '../shared/resync-wire.js';

const WHO = 'StateSyncHttpAgent stateSync';

/** The `stateSync` option, checked: createStateSync options plus the loop's. */
function agentOptions(stateSync) {
  const raw = stateSync ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw syncTypeError('invalid-options', `${WHO} must be an object`);
  const { backoff, idleTimeoutMs, abortUrl, onStatus, onOutcome, ...engine } = raw;
  syncOptions(engine); // throws for a wrong createStateSync option, now rather than at load
  checkIdleTimeout(idleTimeoutMs, WHO);
  for (const [name, value] of [['onStatus', onStatus], ['onOutcome', onOutcome]]) {
    if (value !== undefined && typeof value !== 'function') throw syncTypeError('invalid-options', `${WHO}.${name} must be a function`);
  }
  if (abortUrl !== undefined && typeof abortUrl !== 'string' && !(abortUrl instanceof URL)) {
    throw syncTypeError('invalid-options', `${WHO}.abortUrl must be a string or URL`);
  }
  return { raw, engine, backoff: backoffOptions(backoff, WHO), idleTimeoutMs, abortUrl, onStatus, onOutcome };
}

// What an aborted run errors with: an AbortError, which @ag-ui/client's
// onError treats as a deliberate stop (runAgent() resolves), as for HttpAgent.
function abortError(signal) {
  const reason = signal.reason;
  return reason instanceof Error && reason.name === 'AbortError' ? reason : new DOMException('The run was aborted', 'AbortError');
}

export class StateSyncHttpAgent extends HttpAgent {
  #options;
  #sync = null;
  #ready;
  #disposed = false;
  #applied = new AppliedStates();
  #warned = new Set();
  #runId = null; // the run in flight (for abortRequest)

  /** config: HttpAgent's ({ url, headers, fetch, threadId, initialState, ... }) plus `stateSync`. */
  constructor(config) {
    if (config === null || typeof config !== 'object') throw syncTypeError('invalid-options', 'new StateSyncHttpAgent() needs a config with a url');
    const { stateSync, ...httpConfig } = config;
    super(httpConfig);
    this.#options = agentOptions(stateSync);
    this.#ready = this.#load();
    this.#ready.catch(() => {}); // surfaced by `ready` and runAgent(), not as an unhandled rejection
  }

  /** Resolves (with the StateSync) once the engine is loaded; rejects if it cannot load. */
  get ready() {
    return this.#ready;
  }

  /** The StateSync behind agent.state (status, guard, metrics, resyncRequest). Throws 'not-loaded' before `ready`. */
  get stateSync() {
    if (this.#disposed) throw syncError('disposed', 'the agent was disposed');
    if (this.#sync === null) throw syncError('not-loaded', 'await agent.ready first');
    return this.#sync;
  }

  async runAgent(parameters, subscriber) {
    // The controller is chosen before waiting for the engine, so an abortRun()
    // meanwhile aborts this run.
    const abortController = parameters?.abortController ?? new AbortController();
    this.abortController = abortController;
    await this.#ready;
    return super.runAgent({ ...parameters, abortController }, subscriber);
  }

  /**
   * Attaches to the thread's running run (connect(): a reloaded page, a second
   * device) or, with none, brings the state up to date; resolves when that
   * run (or the catch-up) ends, as runAgent() does. abortRun() then aborts the
   * attached run for a server that accepts this client's credentials for it
   * (the run's starter's); detachActiveRun() only stops listening.
   */
  async connectAgent(parameters, subscriber) {
    // A controller the caller set (CopilotKit sets agent.abortController before connecting) stays the one that stops it.
    if (parameters?.abortController) this.abortController = parameters.abortController;
    else if (this.abortController.signal.aborted) this.abortController = new AbortController();
    await this.#ready;
    return super.connectAgent(parameters, subscriber);
  }

  /** Aborts the run in flight: the request, any reconnect, and (abortRequest) the server's run. */
  abortRun() {
    const runId = this.#runId;
    super.abortRun();
    if (runId !== null) this.abortRequest(runId);
  }

  /**
   * Tells the server a run was aborted on purpose (a broken connection is not
   * an abort for a server that keeps runs going across reconnects). Default:
   * with `stateSync.abortUrl`, POSTs to it with header `X-AGUI-Abort: <runId>`
   * (and the agent's headers); failures are ignored. Override for other transports.
   */
  abortRequest(runId) {
    const url = this.#options.abortUrl;
    if (url === undefined) return;
    const init = { method: 'POST', headers: { ...this.headers, [HEADER_ABORT]: runId } };
    try {
      Promise.resolve(this.fetch(String(url), init)).then((response) => response?.body?.cancel?.(), () => {});
    } catch {
      // a fetch that throws synchronously: ignored like a failed one
    }
  }

  /**
   * A user edit of the shared state: sync.edit(ops) on the agent's StateSync
   * (RFC 6902, applied atomically; { ok: true, editId } | { ok: false, reason,
   * code, message, opIndex? }). agent.state shows it at once (subscribers hear
   * onStateChanged), during a run too, and it goes to the agent with the next
   * request until acknowledged; conflicts and acks arrive as outcomes
   * (stateSync.onOutcome). Unlike setState(), the agent's verified state is
   * kept: the edit is a pending layer on top of it. Throws 'not-loaded' before `ready`.
   */
  edit(ops) {
    return this.stateSync.edit(ops);
  }

  /**
   * Replaces the state locally (AbstractAgent.setState). The engine takes it as
   * an unsequenced snapshot: agent.state stays stateSync.state, the status is
   * 'unverified' and the position is dropped, so the next run asks the server
   * for a snapshot. Not while a run is active (the stream owns the state then).
   */
  setState(state) {
    if (this.#sync === null) return super.setState(state); // the engine starts from this.state
    if (this.isRunning) throw syncError('run-active', 'setState() while a run is active: the state is the agent\'s until the run ends');
    const text = jsonText({ type: 'STATE_SNAPSHOT', snapshot: state }, 'setState() state');
    const sync = this.#sync;
    sync.reset();
    const refused = sync.feed(`data: ${text}\n\n`).find((outcome) => outcome.kind === 'error');
    if (refused) throw failureError(refused, 'invalid-event', `setState() refused: ${refused.message}`);
    this.state = handOut(sync.state);
    this.#notifyStateChanged();
  }

  /**
   * A copy with its own engine, starting (unverified) from this agent's state
   * and messages, and with a client id of its own (editIds are unique per
   * client; the agent applies each once), without this agent's pending edits
   * and without `persist` (the checkpoint is this agent's).
   */
  clone() {
    const { clientId, persist, ...stateSync } = this.#options.raw;
    const copy = new this.constructor({
      url: this.url, headers: this.headers, fetch: this.fetch, agentId: this.agentId, description: this.description,
      threadId: this.threadId, initialMessages: this.messages, initialState: this.state, debug: this.debug,
      stateSync,
    });
    copy.subscribers = [...this.subscribers];
    copy.middlewares = [...this.middlewares];
    copy.pendingInterrupts = structuredClone(this.pendingInterrupts);
    return copy;
  }

  /** Aborts any run and frees the engine. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.isRunning) this.abortRun();
    if (this.#sync !== null) this.#sync.dispose();
    this.#sync = null;
  }

  /** @internal The run's events: the engine's outcomes over as many connections as it takes. */
  run(input) {
    return this.#events(input, false);
  }

  /** @internal The attached run's events (connectAgent()), as run()'s. */
  connect(input) {
    return this.#events(input, true);
  }

  // attach: a GET with X-AGUI-Attach instead of the POST of a run; the run's id
  // (for abortRun) is the one its RUN_STARTED names.
  #events(input, attach) {
    return new Observable((subscriber) => {
      const sync = this.stateSync;
      const signal = this.abortController.signal;
      this.#runId = attach ? null : input.runId ?? null;
      const delivery = new RunDelivery((event) => {
        if (attach && event.type === 'RUN_STARTED' && typeof event.runId === 'string') this.#runId = event.runId;
        subscriber.next(event);
      }, this.#applied);
      const loop = this.#loop(sync, input, delivery, signal, attach);
      loop.run().then(() => {
        if (signal.aborted) subscriber.error(abortError(signal));
        else if (delivery.finish()) subscriber.complete();
        else subscriber.error(syncError('disposed', 'the run ended without finishing: the agent\'s StateSync was disposed'));
      }, (error) => subscriber.error(error));
      return () => {
        if (attach || this.#runId === input.runId) this.#runId = null;
        loop.close();
      };
    });
  }

  /** @internal */
  apply(input, events$, subscribers) {
    return applyEvents(this, input, events$, subscribers, this.#applied, this.#warn);
  }

  /** @internal */
  onInitialize(input, subscribers) {
    return super.onInitialize(input, stateViews(subscribers, this, this.#warn));
  }

  /** @internal */
  onError(input, error, subscribers) {
    return super.onError(input, error, stateViews(subscribers, this, this.#warn));
  }

  /** @internal */
  onFinalize(input, subscribers) {
    return super.onFinalize(input, stateViews(subscribers, this, this.#warn));
  }

  #loop(sync, input, delivery, signal, attach) {
    const ids = new SseEventIds();
    let resumable = false; // an event of this call carried an id: an attach's reconnect resumes that stream
    let attached = !attach; // a response said it attached (X-AGUI-Attach): the server can
    const { backoff, idleTimeoutMs, onStatus, onOutcome } = this.#options;
    const loop = new ReconnectLoop(sync, {
      url: this.url,
      fetch: async (url, init) => {
        const response = await this.fetch(String(url), init);
        if (attached) return response;
        attached = this.#canAttach(response);
        return response;
      },
      backoff, idleTimeoutMs, signal, onStatus,
      feed: (bytes) => ids.feed(sync, bytes),
      request: (position, requestSignal) => {
        ids.reset();
        delivery.connection(position.attempt);
        if (attach) return this.#attachRequest(input, { ...position, lastEventId: resumable ? position.lastEventId : null }, requestSignal);
        return this.#request(sync, input, position, requestSignal);
      },
      onOutcome: (outcome) => {
        const id = ids.idOf(outcome);
        if (id !== null) resumable = true;
        delivery.handle(outcome, id);
        if (delivery.errored) loop.close(); // a failed run is not run again to heal its state
        if (onOutcome) onOutcome(outcome);
      },
    });
    return loop;
  }

  // One attempt's request: HttpAgent's requestInit() of the input with the
  // engine's (visible) state and forwardedProps.stateSync (the position, and
  // the pending edits: every attempt re-sends them, which the agent applies
  // once per editId), plus the catch-up headers.
  #request(sync, input, position, signal) {
    const props = input.forwardedProps;
    const stateSync = stateSyncProps(position);
    const edits = sync.pendingEdits();
    if (edits.length > 0) stateSync.edits = [...edits];
    const forwardedProps = props === undefined || (props !== null && typeof props === 'object' && !Array.isArray(props))
      ? { ...props, stateSync }
      : props;
    let checked;
    try {
      checked = enforceOutgoingInput({ ...input, state: sync.state, forwardedProps });
    } catch (error) {
      throw new Fatal(syncError('invalid-argument', `the RunAgentInput is malformed: ${error?.message ?? error}`, { cause: error }));
    }
    const init = this.requestInit(checked);
    return { ...init, headers: setCatchUpHeaders(new Headers(init.headers), position, true), signal };
  }

  // Whether the first answer to an attach comes from a server that attaches
  // (it says so in X-AGUI-Attach). One that does not (a plain AG-UI server, a
  // sequenceState() app: 404, 405, a page, ...) cannot: connect() then throws
  // what HttpAgent's does, AGUIConnectNotImplementedError, which connectAgent()
  // takes as "nothing to connect to" (it resolves). A 408 / 429 / 5xx is a
  // passing failure: the loop tries again.
  #canAttach(response) {
    if (response?.headers?.get?.(HEADER_ATTACH)) return true;
    const status = response?.status ?? 0;
    if (status === 408 || status === 429 || status >= 500) return false;
    response?.body?.cancel?.().catch?.(() => {});
    throw new Fatal(this.#notAttachable());
  }

  // HttpAgent's own answer to connect(): AGUIConnectNotImplementedError (from @ag-ui/core, as it throws it).
  #notAttachable() {
    try {
      return super.connect(undefined);
    } catch (error) {
      return error;
    }
  }

  // An attach: GET with X-AGUI-Attach: <threadId> and the catch-up headers
  // (Last-Event-ID only for the stream this call attached to: the engine's may
  // name an earlier run's, which the server would answer with that run's end).
  #attachRequest(input, position, signal) {
    const headers = setCatchUpHeaders(new Headers(this.headers), position);
    headers.set(HEADER_ATTACH, input.threadId);
    return { method: 'GET', headers, signal };
  }

  async #load() {
    const engine = this.#options.engine;
    const wasm = {};
    if (engine.wasmBinary !== undefined) wasm.wasmBinary = engine.wasmBinary;
    if (engine.locateFile !== undefined) wasm.locateFile = engine.locateFile;
    await initEngine(wasm);
    // this.state now, not at construction: a setState() before the engine loaded counts.
    const sync = await createStateSync({ ...engine, initialState: engine.initialState ?? this.state });
    if (this.#disposed) {
      sync.dispose();
      throw syncError('disposed', 'the agent was disposed while its engine loaded');
    }
    this.#sync = sync;
    this.state = handOut(sync.state);
    sync[kLocalEdit](() => this.#localEdit(sync));
    return sync;
  }

  // An edit moved the visible state: agent.state follows now, as for setState().
  #localEdit(sync) {
    const state = handOut(sync.state);
    this.#applied.noteLocalEdit(state);
    this.state = state;
    this.#notifyStateChanged();
  }

  // Like AbstractAgent.setState: subscribers hear of it after the call returns.
  #notifyStateChanged() {
    const params = { messages: this.messages, state: this.state, agent: this };
    queueMicrotask(async () => {
      for (const subscriber of this.subscribers) {
        try {
          await subscriber.onStateChanged?.(params);
        } catch (error) {
          reportListenerError(error, 'a subscriber\'s onStateChanged');
        }
      }
    });
  }

  #warn = (kind, message) => {
    if (this.#warned.has(kind)) return;
    this.#warned.add(kind);
    console.warn(`agui-state-sync: ${message}`);
  };
}
