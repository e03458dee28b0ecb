// verifyApproval: the agent's check of an approval from sync.guard against its
// own state (SyncFacade::verify: digest of the value at approval.path).
import { loadedEngineLink } from '../engine/init-engine.js';

/**
 * What an agent calls before acting on an approval: true only if its own state
 * at approval.path has exactly approval.digest. Malformed input of any kind is
 * false, never an exception (only a missing engine throws).
 */
export function verifyApproval(approval, agentState) {
  const link = loadedEngineLink();
  let approvalText;
  let stateText;
  try {
    if (approval === null || typeof approval !== 'object') return false;
    const { path, digest } = approval; // getters may throw: still just `false`
    if (typeof path !== 'string' || typeof digest !== 'string') return false;
    approvalText = JSON.stringify({ path, digest });
    stateText = JSON.stringify(agentState);
  } catch {
    return false;
  }
  if (stateText === undefined) return false;
  return link.invoke((engine) => engine.verify(approvalText, stateText)) === true;
}
