// The log as text: JSON Lines. The first line is the header {"aguiLog":1};
// every further line is one AG-UI event as JSON. Appending an event to a log
// file is writing serializeLogEvent(event): nothing before it has to change.
//
// Readers are strict, because a log that parses "mostly" replays wrong: a line
// that is not JSON or not an event is an error naming its line. The
// leniencies are for what writers really produce: blank lines are skipped, a
// header line repeated later (a writer that restarts and writes the header
// again) is skipped, and so is a byte order mark before the header. A last
// line without its newline that does not parse is a torn append (the writer
// died mid-line): an error unless { dropTornTail: true }.
import { describeThrown } from '../engine/errors.js';
import { argumentError, checkEvent, checkEventArray, logError } from './log-error.js';

/** The format version this module writes and the newest it reads. */
export const LOG_VERSION = 1;
const HEADER_KEY = 'aguiLog';

/** The header line, newline included. */
export function serializeLogHeader() {
  return `{"${HEADER_KEY}":${LOG_VERSION}}\n`;
}

/** One event as a log line, newline included (append it to a log file). */
export function serializeLogEvent(event, index = 0) {
  checkEvent(event, index);
  let text;
  try {
    text = JSON.stringify(event);
  } catch (thrown) {
    throw logError('invalid-event', `event ${index}: not JSON-serializable (${describeThrown(thrown)})`, { index });
  }
  // JSON.stringify escapes U+000A inside strings, so one event is always one line.
  return `${text}\n`;
}

/** A whole log: the header, then one line per event. */
export function serializeLog(events) {
  checkEventArray(events);
  const lines = new Array(events.length + 1);
  lines[0] = serializeLogHeader();
  for (let i = 0; i < events.length; i++) lines[i + 1] = serializeLogEvent(events[i], i);
  return lines.join('');
}

// Parses one line. Returns the event, or null for a line that carries none
// (blank, a repeated header). `torn`: the line is the text's last and had no
// newline, so a parse failure there may be dropped.
class LineReader {
  #line = 0;
  #sawHeader = false;
  #dropTornTail;

  constructor(options) {
    this.#dropTornTail = Boolean(options?.dropTornTail);
  }

  /** The number the next line will have. */
  get nextLine() {
    return this.#line + 1;
  }

  read(raw, torn) {
    const line = ++this.#line;
    let text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === 1 && text.startsWith('\uFEFF')) text = text.slice(1); // a byte order mark some editors add
    if (text.trim() === '') return null;
    let value;
    try {
      value = JSON.parse(text);
    } catch (thrown) {
      if (torn && this.#dropTornTail) return null;
      throw logError('invalid-json', `line ${line}: not JSON (${describeThrown(thrown)})`, { line });
    }
    if (!this.#sawHeader) {
      this.#checkHeader(value, line);
      this.#sawHeader = true;
      return null;
    }
    if (isHeader(value)) return null;
    if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof value.type !== 'string' || value.type === '') {
      throw logError('invalid-event', `line ${line}: not an AG-UI event (an object with a "type")`, { line });
    }
    return value;
  }

  /** Called once the input ended. */
  finish() {
    if (!this.#sawHeader) throw logError('invalid-event', 'empty log: no {"aguiLog":1} header line', { line: 1 });
  }

  #checkHeader(value, line) {
    if (!isHeader(value)) {
      throw logError('invalid-event', `line ${line}: expected the header {"${HEADER_KEY}":${LOG_VERSION}}`, { line });
    }
    const version = value[HEADER_KEY];
    if (!Number.isInteger(version) || version < 1 || version > LOG_VERSION) {
      throw logError('invalid-event', `line ${line}: log version ${JSON.stringify(version)} is not one this reader knows (1..${LOG_VERSION})`, { line });
    }
  }
}

function isHeader(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, HEADER_KEY);
}

/** Every event of a whole log text. Options: { dropTornTail }. */
export function parseLog(text, options) {
  if (typeof text !== 'string') throw argumentError('parseLog() takes a string (parseLogStream() reads bytes and streams)');
  const reader = new LineReader(options);
  const events = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const last = end === -1;
    const event = reader.read(text.slice(start, last ? text.length : end), last);
    if (event !== null) events.push(event);
    start = last ? text.length : end + 1;
  }
  reader.finish();
  return events;
}

// The chunks of `source`: an async iterable (a Node Readable, an async
// generator), a web ReadableStream (through its reader where it is not async
// iterable), or a sync iterable of chunks.
async function* chunksOf(source) {
  if (typeof source === 'string') {
    yield source;
  } else if (source !== null && typeof source?.[Symbol.asyncIterator] === 'function') {
    yield* source;
  } else if (source !== null && typeof source?.getReader === 'function') {
    const reader = source.getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) yield next.value;
    } finally {
      reader.releaseLock();
    }
  } else if (source !== null && typeof source?.[Symbol.iterator] === 'function') {
    yield* source;
  } else {
    throw argumentError('parseLogStream() takes an async iterable, a ReadableStream or an iterable of string or byte chunks');
  }
}

// ignoreBOM: each line is decoded on its own, and only line 1 may start with a BOM (LineReader).
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function bytesOf(chunk) {
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw argumentError('parseLogStream(): a chunk must be a string or bytes');
}

// The text of one line from its pieces (strings, or bytes: decoded as one
// run, since a UTF-8 sequence may span two chunks). Splitting bytes at 0x0A
// first is safe: that byte never occurs inside a multi-byte sequence.
function lineText(pieces, line) {
  if (pieces.every((piece) => typeof piece === 'string')) return pieces.join('');
  let text = '';
  let bytes = [];
  const flush = () => {
    if (bytes.length === 0) return;
    const joined = bytes.length === 1 ? bytes[0] : concatBytes(bytes);
    bytes = [];
    try {
      text += decoder.decode(joined);
    } catch (thrown) {
      throw logError('invalid-json', `line ${line}: not UTF-8 (${describeThrown(thrown)})`, { line });
    }
  };
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      flush();
      text += piece;
    } else bytes.push(piece);
  }
  flush();
  return text;
}

function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

// The complete lines a chunk ends, as arrays of pieces; `pending` holds the
// pieces of the line still open (it is updated in place).
function* endedLines(chunk, pending) {
  const text = typeof chunk === 'string';
  const data = text ? chunk : bytesOf(chunk);
  let start = 0;
  for (let end = data.indexOf(text ? '\n' : 0x0a); end !== -1; end = data.indexOf(text ? '\n' : 0x0a, start)) {
    pending.push(data.slice(start, end));
    yield pending.splice(0);
    start = end + 1;
  }
  if (start < data.length) pending.push(data.slice(start));
}

/**
 * The events of a log arriving in chunks, one at a time, as the lines
 * complete (memory: one line). Options: { dropTornTail }.
 */
export async function* parseLogStream(source, options) {
  const reader = new LineReader(options);
  const pending = [];
  for await (const chunk of chunksOf(source)) {
    for (const pieces of endedLines(chunk, pending)) {
      const event = reader.read(lineText(pieces, reader.nextLine), false);
      if (event !== null) yield event;
    }
  }
  if (pending.length > 0) {
    const event = tornTail(reader, pending, options);
    if (event !== null) yield event;
  }
  reader.finish();
}

// The last line had no newline: an event, or null when it is a torn append that may be dropped.
function tornTail(reader, pieces, options) {
  let text;
  try {
    text = lineText(pieces, reader.nextLine);
  } catch (error) {
    if (options?.dropTornTail) return null; // it ended inside a UTF-8 sequence
    throw error;
  }
  return reader.read(text, true);
}
