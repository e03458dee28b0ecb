// The AG-UI events the proxy writes itself (everything else it sends is the
// upstream's event, or one the thread's StateEmitter stamped).

/** CUSTOM event: the upstream's state stream stopped making sense; state events are held. */
export const UPSTREAM_INCONSISTENT = 'agui-state-sync.upstream-inconsistent';
/** CUSTOM event: the upstream sent a snapshot again; state flows again from there. */
export const UPSTREAM_CONSISTENT = 'agui-state-sync.upstream-consistent';
/** CUSTOM event: a resume from an event the proxy no longer holds; events in between are lost. */
export const EVENTS_LOST = 'agui-state-sync.events-lost';

export const TERMINAL_TYPES = new Set(['RUN_FINISHED', 'RUN_ERROR']);

export function customEvent(name, value) {
  return { type: 'CUSTOM', name, value };
}

/**
 * A RUN_ERROR the proxy writes. `code` is from the package's code table:
 * 'upstream-failed' (the upstream failed, answered an error, or ended early) or
 * 'run-aborted' (the run was aborted: by the client, or because no client
 * came back within the grace period).
 */
export function runError(code, message) {
  return { type: 'RUN_ERROR', message: `agui-state-sync proxy: ${message}`, code };
}
