// verifyApproval: the agent's check of an approval from sync.guard against its
// own state, or, for an approval of an activity's content (it has a messageId),
// against its own content of that activity (judgeApproval in the core, via
// SyncFacade::verify). This file only fetches the documents the core judges.
import { loadedEngineLink } from '../engine/init-engine.js';

/**
 * The agent's content of the activity `approval` names, as the core reads it:
 * `{"<messageId>": content}` JSON text, or '' when the approval names none or
 * the agent holds none (the core then refuses it: never judged by the state).
 * `activities` is emitter.activities (anything with content(messageId)) or a
 * plain { messageId: content } object. Never throws.
 */
export function namedActivityText(approval, activities) {
  try {
    const messageId = approval?.messageId;
    if (typeof messageId !== 'string' || activities === null || typeof activities !== 'object') return '';
    const content = typeof activities.content === 'function'
      ? activities.content(messageId)
      : Object.hasOwn(activities, messageId) ? activities[messageId] : undefined;
    const text = content === undefined ? undefined : JSON.stringify(content);
    return text === undefined ? '' : `{${JSON.stringify(messageId)}:${text}}`;
  } catch {
    return '';
  }
}

/**
 * What an agent calls before acting on an approval: true only if its own state
 * at approval.path has exactly approval.digest; for an approval with a
 * messageId, its content of that activity (options.activities: emitter.activities
 * or { messageId: content }; without it, or without that activity: false).
 * Malformed input of any kind is false, never an exception (only a missing
 * engine throws).
 */
export function verifyApproval(approval, agentState, options) {
  const link = loadedEngineLink();
  let approvalText;
  let stateText;
  try {
    if (approval === null || typeof approval !== 'object') return false;
    const { path, digest, messageId } = approval; // getters may throw: still just `false`
    if (typeof path !== 'string' || typeof digest !== 'string') return false;
    approvalText = JSON.stringify({ path, digest, messageId });
    stateText = JSON.stringify(agentState);
  } catch {
    return false;
  }
  if (stateText === undefined) stateText = ''; // no state (the core's reading): an activity's approval may still verify
  const activitiesText = namedActivityText(approval, options?.activities);
  return link.invoke((engine) => engine.verify(approvalText, stateText, activitiesText)) === true;
}
