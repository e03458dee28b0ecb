// The reference handler, as in the AG-UI state-management docs: parse the SSE
// stream (split on blank lines, JSON.parse each `data:`), replace the state on
// STATE_SNAPSHOT, and on STATE_DELTA call
//   applyPatch(state, event.delta, true, false)
// keeping `newDocument`. A patch that fails is logged and dropped. There is no
// sequencing, no gap detection and no resync: that is the point of the demo.
//
// setState() is @ag-ui/client's: it replaces the state the UI shows, while the
// run goes on applying events to the copy it took when it started (its
// defaultApplyEvents clones input.state once), so the next state event
// replaces the user's edit without a word. A new runId starts from what is
// shown, as the next runAgent() would.
//
// Activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA) as @ag-ui/client
// 1.0 applies them: a snapshot sets the content (unless `replace: false` on
// one it has); a delta for a messageId it does not know is dropped without a
// word; a delta whose patch fails is dropped with a console.warn, and the old
// content stays on screen.
import { applyPatch } from 'fast-json-patch';

export function createReferenceHandler({ now = () => Date.now() } = {}) {
  let state = {}; // what the UI shows (agent.state)
  let runState = {}; // what the current run applies events to
  let runId = null;
  let decoder = new TextDecoder();
  let buffer = '';
  let version = 0;
  let activities = {}; // messageId -> { messageId, activityType, content }: a new object per change
  const subs = new Set();
  const log = [];
  const logSubs = new Set();

  const notify = () => { version++; for (const f of subs) f(); };
  const addLog = (entry) => { log.push({ t: now(), ...entry }); if (log.length > 200) log.shift(); for (const f of logSubs) f(); };

  function onEvent(event) {
    switch (event.type) {
      case 'RUN_STARTED':
        if (event.runId !== runId) { runId = event.runId; runState = state; }
        break;
      case 'STATE_SNAPSHOT':
        state = runState = event.snapshot;
        notify();
        break;
      case 'ACTIVITY_SNAPSHOT':
      case 'ACTIVITY_DELTA':
        onActivity(event);
        break;
      case 'STATE_DELTA':
        try {
          state = runState = applyPatch(runState, event.delta, true, false).newDocument;
          notify();
        } catch (error) {
          console.warn('Failed to apply state patch:', error);
          addLog({ kind: 'patch-failed', text: `patch dropped: ${error.name || 'error'} at ${error.operation ? error.operation.path : '?'}` });
        }
        break;
      default:
        break;
    }
  }

  function onActivity(event) {
    const held = activities[event.messageId];
    let content;
    if (event.type === 'ACTIVITY_SNAPSHOT') {
      if (held && event.replace === false) return;
      content = event.content;
    } else {
      if (!held) return; // unknown messageId: silently dropped
      try {
        content = applyPatch(held.content, event.patch, true, false).newDocument;
      } catch (error) {
        console.warn(`Failed to apply activity patch for '${event.messageId}':`, error);
        addLog({ kind: 'patch-failed', text: `activity ${event.messageId}: patch dropped (${error.name || 'error'} at ${error.operation ? error.operation.path : '?'}), old content kept` });
        return;
      }
    }
    activities = { ...activities, [event.messageId]: { messageId: event.messageId, activityType: event.activityType, content } };
    notify();
  }

  function onBlock(block) {
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
    if (!data.length) return;
    let event;
    try { event = JSON.parse(data.join('\n')); } catch (error) {
      console.warn('Failed to parse event:', error);
      addLog({ kind: 'parse-error', text: 'unparsable event dropped' });
      return;
    }
    onEvent(event);
  }

  return {
    // A new HTTP response starts: a fresh parser, the same state.
    newConnection() { decoder = new TextDecoder(); buffer = ''; },
    feed(chunk) {
      buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      buffer = buffer.replace(/\r\n?/g, '\n');
      let i;
      while ((i = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        onBlock(block);
      }
    },
    setState(next) { state = next; notify(); },
    reset() { state = runState = {}; activities = {}; runId = null; buffer = ''; decoder = new TextDecoder(); log.length = 0; notify(); },
    get state() { return state; },
    get version() { return version; },
    get activities() { return activities; },
    get log() { return log; },
    subscribe(fn) { subs.add(fn); return () => subs.delete(fn); },
    subscribeLog(fn) { logSubs.add(fn); return () => logSubs.delete(fn); },
  };
}
