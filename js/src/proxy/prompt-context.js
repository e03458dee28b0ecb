// The proxy's promptContext option: the thread's state, rendered prompt-safe
// (renderStateForPrompt, docs/prompt-rendering.md), as one RunAgentInput.context
// entry { description, value } in the run forwarded upstream. Integrations
// already place context entries into the model's prompt, so a backend that
// pastes raw state today gets the escaped, size-capped, user-marked block
// without a change to it.
import { syncError, syncTypeError } from '../engine/errors.js';
import { kRenderPrompt } from '../engine/internals.js';
import { promptOptionsJson, renderPromptText } from '../server/prompt.js';

const WHAT = 'createStateSyncProxy() option promptContext';

/**
 * The option checked once (types; the engine checks the rest at the first
 * run): null when absent, else { description, optionsJson }. `true` renders
 * with the defaults. Without a description, each entry's is the render's own
 * preamble line (the core's: what the block is, that it is data).
 */
export function promptContextOption(value) {
  if (value === undefined || value === false) return null;
  const options = value === true ? {} : value;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw syncTypeError('invalid-options', `${WHAT} must be true or an object of render options and a description`);
  }
  const { description, ...render } = options;
  if (description !== undefined && (typeof description !== 'string' || description === '')) {
    throw syncTypeError('invalid-options', `${WHAT}.description must be a non-empty string`);
  }
  const optionsJson = promptOptionsJson(render, WHAT);
  return Object.freeze({ description: description ?? null, optionsJson });
}

/**
 * `input` (the RunAgentInput forwarded upstream) with the rendered `state`
 * appended to its context. `emitter`: the thread's, when `state` is its state;
 * a plain one renders it where it is (no JSON text of it crosses). Throws an AguiSyncError carrying the HTTP status to
 * answer: 400 for a context that is not an array or a state nested too deep to
 * render, 500 for render options the engine refuses (a proxy misconfiguration).
 */
export function withPromptContext(option, input, state, emitter = null) {
  if (option === null) return input;
  const context = input.context ?? [];
  if (!Array.isArray(context)) {
    throw syncError('invalid-request', 'RunAgentInput.context must be an array', { status: 400 });
  }
  let text, preamble;
  try {
    ({ text, preamble } = typeof emitter?.[kRenderPrompt] === 'function'
      ? emitter[kRenderPrompt](option.optionsJson, WHAT)
      : renderPromptText(state ?? null, option.optionsJson, WHAT));
  } catch (error) {
    // Only a state too deep to render is the client's doing; anything else (options
    // the engine refuses, an engine failure) is the proxy's: a 500, reported.
    if (error.code !== 'limit-exceeded') throw error;
    throw syncError('limit-exceeded', 'RunAgentInput.state nests too deep to render', { status: 400, cause: error });
  }
  return { ...input, context: [...context, { description: option.description ?? preamble, value: text }] };
}
