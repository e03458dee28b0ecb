// agui-state-sync: AG-UI shared-state synchronization on a C++/WebAssembly engine.
export { createStateSync } from './client/sync.js';
export { initEngine } from './engine/init-engine.js';
export { canonicalJson, stateDigest } from './engine/canonical.js';
export { renderStateForPrompt } from './server/prompt.js';
export { verifyApproval } from './server/verify-approval.js';
export { createStateEmitter, initServerEngine } from './server/emitter.js';
export { connectStateSync } from './client/connect.js';
export { indexedDbStorage, memoryStorage } from './client/persist.js';
export { AguiSyncError } from './engine/errors.js';
export { WIRE_KEY, wireFields } from './engine/wire-meta.js';
