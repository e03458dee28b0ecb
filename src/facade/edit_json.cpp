#include "facade/edit_json.h"
#include "json/cold.h"

#include "json/json_measure.h"
#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

namespace {

std::optional<Failure> bad(std::string message) { return Failure{Code::InvalidOptions, std::move(message), {}}; }

json optionalSeq(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

AGUI_COLD std::optional<Failure> readEditPolicy(const json& options, EditPolicy& policy) {
  auto ownership = options.find("ownership");
  if (ownership != options.end() && !ownership->is_null()) {
    if (!ownership->is_object()) return bad("option 'ownership' must be an object of JSON Pointer -> owner");
    policy.ownership.clear();
    for (const auto& [path, owner] : ownership->items()) {
      const std::string* name = owner.is_string() ? owner.get_ptr<const std::string*>() : nullptr;
      if (!name || (*name != "agent" && *name != "user" && *name != "shared"))
        return bad("ownership of '" + path + "' must be 'agent', 'user' or 'shared'");
      const Owner who = *name == "agent" ? Owner::Agent : *name == "user" ? Owner::User : Owner::Shared;
      policy.ownership.push_back(OwnershipRule{path, who});
    }
  }
  auto onConflict = options.find("onConflict");
  if (onConflict != options.end() && !onConflict->is_null()) {
    if (*onConflict == "agent-wins") policy.onConflict = ConflictPolicy::AgentWins;
    else if (*onConflict == "user-wins") policy.onConflict = ConflictPolicy::UserWins;
    else return bad("option 'onConflict' must be 'agent-wins' or 'user-wins'");
  }
  return std::nullopt;
}

AGUI_COLD std::optional<Failure> readEditRequests(json edits, std::vector<EditRequest>& out) {
  auto invalid = [](size_t i, const char* what) {
    return Failure{Code::InvalidRequest, "edits[" + std::to_string(i) + "]: " + what, {}};
  };
  if (!edits.is_array()) return Failure{Code::InvalidRequest, "edits must be an array", {}};
  auto& list = *edits.get_ptr<json::array_t*>();
  for (size_t i = 0; i < list.size(); ++i) {
    json& e = list[i];
    if (!e.is_object()) return invalid(i, "not an object");
    auto id = e.find("editId");
    if (id == e.end() || !id->is_string() || id->get_ptr<const std::string*>()->empty())
      return invalid(i, "editId must be a non-empty string");
    EditRequest request;
    request.editId = *id->get_ptr<const std::string*>();
    auto base = e.find("baseSeq");
    if (base != e.end() && !base->is_null()) {
      if (!base->is_number_unsigned() || base->get<uint64_t>() > kMaxSeq) return invalid(i, "baseSeq must be a seq or null");
      request.baseSeq = base->get<uint64_t>();
    }
    auto ops = e.find("ops");
    if (ops == e.end()) return invalid(i, "ops is missing");
    request.ops = std::move(*ops);  // its shape is judged per edit (a rejection, not a failed call)
    out.push_back(std::move(request));
  }
  return std::nullopt;
}

namespace {

bool readOptionalSeq(const json& j, const char* key, std::optional<uint64_t>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number_unsigned() || it->get<uint64_t>() > kMaxSeq) return false;
  out = it->get<uint64_t>();
  return true;
}

bool readOptionalString(const json& j, const char* key, std::optional<std::string>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = *it->get_ptr<const std::string*>();
  return true;
}

}  // namespace

AGUI_COLD std::optional<Failure> readCheckpoint(json stored, const Options& limits, Checkpoint& out) {
  auto invalid = [](const char* what) { return Failure{Code::InvalidCheckpoint, std::string("checkpoint: ") + what, {}}; };
  if (!stored.is_object()) return invalid("not an object");
  auto state = stored.find("state");
  if (state == stored.end()) return invalid("no state");
  if (valueDepth(*state) > limits.maxDepth || rawSize(*state, limits.maxStateBytes) > limits.maxStateBytes)
    return Failure{Code::LimitExceeded, "checkpoint: the state is over maxDepth or maxStateBytes", {}};
  std::optional<std::string> clientId;
  if (!readOptionalSeq(stored, "lastSeq", out.lastSeq) || !readOptionalString(stored, "epoch", out.epoch) ||
      !readOptionalString(stored, "lastEventId", out.lastEventId) || !readOptionalString(stored, "clientId", clientId))
    return invalid("lastSeq, epoch, lastEventId or clientId has the wrong type");
  std::optional<uint64_t> counter;
  if (!readOptionalSeq(stored, "editCounter", counter)) return invalid("editCounter must be a count");
  std::vector<EditRequest> edits;
  auto list = stored.find("edits");
  if (list != stored.end() && !list->is_null() && readEditRequests(std::move(*list), edits))
    return invalid("edits must be [{editId, baseSeq, ops}]");
  out.clientId = clientId.value_or(std::string());
  out.editCounter = counter.value_or(0);
  for (EditRequest& e : edits) out.edits.push_back(PendingEdit{std::move(e.editId), e.baseSeq, std::move(e.ops), true});
  out.state = std::move(*state);
  return std::nullopt;
}

AGUI_COLD json pendingEditsJson(const std::vector<PendingEdit>& edits) {
  json out(json::value_t::array);
  for (const PendingEdit& e : edits)
    out.push_back({{"editId", e.editId}, {"baseSeq", optionalSeq(e.baseSeq)}, {"ops", e.ops}, {"applies", e.applies}});
  return out;
}

AGUI_COLD json editResultsJson(const std::vector<EditAck>& results) {
  json out(json::value_t::array);
  for (const EditAck& r : results) {
    json entry = {{"editId", r.editId}, {"status", r.applied ? "applied" : "rejected"}};
    if (!r.applied) entry["reason"] = codeName(r.reason);
    if (r.seq) entry["seq"] = *r.seq;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace agui_sync
