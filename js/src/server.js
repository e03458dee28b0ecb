// agui-state-sync/server: the server side of the resync conversation
// (docs/wire.md section 3) for a StateEmitter: read where a reconnecting
// client is, answer with nothing, the missed deltas, or one snapshot, and keep
// an idle stream alive with heartbeats (server/catch-up.js, server/heartbeat.js).
// The agent side of user edits (section 9; server/run-edits.js), approvals
// consumed once (server/approvals.js), the stores (server/store/), and
// promptMessage: the state as a prompt-safe message for the agent's model
// (server/prompt.js, docs/prompt-rendering.md).
export { catchUp, readResyncRequest, writeCatchUp } from './server/catch-up.js';
export { startHeartbeat } from './server/heartbeat.js';
export { formatActivities, formatHeld, HEADER_ACTIVITIES, HEADER_CATCH_UP, HEADER_HELD, MAX_ACTIVITY_POSITIONS, MAX_HELD, parseHeld, SNAPSHOT_REASONS } from './shared/resync-wire.js';
export { applyRunEdits, MAX_EDIT_ID_BYTES, MAX_RUN_EDITS, readRunEdits } from './server/run-edits.js';
export { memoryStore } from './server/store/memory-store.js';
export { redisStore } from './server/store/redis-store.js';
export { consumeApproval, effectKey } from './server/approvals.js';
export { initServerEngine } from './server/emitter.js';
export { promptMessage } from './server/prompt.js';
export { once } from './server/once.js';
