// Symbols of store-bound threads (their activities, the lines beside them, a
// writer's rebased update), server side only: kept out of engine/internals.js,
// which the browser bundle carries. Not exported from the package entry points.
// ActivityEmitter of a store-bound thread: the activity record's ops of what it wrote, and the record adopted.
export const kTakeRecordOps = Symbol('agui-state-sync.takeRecordOps');
export const kAdoptRecord = Symbol('agui-state-sync.adoptRecord');
// ...and what follows the record's answer to the ops taken (the core's RecordCommits), and whether it is behind.
export const kSettleRecord = Symbol('agui-state-sync.settleRecord');
export const kRecordStale = Symbol('agui-state-sync.recordStale');
// ActivityEmitter: its activities as unsequenced snapshots (SSE text), a proxy run's upstream receiver's seed.
export const kSeedText = Symbol('agui-state-sync.seedText');
// A store-bound emitter: brings its activities to the stored record (the proxy, before a run's upstream starts).
export const kSyncActivities = Symbol('agui-state-sync.syncActivities');
// A store-bound emitter: a line of the library's own beside the thread, at the core's sideLineKey(name, key)
// (the proxy keeps its upstream's own last state of the thread there: proxy/thread.js).
export const kSideLine = Symbol('agui-state-sync.sideLine');
// StateEmitter: update() by a writer's change from the state it last gave, as the core fits it (EmitterFacade::updateRebased).
export const kUpdateRebased = Symbol('agui-state-sync.updateRebased');
