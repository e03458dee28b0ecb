// The package, exactly as an app imports it ('agui-state-sync' is file:../js).
export { connectStateSync, createStateSync, indexedDbStorage, stateDigest } from 'agui-state-sync';
export { useAgentState } from 'agui-state-sync/react';
export { listRuns, parseLog, stateAt } from 'agui-state-sync/log';
