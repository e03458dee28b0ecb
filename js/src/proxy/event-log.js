// What one run's stream has sent, for Last-Event-ID resumption: the framed
// bytes of each event in order, with the state position a client holds once
// it has received that event. Bounded by the proxy (registry.js trims the
// oldest entries); a resume from before the oldest one is told so.

/** One sent event: n (its number in the stream), text (framed), bytes, seq, state, terminal, started. */
export class LogEntry {
  constructor(n, text, seq, state, terminal, started = false) {
    this.n = n;
    this.text = text;
    this.bytes = Buffer.byteLength(text);
    this.seq = seq; // the seq a client holds after this event (null: no position yet)
    this.state = state; // a STATE_SNAPSHOT / STATE_DELTA the proxy stamped
    this.terminal = terminal; // RUN_FINISHED / RUN_ERROR
    this.started = started; // the run's first RUN_STARTED
  }
}

export class EventLog {
  #entries = [];
  #head = 0; // entries before it were trimmed (compacted now and then)
  #bytes = 0;
  #lastN = 0;
  #trimmedSeq = null; // seq of the newest trimmed entry

  /** Bytes of the entries held. */
  get bytes() {
    return this.#bytes;
  }

  /** Number of the last event appended (0: none yet). */
  get lastN() {
    return this.#lastN;
  }

  /** Number of the oldest event still held (lastN + 1 when none is). */
  get firstN() {
    return this.#head < this.#entries.length ? this.#entries[this.#head].n : this.#lastN + 1;
  }

  /** Entries held. */
  get size() {
    return this.#entries.length - this.#head;
  }

  /**
   * A log that begins after event n: the seq a client held after it was `seq`
   * (a run's log read from the store after its oldest events were trimmed there).
   */
  startAfter(n, seq) {
    if (this.size > 0 || this.#lastN > 0) return;
    this.#lastN = n;
    this.#trimmedSeq = seq;
  }

  append(entry) {
    this.#entries.push(entry);
    this.#bytes += entry.bytes;
    this.#lastN = entry.n;
  }

  /** The newest entry, or null. */
  last() {
    return this.size > 0 ? this.#entries[this.#entries.length - 1] : null;
  }

  /**
   * The entries after event `n`, oldest first; null when some of them were
   * trimmed already (the resume cannot be exact).
   */
  after(n) {
    if (n + 1 < this.firstN) return null;
    return this.#entries.slice(this.#head + (n + 1 - this.firstN));
  }

  /** Every entry held, oldest first. */
  all() {
    return this.#entries.slice(this.#head);
  }

  /**
   * The seq a client holds after event `n`: null before any position, and
   * undefined when that cannot be known any more (n trimmed, or never sent).
   */
  seqAt(n) {
    if (n === 0) return null;
    if (n > this.#lastN) return undefined;
    if (n < this.firstN) return n === this.firstN - 1 ? this.#trimmedSeq : undefined;
    return this.#entries[this.#head + (n - this.firstN)].seq;
  }

  /** Drops the oldest entry; returns its bytes (0 when empty). */
  trimOldest() {
    if (this.size === 0) return 0;
    const entry = this.#entries[this.#head];
    this.#entries[this.#head++] = undefined;
    this.#bytes -= entry.bytes;
    this.#trimmedSeq = entry.seq;
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    return entry.bytes;
  }

  /** Drops everything; returns the bytes freed. */
  clear() {
    const freed = this.#bytes;
    while (this.size > 0) this.trimOldest();
    return freed;
  }
}
