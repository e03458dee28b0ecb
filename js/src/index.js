// agui-state-sync: AG-UI shared-state synchronization on a C++/WebAssembly engine.
export { createStateSync } from './sync.js';
export { initEngine } from './init-engine.js';
export { canonicalJson, stateDigest } from './canonical.js';
export { renderStateForPrompt } from './prompt.js';
export { verifyApproval } from './verify-approval.js';
export { createStateEmitter } from './emitter.js';
export { connectStateSync } from './connect.js';
export { indexedDbStorage, memoryStorage } from './persist.js';
export { AguiSyncError } from './errors.js';
