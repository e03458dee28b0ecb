// agui-state-sync/react
import type { JsonValue, PendingEdit, StateSync } from './index.js';

/** The whole (visible) state; re-renders after each feed() or edit() that changed it. */
export function useAgentState<S = JsonValue>(sync: StateSync<S>): S;
/**
 * A selection of the state; re-renders when the selection changes. The selector
 * runs again only when the state object changes, so it need not be memoized.
 */
export function useAgentState<S, T>(sync: StateSync<S>, selector: (state: S) => T): T;
/** sync.pendingEdits(); re-renders when the list changes (an edit made, acknowledged, rejected or lost to a conflict). */
export function usePendingEdits<S = JsonValue>(sync: StateSync<S>): readonly PendingEdit[];
