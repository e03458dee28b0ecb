// Type declarations for agui-state-sync/server (written by hand; see src/server.js).
import type { PromptRenderOptions, StateEmitter, StateEvent, StateSyncPosition } from './index.js';

export type CatchUpMode = 'current' | 'replay' | 'snapshot';

/** Header-carrying request: Node IncomingMessage, fetch Request, or a plain object. */
export interface RequestWithHeaders {
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null };
}

/** A RunAgentInput carrying forwardedProps.stateSync. */
export interface RunAgentInputWithPosition {
  forwardedProps?: { stateSync?: Partial<Record<'lastSeq' | 'epoch' | 'reason' | 'held', unknown>>; [key: string]: unknown };
  [key: string]: unknown;
}

export type CatchUpRequest = RequestWithHeaders | RunAgentInputWithPosition | null | undefined;

/** Reasons for which the server always answers with a snapshot. */
export const SNAPSHOT_REASONS: ReadonlySet<string>;
/** 'X-AGUI-State-Sync' */
export const HEADER_CATCH_UP: string;
/** 'X-AGUI-State-Held' (request): the seqs the client holds, "12,13,15". */
export const HEADER_HELD: string;
/** The most held seqs a request carries (64). */
export const MAX_HELD: number;
/** "12,13,15" or [12, 13, 15] -> valid seqs, ascending, unique, at most MAX_HELD; bad entries dropped, never throws. */
export function parseHeld(value: unknown): number[];
/** [15, 12, 13] -> "12,13,15" ("" when none is valid). */
export function formatHeld(held: readonly number[]): string;

/** Where the client says it is. */
export function readResyncRequest(request: CatchUpRequest): StateSyncPosition & { lastEventId: string | null };

/** What to send a (re)connecting client before live events. */
export function catchUp<S>(emitter: StateEmitter<S>, request: CatchUpRequest): { mode: CatchUpMode; events: StateEvent<S>[] };

/** Minimal writable response (Node http.ServerResponse fits). */
export interface SseResponse {
  write(chunk: string): unknown;
  setHeader?(name: string, value: string): unknown;
  readonly headersSent?: boolean;
  readonly writableEnded?: boolean;
  readonly destroyed?: boolean;
  on?(event: 'close', listener: () => void): unknown;
  off?(event: 'close', listener: () => void): unknown;
}

/** catchUp() written to `res` (sets X-AGUI-State-Sync if headers are not sent yet). */
export function writeCatchUp<S>(res: SseResponse, emitter: StateEmitter<S>, request: CatchUpRequest): { mode: CatchUpMode; events: StateEvent<S>[] };

/**
 * Writes a heartbeat every `intervalMs` (default 5000); returns stop().
 * `options.write` receives each line instead of `res.write` (for servers that queue writes).
 */
export function startHeartbeat(
  res: SseResponse,
  emitter: StateEmitter<any>,
  intervalMs?: number,
  options?: { write?: (line: string) => void },
): () => void;

/** A chat message for the agent's model (an AG-UI Message also needs an id). */
export interface PromptMessage {
  role: 'user';
  /** A one-line preamble saying the block is data, not instructions, then renderStateForPrompt's text. */
  content: string;
}

/**
 * The state as a lower-trust message: use it instead of pasting the state into a
 * system prompt. Synchronous; needs a loaded engine (await initEngine()).
 * Throws what renderStateForPrompt throws.
 */
export function promptMessage(state: unknown, options?: PromptRenderOptions): PromptMessage;
