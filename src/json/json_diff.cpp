#include "json/json_diff.h"

#include "json/json_diff_impl.h"

namespace agui_sync {

using nlohmann::json;

void appendDiff(const json& from, const json& to, const DiffOptions& options, json::array_t& ops) {
  appendDiffOf(from, JsonNode{&to}, options, ops);
}

json diffPatch(const json& from, const json& to, const DiffOptions& options) {
  json ops(json::value_t::array);
  appendDiff(from, to, options, *ops.get_ptr<json::array_t*>());
  return ops;
}

}  // namespace agui_sync
