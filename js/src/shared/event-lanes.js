// AG-UI events that open, continue or close a lane: a text message, a tool
// call, a reasoning span or message, a step, a subagent. @ag-ui/client's
// verifyEvents refuses a continuation or a close whose lane was never opened
// (TEXT_MESSAGE_CONTENT without its TEXT_MESSAGE_START), so a stream that
// starts in the middle of a run (an attach after the run's log was trimmed)
// leaves those out, and a client whose run started over closes what was open.

const OPEN = 'open';
const CONTINUE = 'continue';
const CLOSE = 'close';

// Event type -> [lane, the field naming it, role].
const LANES = {
  TEXT_MESSAGE_START: ['text', 'messageId', OPEN],
  TEXT_MESSAGE_CONTENT: ['text', 'messageId', CONTINUE],
  TEXT_MESSAGE_END: ['text', 'messageId', CLOSE],
  TOOL_CALL_START: ['tool', 'toolCallId', OPEN],
  TOOL_CALL_ARGS: ['tool', 'toolCallId', CONTINUE],
  TOOL_CALL_END: ['tool', 'toolCallId', CLOSE],
  REASONING_START: ['reasoning', 'messageId', OPEN],
  REASONING_END: ['reasoning', 'messageId', CLOSE],
  REASONING_MESSAGE_START: ['reasoning-message', 'messageId', OPEN],
  REASONING_MESSAGE_CONTENT: ['reasoning-message', 'messageId', CONTINUE],
  REASONING_MESSAGE_END: ['reasoning-message', 'messageId', CLOSE],
  STEP_STARTED: ['step', 'stepName', OPEN],
  STEP_FINISHED: ['step', 'stepName', CLOSE],
  SUBAGENT_STARTED: ['subagent', 'subagentRunId', OPEN],
  SUBAGENT_FINISHED: ['subagent', 'subagentRunId', CLOSE],
  SUBAGENT_ERROR: ['subagent', 'subagentRunId', CLOSE],
};

/** { lane, field, key, role: 'open' | 'continue' | 'close' } for a lane event, else null. */
export function laneOf(event) {
  const entry = LANES[event?.type];
  if (!entry) return null;
  const [lane, field, role] = entry;
  // A step is named per owner: the same name may be open in the parent and in a subagent.
  const owner = lane === 'step' ? `\u0000${event.subagentRunId ?? ''}` : '';
  return { lane, field, key: `${lane} ${event[field]}${owner}`, role };
}

/** The lanes a stream has opened and not closed yet, in order: key -> the opener. */
export class OpenLanes {
  #open = new Map();

  /**
   * Notes `event`; false when it continues or closes a lane that is not open
   * (a stream that began after that lane's opener).
   */
  see(event) {
    const lane = laneOf(event);
    if (lane === null) return true;
    if (lane.role === OPEN) {
      this.#open.set(lane.key, event);
      return true;
    }
    if (!this.#open.has(lane.key)) return false;
    if (lane.role === CLOSE) this.#open.delete(lane.key);
    return true;
  }

  /** The openers of the lanes still open, oldest first. */
  openers() {
    return [...this.#open.values()];
  }

  /** Forgets an open lane. */
  close(key) {
    this.#open.delete(key);
  }

  clear() {
    this.#open.clear();
  }
}
