// agui-state-sync/react: read a StateSync's state from React components.
import { useCallback, useRef, useSyncExternalStore } from 'react';

const UNSET = Symbol('unset');

/**
 * Returns `sync.state` (the visible state: the agent's with the user's pending
 * edits on top), or `selector(sync.state)`, and re-renders when it changes,
 * after a feed or a local edit (sync.edit).
 *
 * Built on useSyncExternalStore. The selection is recomputed only when the
 * state object changes (states are immutable and share untouched subtrees), so
 * a selector that returns a subtree, or derives a value, is stable between
 * unrelated updates. The selector does not need to be memoized.
 */
export function useAgentState(sync, selector) {
  const subscribe = useCallback((onChange) => sync.subscribe(onChange), [sync]);
  const memo = useRef({ sync: null, state: UNSET, selector: null, value: undefined });
  const getSnapshot = () => {
    const state = sync.state;
    if (!selector) return state;
    const m = memo.current;
    if (m.sync !== sync || m.state !== state || m.selector !== selector) {
      m.value = selector(state);
      m.sync = sync;
      m.state = state;
      m.selector = selector;
    }
    return m.value;
  };
  return useSyncExternalStore(subscribe, getSnapshot, getSnapshot);
}

/**
 * Returns `sync.pendingEdits()` (the user's edits the agent has not
 * acknowledged, oldest first) and re-renders when that list changes, e.g. to
 * mark the fields that are still pending. The array is the same object until
 * the list changes.
 */
export function usePendingEdits(sync) {
  const subscribe = useCallback((onChange) => sync.subscribe(onChange), [sync]);
  const getSnapshot = () => sync.pendingEdits();
  return useSyncExternalStore(subscribe, getSnapshot, getSnapshot);
}
