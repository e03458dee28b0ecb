// Compaction of streamed text and tool-call arguments, as @ag-ui/client's
// compactEvents does it where that is right: the TEXT_MESSAGE_CONTENT events
// of one message become one event with the deltas joined, and so do the
// TOOL_CALL_ARGS of one tool call.
//
// Unlike @ag-ui/client, nothing is moved: the merged event takes the place of
// the first one it replaces, and every other event keeps its order (moving
// events after TEXT_MESSAGE_END reorders a MESSAGES_SNAPSHOT, a run boundary
// or a chunk of the same message, which changes what a replay shows). A merge
// never crosses what could observe the partial text:
//  - a run boundary or MESSAGES_SNAPSHOT ends every merge;
//  - START / END / *_CHUNK of the same message or tool call ends its merge;
//  - a delta whose other fields (metadata, subagentRunId, ...) differ from the
//    merge's first event starts a new merge, so no field is lost or invented.
// Per-chunk `timestamp` and `rawEvent` describe one chunk only: the merged
// event keeps the first chunk's timestamp and drops rawEvent.

const STREAMS = [
  { content: 'TEXT_MESSAGE_CONTENT', id: 'messageId', closers: ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_END', 'TEXT_MESSAGE_CHUNK'] },
  { content: 'TOOL_CALL_ARGS', id: 'toolCallId', closers: ['TOOL_CALL_START', 'TOOL_CALL_END', 'TOOL_CALL_CHUNK'] },
];
const BARRIERS = new Set(['RUN_STARTED', 'RUN_FINISHED', 'RUN_ERROR', 'MESSAGES_SNAPSHOT']);
const PER_CHUNK = new Set(['type', 'delta', 'timestamp', 'rawEvent']);

// The fields that must agree for two deltas to merge, as one string ('' for
// none: the common case costs no stringify).
function mergeKey(event, idField) {
  let rest = null;
  for (const key of Object.keys(event)) {
    if (PER_CHUNK.has(key) || key === idField) continue;
    (rest ??= {})[key] = event[key];
  }
  return rest === null ? '' : JSON.stringify(rest);
}

export class StreamMerger {
  #out;
  #open = STREAMS.map(() => new Map()); // per stream: id -> { index, key, parts }
  #closers = new Map(); // event type -> stream index

  /** Merged events are written into `out` (the caller's output array). */
  constructor(out) {
    this.#out = out;
    STREAMS.forEach((stream, s) => stream.closers.forEach((type) => this.#closers.set(type, s)));
  }

  /** Takes one event (not a state event) in log order. */
  push(event) {
    const { type } = event;
    if (BARRIERS.has(type)) this.closeAll();
    else if (this.#closers.has(type)) this.#closeFor(this.#closers.get(type), event);
    else {
      const s = type === STREAMS[0].content ? 0 : type === STREAMS[1].content ? 1 : -1;
      if (s !== -1 && this.#merge(s, event)) return;
    }
    this.#out.push(event);
  }

  // Adds `event` to its open merge (true), or opens one at the event's place (false).
  #merge(s, event) {
    const id = event[STREAMS[s].id];
    if (typeof id !== 'string') return false;
    const open = this.#open[s];
    if (typeof event.delta !== 'string') {
      // Not mergeable: later deltas of the id must not merge across it either.
      if (open.has(id)) this.#close(s, id, open.get(id));
      return false;
    }
    const key = mergeKey(event, STREAMS[s].id);
    const group = open.get(id);
    if (group !== undefined && group.key === key) {
      group.parts.push(event.delta);
      return true;
    }
    if (group !== undefined) this.#close(s, id, group);
    open.set(id, { index: this.#out.length, key, parts: [event.delta] });
    return false;
  }

  // A chunk without an id continues whichever stream is open: end them all.
  #closeFor(s, event) {
    const id = event[STREAMS[s].id];
    const open = this.#open[s];
    if (typeof id !== 'string') {
      for (const [key, group] of open) this.#close(s, key, group);
      return;
    }
    const group = open.get(id);
    if (group !== undefined) this.#close(s, id, group);
  }

  #close(s, id, group) {
    this.#open[s].delete(id);
    if (group.parts.length === 1) return;
    const { rawEvent, ...first } = this.#out[group.index];
    this.#out[group.index] = { ...first, delta: group.parts.join('') };
  }

  /** Ends every open merge (at a boundary, and at the end of the log). */
  closeAll() {
    this.#open.forEach((open, s) => {
      for (const [id, group] of open) this.#close(s, id, group);
    });
  }
}
