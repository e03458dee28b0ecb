#pragma once
// Prompt-safe rendering of shared state: the text an integration pastes into an
// LLM's system prompt instead of JSON.stringify(state, null, 2) in a code fence.
// docs/prompt-rendering.md has the rationale, examples and a suggested preamble.
//
// Output: exactly one data block, three lines,
//     <TAG format="json">            (or <TAG format="json" truncated="true">)
//     {...compact JSON...}
//     </TAG>
// The attributes are fixed ASCII literals; nothing from the state ever reaches
// them. The middle line is JSON: keys in RFC 8785 order (UTF-16 code units),
// numbers as ECMAScript prints the double (1, 0.5, 1e+21; NaN/Infinity as null),
// no whitespace. Strings the model must not read as markup or instructions are
// escaped, never dropped, inside every JSON string (keys and values):
//   - JSON's own: '"', '\\', and \b \f \n \r \t in their short forms;
//   - '<' '>' '&' '`' as \u003c \u003e \u0026 \u0060 (no tag, entity or fence),
//     and their compatibility look-alikes U+1FEF, U+FE60, U+FE64, U+FE65,
//     U+FF06, U+FF1C, U+FF1E, U+FF40 (NFKC maps them to those four);
//   - C0 and C1 controls and DEL (U+0000-001F, U+007F-009F);
//   - line/paragraph separators U+2028, U+2029;
//   - bidirectional controls U+061C, U+200E, U+200F, U+202A-202E, U+2066-2069;
//   - zero-width and other invisible or format characters: U+00AD, U+034F,
//     U+0600-0605, U+06DD, U+070F, U+0890-0891, U+08E2, U+115F-1160,
//     U+17B4-17B5, U+180B-180F, U+200B-200D, U+2060-2065, U+206A-206F, U+3164,
//     U+FE00-FE0F, U+FEFF, U+FFA0, U+FFF0-FFFB, U+110BD, U+110CD,
//     U+13430-1343F, U+1BCA0-1BCA3, U+1D173-1D17A;
//   - Unicode tags and the supplementary variation selectors U+E0000-E0FFF;
//   - noncharacters U+FDD0-FDEF and U+xFFFE/U+xFFFF of every plane.
// Escapes are lowercase \uXXXX, astral characters as a surrogate pair. Every
// other character is copied as UTF-8. A byte that does not start a well-formed
// UTF-8 sequence becomes U+FFFD (so lone surrogates never appear). The only line
// breaks are the two around the JSON, so no content can start a line, close the
// block, or open a code fence. Stripping the first and last line leaves JSON.
//
// Markers. The keys "$untrusted" and "$truncated" are reserved:
//   {"$untrusted": V}               V (the subtree at an `untrusted` pointer) was
//                                   written by the user; nested pointers inside an
//                                   untrusted subtree add no second wrapper.
//   "...[truncated N bytes]"        suffix of a string cut at maxStringBytes
//                                   (N = UTF-8 bytes of the source left out).
//   {"$truncated":"N more items"}   last element of a cut array ("1 more item").
//   "$truncated":"N more members"   last member of a cut object, budget only
//                                   ("1 more member").
//   {"$truncated":"array nested too deep"} / {"$truncated":"object nested too deep"}
//                                   a non-empty container at level >= maxDepth
//                                   (the root is level 0); empty ones stay.
//   {"$truncated":"state too large"}  the whole state, when nothing else fits.
// A real key of the form "$"..."$untrusted" or "$"..."$truncated" (one or more
// '$' before the word) is rendered with one more '$' ("$untrusted" ->
// "$$untrusted"), so in the output exactly those two spellings are markers.
// A member whose key is not valid UTF-8 (no JSON parser produces one) is left
// out, with reason "key".
//
// Datamarking (spotlighting): with a non-empty `datamark`, every string VALUE in
// an untrusted subtree starts with the mark and has each White_Space character
// (U+0009-000D, U+0020, U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029,
// U+202F, U+205F, U+3000) replaced by the mark. Keys are not marked (two keys
// could collide); trusted strings are never marked.
//
// Filtering: `include` (empty = the whole state) selects subtrees; containers on
// the way to an include pointer keep only the members leading to it (array
// elements keep their order but not their indices), and such a container that
// ends up empty is left out (the root stays, as {} or []; a scalar root that is
// not selected renders as null). `exclude` removes subtrees and wins over
// include (exclude "" renders null). Pointers that do not resolve select or
// remove nothing. Paths in the result are RFC 6901 pointers into the source
// state, never into the rendered (filtered) value.
//
// Budget. maxBytes is a hard cap on text.size(). The first render uses the
// configured limits; while it does not fit, the limits shrink and the state is
// rendered again (each pass stops as soon as it exceeds the cap): maxStringBytes
// and maxArrayItems halve (floors 32 bytes, or less if configured less, and 1
// item) and objects are cut at the array limit, then maxDepth halves down to 1;
// then the whole state becomes the "state too large" marker. A cut made only
// because of a shrunk limit has reason "budget". `applied` reports the limits of
// the render returned (all zero for the marker).
//
// Cost: O(passes x min(output, maxBytes) + nodes visited + keys sorted), with at
// most 1 + log2(max(maxStringBytes / 32, maxArrayItems)) + log2(maxDepth) passes
// (11 with the defaults); the parts left out are measured once (droppedBytes).
// Recursion is bounded by maxDepth (at most kMaxRenderDepth). Exception-free.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codes.h"
#include "edits.h"

