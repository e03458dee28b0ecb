// What a log says about messages and tool calls, by id, for comparing two
// logs: each message's role and full content, each tool call's name, parent
// message and full arguments. Text and arguments are kept as the list of
// their pieces and joined once, at the end (linear in the log).
//
// The whole log counts, every branch included (ids are unique in a thread).
// A MESSAGES_SNAPSHOT sets the messages it lists (and their tool calls); it
// does not delete others, since a branch's messages stay in the log.

function textOf(parts) {
  return parts.join('');
}

export class Transcript {
  #messages = new Map(); // id -> { role, parts, toolCallId? }
  #toolCalls = new Map(); // id -> { name, parentMessageId, parts }
  #lastChunkMessage = null;
  #lastChunkToolCall = null;

  /** Takes one event as the engine delivered it. */
  apply(event) {
    switch (event.type) {
      case 'TEXT_MESSAGE_START':
        return this.#message(event.messageId, event.role);
      case 'TEXT_MESSAGE_CONTENT':
        return this.#text(event.messageId, event.delta);
      case 'TEXT_MESSAGE_CHUNK':
        if (typeof event.messageId === 'string') this.#lastChunkMessage = event.messageId;
        return this.#text(this.#lastChunkMessage, event.delta, event.role);
      case 'TOOL_CALL_START':
        return this.#toolCall(event.toolCallId, event.toolCallName, event.parentMessageId);
      case 'TOOL_CALL_ARGS':
        return this.#args(event.toolCallId, event.delta);
      case 'TOOL_CALL_CHUNK':
        if (typeof event.toolCallId === 'string') this.#lastChunkToolCall = event.toolCallId;
        this.#toolCall(this.#lastChunkToolCall, event.toolCallName, event.parentMessageId);
        return this.#args(this.#lastChunkToolCall, event.delta);
      case 'TOOL_CALL_RESULT':
        return this.#set(event.messageId, { role: event.role ?? 'tool', parts: [JSON.stringify(event.content) ?? ''], toolCallId: event.toolCallId ?? null });
      case 'MESSAGES_SNAPSHOT':
        return this.#snapshot(event.messages);
      default:
    }
  }

  #set(id, message) {
    if (typeof id === 'string') this.#messages.set(id, message);
  }

  #message(id, role) {
    if (typeof id !== 'string') return;
    const message = this.#messages.get(id);
    if (message === undefined) this.#messages.set(id, { role: role ?? 'assistant', parts: [] });
    else if (role !== undefined) message.role = role;
  }

  #text(id, delta, role) {
    if (typeof id !== 'string') return;
    this.#message(id, role);
    if (typeof delta === 'string') this.#messages.get(id).parts.push(delta);
  }

  #toolCall(id, name, parentMessageId) {
    if (typeof id !== 'string') return;
    const call = this.#toolCalls.get(id);
    if (call === undefined) this.#toolCalls.set(id, { name: name ?? null, parentMessageId: parentMessageId ?? null, parts: [] });
    else {
      if (name !== undefined) call.name = name;
      if (parentMessageId !== undefined) call.parentMessageId = parentMessageId;
    }
  }

  #args(id, delta) {
    if (typeof id !== 'string' || typeof delta !== 'string') return;
    this.#toolCall(id);
    this.#toolCalls.get(id).parts.push(delta);
  }

  #snapshot(messages) {
    if (!Array.isArray(messages)) return;
    for (const m of messages) {
      if (m === null || typeof m !== 'object') continue;
      const content = typeof m.content === 'string' || m.content === undefined ? (m.content ?? '') : JSON.stringify(m.content);
      const message = { role: m.role, parts: [content] };
      if (m.role === 'tool') message.toolCallId = m.toolCallId ?? null;
      this.#set(m.id, message);
      for (const call of Array.isArray(m.toolCalls) ? m.toolCalls : []) {
        if (typeof call?.id !== 'string') continue;
        this.#toolCalls.set(call.id, { name: call.function?.name ?? null, parentMessageId: m.id, parts: [call.function?.arguments ?? ''] });
      }
    }
  }

  /** { messages: Map<id, { role, content, toolCallId? }>, toolCalls: Map<id, { name, parentMessageId, args }> } */
  result() {
    const messages = new Map();
    for (const [id, { parts, ...rest }] of this.#messages) messages.set(id, { ...rest, content: textOf(parts) });
    const toolCalls = new Map();
    for (const [id, { parts, ...rest }] of this.#toolCalls) toolCalls.set(id, { ...rest, args: textOf(parts) });
    return { messages, toolCalls };
  }
}
