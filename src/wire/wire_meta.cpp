#include "wire/wire_meta.h"

#include "wire/wire.h"

namespace agui_sync {

using nlohmann::json;

const json* wireFields(const json& event) {
  if (!event.is_object()) return nullptr;
  auto meta = event.find("metadata");
  if (meta == event.end() || !meta->is_object()) return nullptr;
  auto ours = meta->find(kWireKey);
  if (ours != meta->end() && ours->is_object()) return &*ours;
  return &*meta;  // version 1: the fields at the top of metadata
}

std::optional<uint64_t> wireSeq(const json& event) {
  const json* fields = wireFields(event);
  if (!fields) return std::nullopt;
  auto seq = fields->find("seq");
  if (seq == fields->end()) return std::nullopt;
  if (seq->is_number_unsigned()) {
    uint64_t v = seq->get<uint64_t>();
    return v <= kMaxSeq ? std::optional<uint64_t>(v) : std::nullopt;
  }
  if (seq->is_number_integer() && seq->get<int64_t>() >= 0 && static_cast<uint64_t>(seq->get<int64_t>()) <= kMaxSeq)
    return static_cast<uint64_t>(seq->get<int64_t>());
  return std::nullopt;
}

json wireMetadata(json fields) {
  json meta(json::value_t::object);
  meta.get_ptr<json::object_t*>()->emplace(kWireKey, std::move(fields));
  return meta;
}

}  // namespace agui_sync