namespace agui_sync {

// Who writes the value at a path, for `untrusted: auto` (RenderOptions), is
// the same declaration user edits read (edits.h): Owner and OwnershipRule, the
// subtree at `path` (RFC 6901) belongs to `owner` except where a longer
// pointer declares another owner.

// Upper bound of RenderOptions::maxDepth: the render recurses once per level.
constexpr size_t kMaxRenderDepth = 256;
// Upper bound of the datamark's length, in bytes.
constexpr size_t kMaxDatamarkBytes = 16;
// Upper bound of the tag's length, in bytes.
constexpr size_t kMaxTagBytes = 64;

struct RenderOptions {
  std::vector<std::string> include, exclude;  // RFC 6901 pointers; include empty = everything
  size_t maxBytes = 32768;                    // hard cap on the whole text
  size_t maxStringBytes = 2048;               // UTF-8 bytes kept of one string value (>= 1)
  size_t maxArrayItems = 100;                 // elements kept of one array (>= 1)
  size_t maxDepth = 16;                       // container levels rendered (1..kMaxRenderDepth)
  std::vector<std::string> untrusted;         // pointers to subtrees the user wrote
  // untrusted: 'auto'. Marks, besides `untrusted`, every subtree that
  // autoUntrustedPaths() finds for `ownership` and `userWritten`. Without it
  // both lists must be empty (a declaration that would silently do nothing is
  // refused).
  bool untrustedAuto = false;
  std::vector<OwnershipRule> ownership;  // the app's declaration; later rules win at equal pointers
  // Write provenance: pointers last written by a client edit. Nothing fills it
  // yet; once the emitter records which edits came from the client, it feeds
  // them here, and 'auto' marks them without any declaration.
  std::vector<std::string> userWritten;
  // "" = off; else 1..kMaxDatamarkBytes of valid UTF-8 whose characters are
  // neither escaped (above) nor White_Space, e.g. "^" or "\u02c6" (modifier
  // circumflex, as in Hines et al. 2024).
  std::string datamark;
  std::string tag = "shared_state";  // [a-z][a-z0-9_-]*, at most kMaxTagBytes
};

// The limits a render used (maxObjectMembers 0 = objects not cut).
struct RenderLimits {
  size_t maxStringBytes = 0, maxArrayItems = 0, maxObjectMembers = 0, maxDepth = 0;
};

struct Truncation {
  std::string path;    // pointer to the cut string / array / object / container
  std::string reason;  // "string" | "array" | "depth" | "budget" | "key"
  // What was left out, in bytes: for a string the UTF-8 bytes of the source cut
  // off; otherwise the RFC 8785 canonical text of the source values omitted, each
  // array element plus one comma, each object member as "key":value plus one
  // comma, a too-deep container or the whole state as its canonical text
  // (measured on the source: include/exclude below the cut are not applied).
  size_t droppedBytes = 0;
};

struct RenderResult {
  std::string text;
  size_t bytes = 0;                         // == text.size() <= options.maxBytes
  std::vector<Truncation> truncated;        // in output order
  std::vector<std::string> untrustedPaths;  // the pointers wrapped in {"$untrusted":...}, in output order
  RenderLimits applied;
  std::string preamble;  // promptPreamble(options): the line that introduces `text` to a model
};

// Renders `state` as described above. Returns false, with a Failure (code
// invalid-options) when failure != nullptr and `out` untouched, for a pointer
// that is not RFC 6901, a bad tag or datamark, a limit out of range, or a maxBytes
// below minRenderBytes(tag). Otherwise true; the same state and options always
// give the same bytes.
bool renderStateForPrompt(const nlohmann::json& state, const RenderOptions& options, RenderResult& out,
                          Failure* failure);

// What `untrusted: auto` marks in `state`: the pointers of the largest subtrees
// whose every path is owned by Owner::User, in document order. The owner of a
// path is that of the longest rule whose pointer is a prefix of it (Shared when
// none); `userWritten` counts as User rules that come after `ownership`. So
// {"/form": User, "/form/status": Agent} yields "/form/name", "/form/email", ...
// (each member of /form but status), and a rule below a scalar or a missing
// member marks nothing; nor does anything below level kMaxRenderDepth (the
// root is level 0), which no render shows. Returns false, with a Failure
// (invalid-options) when failure != nullptr, for a pointer that is not RFC
// 6901. Cost: the members of the containers that hold a rule, plus the rules;
// recursion at most kMaxRenderDepth deep.
bool autoUntrustedPaths(const nlohmann::json& state, const std::vector<OwnershipRule>& ownership,
                        const std::vector<std::string>& userWritten, std::vector<std::string>& out,
                        Failure* failure);

// The smallest maxBytes accepted for `tag`: the size of the "state too large" block.
size_t minRenderBytes(const std::string& tag);

// One line that introduces a block rendered with `options`: what it is, that it
// is data and not instructions, and what its markers mean. Every language's
// promptMessage (and the proxy's context entry) puts it before the block, so it
// is written here once. One line: an accepted tag or datamark holds no whitespace.
std::string promptPreamble(const RenderOptions& options);

}  // namespace agui_sync
