// The one way the tests wait for something to happen (issue 22, section 3):
// until the condition itself holds, never for a fixed time or a fixed count of
// event-loop turns, so that a slow or loaded machine only makes a test slower.
// The deadline only turns a hang into a failure that names what never came; it
// never decides a pass.
//
// The clock and the timer are taken when this module loads, so a test that
// mocks setTimeout, setImmediate or Date (node:test's mock.timers) can still wait here.
const { setTimeout: realSetTimeout, setImmediate: realSetImmediate } = globalThis;
const { now } = performance;
const clock = () => now.call(performance);

/** The default deadline: far beyond any healthy wait, even with both cores busy. */
export const DEADLINE_MS = 15000;

/**
 * Resolves once `condition()` (sync or async) returns a truthy value, with that
 * value; throws naming `what` (a string, or a function called then, to say
 * what was seen) if it has not within `ms`. Polls every event-loop
 * turn for the first few milliseconds (a digest on another thread, a pipe),
 * then every 5 ms of real time.
 */
export async function until(condition, what = 'the condition', ms = DEADLINE_MS) {
  const start = clock();
  for (;;) {
    const value = await condition();
    if (value) return value;
    const waited = clock() - start;
    if (waited > ms) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => (waited < 20 ? realSetImmediate(resolve) : realSetTimeout(resolve, 5)));
  }
}
