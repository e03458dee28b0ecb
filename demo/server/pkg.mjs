// The package as the demo server uses it: 'agui-state-sync' (file:../js).
export { canonicalJson, createStateEmitter, initEngine, stateDigest, verifyApproval, wireFields } from 'agui-state-sync';
export { catchUp, consumeApproval, HEADER_CATCH_UP, memoryStore, readResyncRequest } from 'agui-state-sync/server';
export { branchFrom, serializeLog } from 'agui-state-sync/log';
export { HEADER_ATTACH } from 'agui-state-sync/proxy';
export const SOURCE = 'agui-state-sync (js/)';
