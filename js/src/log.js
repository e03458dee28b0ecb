// agui-state-sync/log: AG-UI thread logs that survive storage, shrink without
// changing what they replay to, and branch.
//
//  - serializeLog / parseLog / parseLogStream: JSON Lines with a version
//    header, append-friendly (log/jsonl.js).
//  - compactEvents: @ag-ui/client's compaction where it is right, state folded
//    per run from the state earlier runs left (log/compact.js).
//  - replayEquivalent: two logs replayed through the engine and compared
//    (log/equivalence.js).
//  - stateAt / branchFrom: time travel along parentRunId (log/branches.js).
//  - listRuns: the run history and its lineage, without a replay
//    (log/run-list.js).
//
// Everything that replays state uses the WebAssembly engine (a real
// StateSync): those functions are async and load it on first use.
export { LOG_VERSION, parseLog, parseLogStream, serializeLog, serializeLogEvent, serializeLogHeader } from './log/jsonl.js';
export { compactEvents } from './log/compact.js';
export { replayEquivalent } from './log/equivalence.js';
export { branchFrom, stateAt } from './log/branches.js';
export { listRuns } from './log/run-list.js';
