// The core's run machine (RunFacade, src/facade/run_facade.h) in the sender's
// WebAssembly module: what one run's stream does next is decided there, for
// the proxy and for the Python middleware alike. This is the thin link: it
// sends a step, hands back the actions, and mirrors where the run stands
// (`at`: lastN, startedN, sentSeq, logBytes, finished, ended, clients).
import { EngineLink } from '../engine/engine-link.js';
import { failureError, syncError } from '../engine/errors.js';
import { readyEngineWith } from '../engine/loader.js';

export class RunLife {
  #link;
  at = { lastN: 0, startedN: 0, sentSeq: null, logBytes: 0, finished: false, ended: false, clients: 0 };

  /** options: run_facade.h's ({ key, requester, stored, followed, keep, graceMs, maxEvents, maxBytes, maxClients }). */
  constructor(options) {
    const engine = readyEngineWith('RunFacade');
    if (engine === null) throw syncError('engine-failed', 'the sender engine is not loaded: a run needs its thread first');
    this.#link = EngineLink.create(engine, 'RunFacade', JSON.stringify(options), 'RunLife');
    this.#link.track(this);
  }

  /** One step ({ on, ... }): the actions to carry out, in order. */
  step(input) {
    return this.#answer(this.#link.invoke((facade) => facade.step(JSON.stringify(input))));
  }

  /** One event the run sends (its JSON text): numbered, framed, committed. */
  event(json) {
    return this.#answer(this.#link.invoke((facade) => facade.event(json)));
  }

  dispose() {
    this.#link.release(this);
  }

  #answer(text) {
    const answer = this.#link.parse(text);
    if (!answer.ok) throw failureError(answer, 'engine-failed', `a run step failed: ${answer.message}`);
    this.at = answer.at;
    return answer.actions;
  }
}

/** The requester digest of credential header values (null: absent): who started a run, who may abort it. */
export function requesterOf(credentials) {
  const engine = readyEngineWith('requesterJson');
  if (engine === null) throw syncError('engine-failed', 'the sender engine is not loaded');
  return JSON.parse(EngineLink.forEngine(engine).invoke((e) => e.requesterJson(JSON.stringify(credentials))));
}
