// How StateSyncHttpAgent's events are applied: @ag-ui/client's default
// applier for everything (messages, tool calls, reasoning, interrupts,
// pendingInterrupts, runAgent()'s result), except the shared state.
//
// Why not let the default applier apply state events: it structuredClone()s
// every mutation it emits (O(state) per event) and would set agent.state to
// that copy, or, for a delta, to its own patch of its own copy, whatever the
// engine decided. Instead a gate subscriber runs first for every event; for a
// state event it runs the subscribers' state hooks itself, sets agent.state to
// the engine's state after that event (the very object stateSync.state was),
// fires onStateChanged, and stops propagation, so the default applier never
// touches state. Running inside the default applier keeps strict event order
// with the message mutations around it.
//
// In development and tests (NODE_ENV development / test, Vitest) the states
// handed out are deep-frozen, as @ag-ui/client freezes what its subscribers
// see: an in-place write then throws instead of corrupting the engine's state.
// The engine never writes to a state it has handed out (a delta copies the
// spine it changes), and freezing skips frozen subtrees, so each event costs
// only what it changed.
//
// The other subscribers are seen through a view whose hooks get
// `state: agent.state` (the default applier's own copy of the state never
// moves) and whose returned `state` mutations are dropped: agent.state is the
// agent's verified state, so a subscriber cannot replace it (warned once).
import { defaultApplyEvents } from '@ag-ui/client';
import { reportListenerError } from '../engine/errors.js';

const STATE_HOOKS = { STATE_SNAPSHOT: 'onStateSnapshotEvent', STATE_DELTA: 'onStateDeltaEvent' };
const HOOK = /^on[A-Z]/;
const STOP = Object.freeze({ stopPropagation: true });
const hasOwn = Object.prototype.hasOwnProperty;

/**
 * AbstractAgent.apply() for StateSyncHttpAgent. `applied`: its AppliedStates;
 * `warn(kind, message)`: a once-per-kind warning.
 */
export function applyEvents(agent, input, events$, subscribers, applied, warn) {
  const gate = {
    onEvent: ({ event }) => {
      if (!hasOwn.call(STATE_HOOKS, event.type)) return undefined;
      return applyStateEvent(agent, input, event, subscribers, applied, warn).then(() => STOP);
    },
  };
  return defaultApplyEvents(input, events$, agent, [gate, ...stateViews(subscribers, agent, warn)], agent.debugLogger);
}

function developing() {
  const env = typeof process === 'object' && process !== null ? process.env : undefined;
  return env !== undefined && (env.NODE_ENV === 'development' || env.NODE_ENV === 'test' || Boolean(env.VITEST_WORKER_ID));
}

function deepFreeze(value) {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze(value[key]);
}

/** `state` as it may be handed to subscribers: deep-frozen in development and tests. */
export function handOut(state) {
  if (developing()) deepFreeze(state);
  return state;
}

/** `subscribers` as the default applier's lifecycle calls should see them (see stateView). */
export function stateViews(subscribers, agent, warn) {
  return subscribers.map((subscriber) => stateView(subscriber, agent, warn));
}

// One state event: hooks (with the state before it), then agent.state moves to
// the engine's state after it. An event the engine never saw (a middleware
// made it up) cannot move the state anywhere the engine has not been.
async function applyStateEvent(agent, input, event, subscribers, applied, warn) {
  const { found, state } = applied.lookup(event);
  if (!found) warn('foreign', `a ${event.type} that did not come through the engine reached apply(); agent.state stays the engine's`);
  await runStateHooks(agent, input, event, subscribers, warn);
  if (state === undefined || state === agent.state) return;
  agent.state = handOut(state);
  const params = { state, messages: agent.messages, agent, input };
  for (const subscriber of subscribers) await callHook(subscriber, 'onStateChanged', params);
}

// onEvent for every subscriber, then onStateSnapshotEvent / onStateDeltaEvent,
// as @ag-ui/client orders them; stopPropagation ends the hooks (not the state:
// the engine has applied it already).
async function runStateHooks(agent, input, event, subscribers, warn) {
  for (const name of ['onEvent', STATE_HOOKS[event.type]]) {
    for (const subscriber of subscribers) {
      const mutation = await callHook(subscriber, name, { event, messages: agent.messages, state: agent.state, agent, input });
      if (mutation === null || typeof mutation !== 'object') continue;
      if (mutation.state !== undefined || mutation.messages !== undefined) {
        warn('state-hook', `a subscriber's ${name} returned a mutation for a state event; it is ignored (the state is the engine's)`);
      }
      if (mutation.stopPropagation === true) return;
    }
  }
}

async function callHook(subscriber, name, params) {
  const hook = subscriber?.[name];
  if (typeof hook !== 'function') return undefined;
  try {
    return await hook.call(subscriber, params);
  } catch (error) {
    reportListenerError(error, `a subscriber's ${name}`);
    return undefined;
  }
}

function stateView(subscriber, agent, warn) {
  if (subscriber === null || typeof subscriber !== 'object') return subscriber;
  return new Proxy(subscriber, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function' || typeof key !== 'string' || !HOOK.test(key)) return value;
      return (params) => {
        const seen = params !== null && typeof params === 'object' ? { ...params, state: agent.state } : params;
        const result = value.call(target, seen);
        return result !== null && typeof result?.then === 'function'
          ? result.then((mutation) => withoutState(mutation, warn))
          : withoutState(result, warn);
      };
    },
  });
}

function withoutState(mutation, warn) {
  if (mutation === null || typeof mutation !== 'object' || mutation.state === undefined) return mutation;
  warn('state-mutation', 'a subscriber returned a state mutation; it is ignored: agent.state is the agent\'s verified state');
  const { state, ...rest } = mutation;
  return rest;
}
