#pragma once
// String-in/string-out form of renderStateForPrompt (include/agui_sync/
// prompt_render.h) for the bindings. Plain C++, exception-free.
//
//   renderPromptJson(stateJson, optionsJson)
//     optionsJson: {include, exclude: [pointer, ...], untrusted: [pointer, ...]
//                   or "auto", ownership: {pointer: "user" | "agent" | "shared"}
//                   (only with "auto"), maxBytes, maxStringBytes, maxArrayItems,
//                   maxDepth: positive integers, datamark, tag: strings}; "" = all
//                   defaults; unknown keys are ignored, null means the default.
//     -> {"ok":true,"text":s,"bytes":n,
//         "truncated":[{"path":s,"reason":s,"droppedBytes":n},...],
//         "untrustedPaths":[s,...],
//         "limits":{"maxStringBytes":n,"maxArrayItems":n,"maxObjectMembers":n,"maxDepth":n},
//         "preamble":s}  (promptPreamble: the line promptMessage puts before the text)
//     or the one failure shape {"ok":false,"code","message"}: invalid-json (state
//     or options not JSON), limit-exceeded (the state nests deeper than
//     kPromptStateDepth), invalid-options (a bad option; see prompt_render.h).
//
//   renderPromptParts(stateJson, optionsJson)
//     the same render with the text kept out of the JSON, so that it is neither
//     escaped nor parsed again: the success object without "text", a '\n', then
//     the text as it is; a failure is the same failure object.
//
//   renderPromptPartsOf(state, optionsJson, userWritten)
//     renderPromptParts of a state the caller already holds parsed (an emitter's:
//     no JSON text is written or read for it). `userWritten` (the emitter's
//     provenance) stands in for the options' userWritten when they have none.
//
//   promptInputBuffer(n), renderPromptInput(n, optionsJson)
//     for the WebAssembly binding, which copies bytes in and out instead of
//     converting strings (embind converts a std::string parameter one character
//     at a time in JS, and scans a returned one byte by byte): a buffer of at
//     least n bytes that the binding fills with the state's UTF-8
//     (TextEncoder.encodeInto into the heap), then renderPromptParts of its
//     first n bytes, left as [uint32 little-endian length][bytes] at the address
//     returned, valid until the next call. One set of buffers per instance
//     (WebAssembly is single-threaded; native callers use the functions above);
//     buffers over 1 MiB are freed once used.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace agui_sync {

// Nesting accepted in stateJson; the renderer itself shows at most maxDepth levels.
constexpr size_t kPromptStateDepth = 512;

std::string renderPromptJson(const std::string& stateJson, const std::string& optionsJson);
std::string renderPromptParts(std::string_view stateJson, const std::string& optionsJson);
std::string renderPromptPartsOf(const nlohmann::json& state, const std::string& optionsJson,
                                const std::vector<std::string>& userWritten);

char* promptInputBuffer(size_t n);
const char* renderPromptInput(size_t n, const std::string& optionsJson);

}  // namespace agui_sync
