// renderStateForPrompt: shared state as one escaped, size-capped data block for
// an LLM prompt, rendered by the C++ core (renderPromptJson,
// src/facade/prompt_facade.h) so that the browser, Node, the proxy and a C++
// agent produce the same bytes. Synchronous: it needs a loaded engine
// (init-engine.js). docs/prompt-rendering.md has the format.
import { failureError, syncError, syncTypeError } from '../engine/errors.js';
import { serverEngineLink } from '../engine/init-engine.js';

// userWritten: the pointers client edits wrote (emitter.provenance()), read with untrusted: 'auto'.
const POINTER_LISTS = ['include', 'exclude', 'userWritten'];
const LIMITS = ['maxBytes', 'maxStringBytes', 'maxArrayItems', 'maxDepth'];
const STRINGS = ['datamark', 'tag'];
const OWNERS = new Set(['user', 'agent', 'shared']);
/** Every option renderStateForPrompt takes. */
export const PROMPT_OPTIONS = Object.freeze([...POINTER_LISTS, 'untrusted', 'ownership', ...LIMITS, ...STRINGS]);

function optionError(what, message) {
  return syncTypeError('invalid-options', `${what}: ${message}`);
}

function isStringArray(value) {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function checkOwnership(value, what) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw optionError(what, 'option ownership must be an object from JSON Pointers to owners');
  }
  for (const [pointer, owner] of Object.entries(value)) {
    if (!OWNERS.has(owner)) throw optionError(what, `ownership[${JSON.stringify(pointer)}] must be 'user', 'agent' or 'shared'`);
  }
}

// One option's type; the engine checks the rest (pointer syntax, tag, datamark,
// ranges, maxBytes against the tag) and answers 'invalid-options' as data.
function checkOption(name, value, what) {
  if (POINTER_LISTS.includes(name) && !isStringArray(value)) {
    throw optionError(what, `option ${name} must be an array of JSON Pointers`);
  }
  if (name === 'untrusted' && value !== 'auto' && !isStringArray(value)) {
    throw optionError(what, "option untrusted must be an array of JSON Pointers or 'auto'");
  }
  if (name === 'ownership') checkOwnership(value, what);
  if (LIMITS.includes(name) && !(Number.isSafeInteger(value) && value > 0)) {
    throw optionError(what, `option ${name} must be a positive integer`);
  }
  if (STRINGS.includes(name) && typeof value !== 'string') throw optionError(what, `option ${name} must be a string`);
}

/**
 * The options as the engine's JSON text, checked for type (an AguiSyncError
 * 'invalid-options', also a TypeError, for an unknown key or a wrong type).
 * Undefined values mean the default. `what` names the caller in messages.
 */
export function promptOptionsJson(options, what = 'renderStateForPrompt') {
  if (options === undefined || options === null) return '';
  if (typeof options !== 'object' || Array.isArray(options)) throw optionError(what, 'options must be an object');
  const picked = {};
  for (const [name, value] of Object.entries(options)) {
    if (!PROMPT_OPTIONS.includes(name)) throw optionError(what, `unknown option ${JSON.stringify(name)}`);
    if (value === undefined) continue;
    checkOption(name, value, what);
    picked[name] = value;
  }
  for (const name of ['ownership', 'userWritten']) {
    if (picked[name] !== undefined && picked.untrusted !== 'auto') {
      throw optionError(what, `option ${name} is read only with untrusted: 'auto'`);
    }
  }
  return JSON.stringify(picked);
}

// JSON.stringify writes a lone surrogate as a \udXXX escape (and never escapes a
// paired one), which the engine's strict reader refuses. A prompt must not fail
// because a user's text was cut inside an emoji: each becomes U+FFFD, as
// TextEncoder does. An odd run of backslashes is what makes the escape real.
const SURROGATE_ESCAPE = /(\\+)u(d[89a-f][0-9a-f]{2})/g;

function wellFormedJson(text) {
  if (!text.includes('\\ud')) return text;
  return text.replace(SURROGATE_ESCAPE, (match, slashes) => (slashes.length % 2 ? `${slashes.slice(1)}\\ufffd` : match));
}

