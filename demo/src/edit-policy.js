// Who may write what (issue 14), one table for both sides: the page's
// createStateSync and the server's emitter.applyEdits must judge an edit alike.
//
// /budget/limit is *shared* with onConflict 'user-wins'. Shared, because the
// story is two writers on one field: the agent lowers the limit while the user
// is raising it, and only a shared path reports that as a conflict (a
// user-owned path would silently mask the agent's write until the ack). User
// wins, because a number the person typed on purpose is the decision of record
// for that field; the banner still shows the agent's value, so nothing is
// hidden. /proposal is agent-owned: a person approves it, never rewrites it.
export const EDIT_POLICY = Object.freeze({
  ownership: Object.freeze({ '/proposal': 'agent', '/budget/limit': 'shared' }),
  onConflict: 'user-wins',
});

export const LIMIT_PATH = '/budget/limit';

// The value the scripted agent writes there midway (script.mjs).
export const AGENT_LIMIT = 14000;
