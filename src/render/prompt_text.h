#pragma once
// The characters of a prompt-safe JSON string: what is escaped, what counts as
// whitespace for datamarking, and the writer. The list is the contract of
// include/agui_sync/prompt_render.h; keep the two in step.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agui_sync {

// True for a code point written as \uXXXX (or a short escape) inside a rendered
// string: JSON's own, markup and fence characters, controls, separators, bidi
// and invisible format characters, tags, variation selectors, noncharacters.
bool promptEscaped(uint32_t cp);
// Unicode White_Space (the characters a datamark replaces).
bool promptWhiteSpace(uint32_t cp);

// Appends the escaped characters of `text` (no quotes). Bytes that do not start
// a well-formed UTF-8 sequence become U+FFFD. With `mark`, the mark comes first
// and replaces every White_Space character (spotlighting).
void appendPromptChars(std::string& out, std::string_view text, const std::string* mark);

// The longest prefix of `s` of at most `limit` bytes that does not split a
// well-formed UTF-8 sequence (an invalid byte is a unit of its own). O(1).
size_t promptCutPoint(std::string_view s, size_t limit);

// A datamark is usable when it is 1..maxBytes of valid UTF-8 and none of its
// characters is escaped or White_Space (so it reaches the model verbatim).
bool validDatamark(std::string_view mark, size_t maxBytes);

}  // namespace agui_sync
