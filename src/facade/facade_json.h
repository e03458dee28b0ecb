#pragma once
// Pieces every facade shares: bounded parsing of app-supplied JSON, the one
// shape of a failure ({"ok":false,"code","message"[,"opIndex"]}), and option
// readers. Plain C++, exception-free.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <agui_sync/codes.h>

namespace agui_sync {

// {"ok":false,"code":<codeName>,"message":...[,"opIndex":n]}
std::string failureJson(Code code, const std::string& message, std::optional<size_t> opIndex = std::nullopt);
std::string failureJson(const Failure& failure);
// {"ok":true}
inline std::string okJson() { return "{\"ok\":true}"; }

// Parses `text` with the depth limit checked while reading, so a hostile value
// cannot exhaust the stack. On failure: code invalid-json or limit-exceeded.
std::optional<Failure> parseBounded(std::string_view text, size_t maxDepth, nlohmann::json& out);

// Reads a positive integer option; leaves `target` alone when absent or null.
// On a bad value: an invalid-options failure naming the option.
std::optional<Failure> readPositive(const nlohmann::json& options, const char* name, size_t& target);

}  // namespace agui_sync
