// agui-state-sync/proxy: sequencing for any AG-UI backend, with no change to
// the backend (docs/wire.md section 8). createStateSyncProxy({ upstream }) is a
// Node (req, res) handler; proxy/create-proxy.js says what it does and lists
// its units.
export {
  createStateSyncProxy,
  EVENTS_LOST,
  HEADER_ABORT,
  HEADER_ATTACH,
  HEADER_RESUME,
  PROXY_DEFAULTS,
  UPSTREAM_CONSISTENT,
  UPSTREAM_INCONSISTENT,
} from './proxy/create-proxy.js';
export { createOpsHandler } from './proxy/operate.js';
export { authorizeUrl } from './proxy/authorize-url.js';
