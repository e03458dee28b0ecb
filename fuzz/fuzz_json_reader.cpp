// libFuzzer target: the JSON reader (src/json_reader.*) against nlohmann::json::parse.
//
// Input: JSON text (any bytes).
//
// Invariants (the reader's contract in json_reader.h):
//  - it accepts a text exactly when json::parse does, except for its documented
//    differences (a NUL byte, a leading byte-order mark, nesting over its limit);
//  - accepted texts give equal values of equal types (compared through dump(),
//    which tells 1 from 1.0 and -0.0 from 0);
//  - skipValue() accepts exactly what readValue() accepts.
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "json/json_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr size_t kDepth = 512;

  nlohmann::json ours;
  std::string error;
  agui_sync::JsonReader reader(text, kDepth);
  const bool oursOk = reader.readValue(ours) && reader.finish();
  const bool tooDeep = reader.depthExceeded();

  agui_sync::JsonReader skipper(text, kDepth);
  const bool skipOk = skipper.skipValue() && skipper.finish();
  FUZZ_CHECK(skipOk == oursOk, "skipValue %d vs readValue %d", skipOk, oursOk);

  const bool hasNul = std::memchr(data, 0, size) != nullptr;
  const bool bom = size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF;
  if (hasNul || bom || tooDeep) return 0;

  const nlohmann::json theirs = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const bool theirsOk = !theirs.is_discarded();
  FUZZ_CHECK(oursOk == theirsOk, "reader %s, json::parse %s (%s)", oursOk ? "accepts" : "rejects",
             theirsOk ? "accepts" : "rejects", reader.error().c_str());
  if (oursOk) FUZZ_CHECK(ours.dump() == theirs.dump(), "values differ: %s vs %s", ours.dump().c_str(), theirs.dump().c_str());
  return 0;
}
