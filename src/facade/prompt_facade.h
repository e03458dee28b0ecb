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
//         "limits":{"maxStringBytes":n,"maxArrayItems":n,"maxObjectMembers":n,"maxDepth":n}}
//     or the one failure shape {"ok":false,"code","message"}: invalid-json (state
//     or options not JSON), limit-exceeded (the state nests deeper than
//     kPromptStateDepth), invalid-options (a bad option; see prompt_render.h).
#include <cstddef>
#include <string>

namespace agui_sync {

// Nesting accepted in stateJson; the renderer itself shows at most maxDepth levels.
constexpr size_t kPromptStateDepth = 512;

std::string renderPromptJson(const std::string& stateJson, const std::string& optionsJson);

}  // namespace agui_sync
