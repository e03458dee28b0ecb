// The package as the demo server uses it: 'agui-state-sync' (file:../js).
export { canonicalJson, createStateEmitter, initEngine, stateDigest, verifyApproval } from 'agui-state-sync';
export { catchUp, HEADER_CATCH_UP, readResyncRequest } from 'agui-state-sync/server';
export const SOURCE = 'agui-state-sync (js/)';
