#include <agui_sync/codes.h>

namespace agui_sync {

namespace {

constexpr CodeInfo kCodes[] = {
#define AGUI_SYNC_CODE_ROW(id, name, categories, cure, meaning) \
  CodeInfo{Code::id, name, static_cast<uint8_t>(categories), cure, meaning},
    AGUI_SYNC_CODES(AGUI_SYNC_CODE_ROW)
#undef AGUI_SYNC_CODE_ROW
};
constexpr size_t kCodeCount = sizeof(kCodes) / sizeof(kCodes[0]);

// The table is indexed by the enum: row i must hold enumerator i.
constexpr bool rowsInOrder() {
  for (size_t i = 0; i < kCodeCount; ++i)
    if (static_cast<size_t>(kCodes[i].code) != i) return false;
  return true;
}
static_assert(rowsInOrder(), "AGUI_SYNC_CODES rows must follow the enum's order");

}  // namespace

const CodeInfo* codeTable(size_t* count) {
  if (count) *count = kCodeCount;
  return kCodes;
}

const CodeInfo& codeInfo(Code code) { return kCodes[static_cast<size_t>(code)]; }

const char* codeName(Code code) { return codeInfo(code).name; }

std::optional<Code> codeFromName(std::string_view name) {
  for (const CodeInfo& row : kCodes)
    if (name == row.name) return row.code;
  return std::nullopt;
}

}  // namespace agui_sync