/**
 * The state's JSON text as JSON.stringify writes it (NaN, Infinity: null), lone
 * surrogates as U+FFFD. What JSON cannot represent is 'invalid-argument'.
 */
function stateJson(state, what) {
  let text;
  try {
    text = JSON.stringify(state);
  } catch (thrown) {
    // A RangeError is JSON.stringify running out of stack: nesting, like the engine's own limit.
    if (thrown instanceof RangeError) throw syncError('limit-exceeded', `${what}: the state nests too deep to serialize`);
    throw syncTypeError('invalid-argument', `${what}: the state is not JSON-serializable (${thrown?.message ?? thrown})`);
  }
  if (text === undefined) throw syncTypeError('invalid-argument', `${what}: JSON cannot represent ${typeof state}`);
  return wellFormedJson(text);
}

// The engine names its own function in messages; the caller's name replaces it.
const ENGINE_PREFIX = /^(?:renderStateForPrompt|renderPromptJson): /;

/**
 * renderStateForPrompt with options already turned into JSON text by
 * promptOptionsJson (the proxy checks its options once, at creation).
 */
export function renderPromptText(state, optionsJson, what = 'renderStateForPrompt') {
  const link = serverEngineLink('renderPromptInput', what);
  const stateText = stateJson(state, what);
  return renderedParts(link, link.invoke((engine) => engine.renderPrompt(stateText, optionsJson)), what);
}

/**
 * The core's render answer (its result's one line of JSON, '\n', then the
 * text as it is: prompt_facade.h renderPromptParts), read through `link`:
 * { text, bytes, truncated, untrustedPaths, preamble }, or the refusal thrown.
 */
export function renderedParts(link, parts, what) {
  const newline = parts.indexOf('\n'); // the text follows the result's one line of JSON
  const result = link.parse(newline < 0 ? parts : parts.slice(0, newline));
  if (result.ok) {
    const { bytes, truncated, untrustedPaths, preamble } = result;
    return { text: parts.slice(newline + 1), bytes, truncated, untrustedPaths, preamble };
  }
  const message = result.message.replace(ENGINE_PREFIX, '');
  if (result.code === 'invalid-options') throw syncTypeError('invalid-options', `${what}: ${message}`);
  if (result.code === 'limit-exceeded') throw syncError('limit-exceeded', `${what}: the state ${message}`);
  throw failureError(result, 'engine-failed', `${what}: ${message}`);
}

/**
 * The state as one prompt-safe data block: { text, bytes, truncated:
 * [{ path, reason, droppedBytes }], untrustedPaths }. Synchronous; needs the
 * server engine (await initServerEngine(), or a StateEmitter created first):
 * no browser renders prompts, so the browser engine does not carry it. Throws an AguiSyncError:
 * 'invalid-options' (a TypeError) for a bad option, 'invalid-argument' for a
 * state JSON cannot represent, 'limit-exceeded' for one nested deeper than 512
 * (or too deep for JSON.stringify's stack).
 */
export function renderStateForPrompt(state, options) {
  const { preamble, ...rendered } = renderPromptText(state, promptOptionsJson(options));
  return rendered;
}

/**
 * The state as a lower-trust chat message for the agent's model: { role:
 * 'user', content }, a one-line preamble that says the block is data, then the
 * block of renderStateForPrompt(state, options). Use it instead of pasting
 * JSON.stringify(state) into a system prompt. (An AG-UI Message also needs an
 * id.) Synchronous; needs the server engine (await initServerEngine()).
 * Throws what renderStateForPrompt throws.
 */
export function promptMessage(state, options) {
  return messageOf(renderPromptText(state, promptOptionsJson(options, 'promptMessage'), 'promptMessage'));
}

/** The message of a render: the preamble (what the block is, that it is data, what its markers mean), then the block; both the core's. */
export function messageOf({ text, preamble }) {
  return { role: 'user', content: `${preamble}\n${text}` };
}
