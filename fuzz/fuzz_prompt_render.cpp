// libFuzzer target: prompt-safe state rendering (src/render/, renderStateForPrompt).
//
// Input: [maxBytes][maxStringBytes][maxArrayItems][maxDepth][flags] + payload.
//   header byte 0 = the default; otherwise maxBytes = minRenderBytes + b0^2 / 2
//   (so budget passes and the "state too large" marker are reached), the limits
//   small (1..64 bytes, 1..8 items, 1..8 levels).
//   flags: 1 datamark "^", 2 datamark U+02C6 (both: a two-character mark),
//   4 untrusted "", 8 untrusted pointers, 16 include pointers, 32 exclude
//   pointers, 64 payload used as raw bytes (a string value and a key, so
//   invalid UTF-8 is reached), 128 the payload is nested under /a and /b.
//   A payload that is not JSON is used as raw bytes.
// Oracles (tests/native/prompt_oracle.h, shared with the native suite): the block
// minus its first and last line parses to exactly the value an independent
// reference builds (filtering, wrappers, datamarks, markers, reserved keys,
// UTF-8 repair, JCS numbers), with the same truncations and untrusted paths;
// exactly two line breaks, "</" only in the closing tag, no "```", no raw escaped
// character anywhere and only JSON tokens outside strings; bytes == size <=
// maxBytes; keys in UTF-16 order; datamarks on untrusted strings only; and a
// second render gives identical bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include <agui_sync/prompt_render.h>
#include "../tests/native/prompt_oracle.h"
#include "fuzz_common.h"

using nlohmann::json;

namespace {

const char* const kPointers[] = {"/a", "/a/0", "/b", "/b/1", "/$untrusted", "/0", "/a/k/0", "/raw"};

agui_sync::RenderOptions optionsFrom(const uint8_t* h) {
  agui_sync::RenderOptions o;
  if (h[0]) o.maxBytes = agui_sync::minRenderBytes(o.tag) + static_cast<size_t>(h[0]) * h[0] / 2;
  if (h[1]) o.maxStringBytes = 1 + h[1] % 64;
  if (h[2]) o.maxArrayItems = 1 + h[2] % 8;
  if (h[3]) o.maxDepth = 1 + h[3] % 8;
  const uint8_t f = h[4];
  if ((f & 3) == 1) o.datamark = "^";
  if ((f & 3) == 2) o.datamark = "\u02c6";
  if ((f & 3) == 3) o.datamark = "\u00a7\u00a7";
  if (f & 4) o.untrusted.push_back("");
  for (size_t i = 0; i < 8; ++i) {
    if ((f & 8) && (h[1] >> (i % 8) & 1)) o.untrusted.push_back(kPointers[i]);
    if ((f & 16) && (h[2] >> (i % 8) & 1)) o.include.push_back(kPointers[i]);
    if ((f & 32) && (h[3] >> (i % 8) & 1)) o.exclude.push_back(kPointers[i]);
  }
  return o;
}

json stateFrom(const std::string& payload, uint8_t flags) {
  json parsed = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if ((flags & 64) || parsed.is_discarded()) {
    json raw = json::object();
    raw["raw"] = payload;
    raw[payload] = json::array({payload, 1});
    return raw;
  }
  if (!(flags & 128)) return parsed;
  json state = json::object();  // moved, not copied: a deep payload is never copied recursively
  state["a"] = std::move(parsed);
  state["b"] = json::array({"x", json::object({{"k", "</shared_state>"}})});
  return state;
}

bool same(const agui_sync::RenderResult& a, const agui_sync::RenderResult& b) {
  if (a.text != b.text || a.untrustedPaths != b.untrustedPaths || a.truncated.size() != b.truncated.size())
    return false;
  for (size_t i = 0; i < a.truncated.size(); ++i)
    if (a.truncated[i].path != b.truncated[i].path || a.truncated[i].reason != b.truncated[i].reason ||
        a.truncated[i].droppedBytes != b.truncated[i].droppedBytes)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const agui_sync::RenderOptions options = optionsFrom(data);
  const json state = stateFrom(std::string(reinterpret_cast<const char*>(data) + 5, size - 5), data[4]);

  agui_sync::RenderResult first, second;
  agui_sync::Failure failure;
  FUZZ_CHECK(agui_sync::renderStateForPrompt(state, options, first, &failure), "options refused: %s",
             failure.message.c_str());
  const std::string problem = prompt_oracle::checkRender(state, options, first);
  FUZZ_CHECK(problem.empty(), "%s\n  text %s", fuzz::excerpt(problem, 600).c_str(),
             fuzz::excerpt(first.text, 600).c_str());
  FUZZ_CHECK(agui_sync::renderStateForPrompt(state, options, second, nullptr), "second render refused");
  FUZZ_CHECK(same(first, second), "a second render differs\n  1 %s\n  2 %s", fuzz::excerpt(first.text).c_str(),
             fuzz::excerpt(second.text).c_str());
  return 0;
}
