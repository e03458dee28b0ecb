// Which SSE event carried which `id:`. The engine frames the stream and keeps
// the last event id (sync.lastEventId), but it reports outcomes per feed()
// call, and an event without an `id:` line inherits the previous id (WHATWG
// SSE): so lastEventId after a chunk of many events cannot say which of them
// carried an id. StateSyncHttpAgent needs exactly that to drop an event a
// reconnect delivers twice. This scanner finds only event boundaries (blank
// lines) and `id` field lines, and feeds every event that has an id line to
// the engine on its own, so that lastEventId right after that feed is that
// event's id. Everything else, the framing included, stays the engine's: a
// stream without ids is fed chunk by chunk as before, and a wrong guess here
// could only mislabel an id, never change what the engine applies.

const LF = 10;
const CR = 13;
const I = 0x69;
const D = 0x64;
const COLON = 0x3a;

// What the first bytes of the current line say about an `id` field.
const HEAD_START = 0; // nothing read yet
const HEAD_I = 1; // "i"
const HEAD_ID = 2; // "id" (an id line if the line ends here)
const HEAD_ID_COLON = 3; // "id:" (an id line)
const HEAD_OTHER = 4; // any other line

export class SseEventIds {
  #head = HEAD_START;
  #lineLength = 0;
  #afterCR = false; // the last byte was a CR: a following LF belongs to it
  #inEvent = false; // a non-blank line was seen since the last blank line
  #eventHasId = false;
  #ids = new WeakMap(); // outcome -> the SSE id of its event

  /** A new connection: the scanner starts at the beginning of a stream. */
  reset() {
    this.#head = HEAD_START;
    this.#lineLength = 0;
    this.#afterCR = false;
    this.#inEvent = false;
    this.#eventHasId = false;
  }

  /** The SSE id carried by the event an 'event' outcome came from, or null. */
  idOf(outcome) {
    return this.#ids.get(outcome) ?? null;
  }

  /** Feeds `bytes` to `sync`, each event that has an id line on its own; returns every outcome in order. */
  feed(sync, bytes) {
    const cuts = this.#scan(bytes);
    if (cuts.length === 0) return sync.feed(bytes);
    const outcomes = [];
    let from = 0;
    for (let i = 0; i < cuts.length; i += 2) {
      const start = cuts[i];
      const end = cuts[i + 1];
      if (start > from) outcomes.push(...sync.feed(bytes.subarray(from, start)));
      outcomes.push(...this.#feedEvent(sync, bytes.subarray(start, end)));
      from = end;
    }
    if (from < bytes.length) outcomes.push(...sync.feed(bytes.subarray(from)));
    return outcomes;
  }

  // Feeds one event that carried an id line and labels its outcomes with the
  // id the engine read from it ('' resets the id: no label).
  #feedEvent(sync, piece) {
    const outcomes = sync.feed(piece);
    const id = sync.lastEventId;
    if (typeof id !== 'string' || id === '') return outcomes;
    for (const outcome of outcomes) if (outcome.kind === 'event') this.#ids.set(outcome, id);
    return outcomes;
  }

  // [start, end, start, end, ...]: the byte ranges, within `bytes`, of the
  // events that end in this chunk and have an id line (start 0 when the event
  // began in an earlier chunk, which was then fed without dispatching it).
  #scan(bytes) {
    const cuts = [];
    const n = bytes.length;
    let eventStart = 0;
    let nextLF = -2; // cached positions of the next LF / CR at or after i (-1: none)
    let nextCR = -2;
    for (let i = 0; i < n;) {
      const byte = bytes[i];
      if (this.#afterCR) {
        this.#afterCR = false;
        if (byte === LF) {
          i++;
          continue;
        }
      }
      if (byte === LF || byte === CR) {
        this.#afterCR = byte === CR;
        if (this.#endLine() && this.#eventHasId) cuts.push(eventStart, i + 1);
        if (!this.#inEvent) this.#eventHasId = false;
        i++;
        continue;
      }
      if (!this.#inEvent) {
        this.#inEvent = true;
        eventStart = i;
      }
      if (this.#head <= HEAD_ID) {
        this.#readHead(byte);
        i++;
        continue;
      }
      // The rest of the line does not matter: jump to its end.
      if (nextLF !== -1 && nextLF < i) nextLF = bytes.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = bytes.indexOf(CR, i);
      const end = Math.min(nextLF === -1 ? n : nextLF, nextCR === -1 ? n : nextCR);
      this.#lineLength += end - i;
      i = end;
    }
    return cuts;
  }

  #readHead(byte) {
    this.#lineLength++;
    if (this.#head === HEAD_START) this.#head = byte === I ? HEAD_I : HEAD_OTHER;
    else if (this.#head === HEAD_I) this.#head = byte === D ? HEAD_ID : HEAD_OTHER;
    else this.#head = byte === COLON ? HEAD_ID_COLON : HEAD_OTHER; // after "id"
  }

  // A line ended. Returns true if it was the blank line that ends an event.
  #endLine() {
    const blank = this.#lineLength === 0;
    if (!blank && (this.#head === HEAD_ID || this.#head === HEAD_ID_COLON)) this.#eventHasId = true;
    this.#head = HEAD_START;
    this.#lineLength = 0;
    if (!blank || !this.#inEvent) return false;
    this.#inEvent = false;
    return true;
  }
}
