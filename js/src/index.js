// agui-state-sync: AG-UI shared-state synchronization on a C++/WebAssembly engine.
export { createStateSync } from './sync.js';
