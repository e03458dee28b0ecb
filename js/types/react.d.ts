// agui-state-sync/react
import type { JsonValue, StateSync } from './index.js';

/** The whole state; re-renders after each feed() that changed it. */
export function useAgentState<S = JsonValue>(sync: StateSync<S>): S;
/**
 * A selection of the state; re-renders when the selection changes. The selector
 * runs again only when the state object changes, so it need not be memoized.
 */
export function useAgentState<S, T>(sync: StateSync<S>, selector: (state: S) => T): T;
