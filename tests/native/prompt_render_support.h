#pragma once
// What the prompt renderer's Catch2 suites share (test_prompt_render.cpp,
// test_prompt_ownership.cpp): a render that must succeed.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <agui_sync/prompt_render.h>

namespace prompt_test {

inline agui_sync::RenderResult render(const nlohmann::json& state, const agui_sync::RenderOptions& o) {
  agui_sync::RenderResult r;
  agui_sync::Failure failure;
  const bool ok = agui_sync::renderStateForPrompt(state, o, r, &failure);
  INFO(failure.message);
  REQUIRE(ok);
  return r;
}

}  // namespace prompt_test
