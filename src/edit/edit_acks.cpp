#include "edit/edit_acks.h"
#include "json/cold.h"

#include "wire/wire.h"

namespace agui_sync {

namespace {

bool readOne(const nlohmann::json& entry, EditAck& ack) {
  if (!entry.is_object()) return false;
  auto id = entry.find("editId");
  auto status = entry.find("status");
  if (id == entry.end() || !id->is_string() || status == entry.end() || !status->is_string()) return false;
  ack.editId = id->get<std::string>();
  const std::string& s = *status->get_ptr<const std::string*>();
  if (s == "applied") {
    ack.applied = true;
  } else if (s == "rejected") {
    ack.applied = false;
    auto reason = entry.find("reason");
    std::optional<Code> code;
    if (reason != entry.end() && reason->is_string()) code = codeFromName(*reason->get_ptr<const std::string*>());
    // An unknown reason from a newer sender is still a rejection.
    ack.reason = code && inCategory(*code, kEdit) ? *code : Code::PatchFailed;
  } else {
    return false;
  }
  auto seq = entry.find("seq");
  if (seq != entry.end() && seq->is_number_unsigned() && seq->get<uint64_t>() <= kMaxSeq) ack.seq = seq->get<uint64_t>();
  return true;
}

}  // namespace

AGUI_COLD void readAcks(const nlohmann::json& acks, std::vector<EditAck>& out) {
  if (!acks.is_array()) return;
  for (const nlohmann::json& entry : *acks.get_ptr<const nlohmann::json::array_t*>()) {
    if (out.size() >= kMaxAcksPerEvent) return;
    EditAck ack;
    if (readOne(entry, ack)) out.push_back(std::move(ack));
  }
}

AGUI_COLD nlohmann::json ackJson(const EditAck& ack, bool withSeq) {
  nlohmann::json j(nlohmann::json::value_t::object);
  auto& o = *j.get_ptr<nlohmann::json::object_t*>();
  o.emplace("editId", ack.editId);
  o.emplace("status", ack.applied ? "applied" : "rejected");
  if (!ack.applied) o.emplace("reason", codeName(ack.reason));
  if (withSeq && ack.seq) o.emplace("seq", *ack.seq);
  return j;
}

}  // namespace agui_sync
