#pragma once
// How a rebase goes on the thread as it is when the write is carried out
// (issue 40: no store-bound writer takes back another writer's commit). A
// rebase is the agent's own change, measured from a state it started from;
// by the time it is applied, other writers may have removed or created
// members. Each op then goes on member by member, so that the rest of the
// thread stands, instead of the try failing over to the agent's whole state.
#include <nlohmann/json.hpp>

namespace agui_sync {

// `ops` (a rebase: UpstreamCursor::rebaseOps) as they apply to `state` now,
// `agent` being the agent's whole state after them:
//  - a replace of a member the thread no longer holds becomes an add (the
//    agent's change sets it again); a remove of one already gone is dropped;
//  - an op inside a container another writer removed sets that container
//    again, as the agent holds it (once; the ops under it are in it);
//  - each `carried` op (rebaseFromStarts: a member the agent holds as one of
//    its starts did, not its change) goes in, as an add, only where the member
//    is missing under an object: another writer's value there stands.
// O(ops x depth).
nlohmann::json fitRebase(const nlohmann::json& state, const nlohmann::json& ops, const nlohmann::json* carried,
                         const nlohmann::json& agent);

}  // namespace agui_sync
