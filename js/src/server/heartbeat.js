// Heartbeats keep an idle SSE stream alive and tell the client the seq it
// should be at (docs/wire.md section 3), so silence is never mistaken for sync.
import { syncTypeError } from '../engine/errors.js';

/**
 * Writes emitter.heartbeat() (": hb <seq>\n\n") to `res` every `intervalMs`
 * until the returned stop() is called, the response closes, or the emitter is
 * disposed. The timer does not keep a Node process alive by itself.
 * options.write(line): where the line goes instead of res.write, for a server
 * that queues its writes (a heartbeat must not overtake a queued event, or the
 * client would see a seq ahead of the events it has and ask for a resync).
 */
export function startHeartbeat(res, emitter, intervalMs = 5000, options = {}) {
  if (typeof intervalMs !== 'number' || !(intervalMs > 0) || !Number.isFinite(intervalMs)) {
    throw syncTypeError('invalid-argument', 'startHeartbeat() intervalMs must be a positive number');
  }
  const write = options?.write ?? ((line) => res.write(line));
  if (typeof write !== 'function') throw syncTypeError('invalid-options', 'startHeartbeat() options.write must be a function');
  let timer = null;
  const stop = () => {
    if (timer === null) return;
    clearInterval(timer);
    timer = null;
    if (typeof res.off === 'function') res.off('close', stop);
  };
  timer = setInterval(() => {
    if (res.writableEnded || res.destroyed) return stop();
    let line;
    try {
      line = emitter.heartbeat();
    } catch {
      return stop(); // disposed emitter
    }
    write(line);
  }, intervalMs);
  if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
  if (typeof res.on === 'function') res.on('close', stop);
  return stop;
}
