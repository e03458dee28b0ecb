// Symbols for test hooks. Not exported from the package entry points.
export const kInternals = Symbol('agui-state-sync.internals');
// StateEmitter's counted catch-up snapshot, for catchUp() in server.js.
export const kCatchUpSnapshot = Symbol('agui-state-sync.catchUpSnapshot');
// StateEmitter: the core's catch-up answer for a client's position (server/catch-up.js).
export const kCatchUp = Symbol('agui-state-sync.catchUp');
// StateEmitter: that answer SSE-encoded, kept while the same position comes at the same state (writeCatchUp()).
export const kCatchUpEncoded = Symbol('agui-state-sync.catchUpEncoded');
// StateSync's local-edit listeners, for StateSyncHttpAgent (agent.state follows an edit).
export const kLocalEdit = Symbol('agui-state-sync.localEdit');
// StateEmitter: a write into its facade made by another facade (the upstream
// cursor's planWrite, server/upstream-cursor.js), which drops its parsed state.
export const kWriteThrough = Symbol('agui-state-sync.writeThrough');
// A store-bound emitter: such a write into its local emitter's facade, committed
// as its own writes are (retried on the store's line after a lost race).
export const kCommitThrough = Symbol('agui-state-sync.commitThrough');
// StateEmitter: the prompt render of its own state from options already as JSON text (the proxy's promptContext).
export const kRenderPrompt = Symbol('agui-state-sync.renderPrompt');
// StateEmitter's state JSON text, for store-bound emitters (store/durable-emitter.js).
export const kStateText = Symbol('agui-state-sync.stateText');
// A store-bound emitter's catch-up (a promise), for catchUp() in server.js.
export const kStoreCatchUp = Symbol('agui-state-sync.storeCatchUp');
// redisStore(): runs a Lua script of another module's (the proxy's run logs) on its connection.
export const kStoreScript = Symbol('agui-state-sync.storeScript');
// redisStore(): one plain command on its connection (GET, SET ... PX), with its timeout and errors.
export const kStoreCommand = Symbol('agui-state-sync.storeCommand');
// redisStore(): watch() of a channel by its full key name (the proxy's run logs' meta keys).
export const kStoreWatch = Symbol('agui-state-sync.storeWatch');
// StateSync's persistence hooks (persist.js): install the checkpoint sink, restore from a checkpoint, read its meta.
export const kPersist = Symbol('agui-state-sync.persist');
export const kRestore = Symbol('agui-state-sync.restore');
export const kCheckpointMeta = Symbol('agui-state-sync.checkpointMeta');
// ActivityEmitter's catch-up for a client's activity positions (server/catch-up.js).
export const kActivityCatchUp = Symbol('agui-state-sync.activityCatchUp');
// A StateEmitter's ActivityEmitter if one was created (null otherwise): catchUp() answers for it.
export const kActivitiesInUse = Symbol('agui-state-sync.activitiesInUse');
// ActivityEmitter: a run's stream of its activities (ActivityStreamFacade), for sequenceState() and the proxy.
export const kActivityStream = Symbol('agui-state-sync.activityStream');
