// agui-state-sync/ag-ui: the engine inside @ag-ui/client (an optional peer
// dependency, with rxjs). StateSyncHttpAgent is a drop-in HttpAgent whose
// shared state is the engine's; sequenceState() is a server-side Middleware
// that sequences an AG-UI agent's state events. Importing this module loads
// no engine: an agent loads it when constructed (await agent.ready), a
// sequenceState() middleware at a thread's first run.
export { StateSyncHttpAgent } from './ag-ui/state-sync-agent.js';
export { sequenceState, SequenceStateMiddleware } from './ag-ui/sequence-state.js';
