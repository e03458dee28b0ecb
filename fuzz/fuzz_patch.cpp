// libFuzzer target: atomic RFC 6902 JSON Patch (src/json_patch.*).
//
// Input: "<doc JSON>\0<patch JSON>", or (no NUL) a JSON array [doc, patch].
// Each {doc, patch} pair is applied twice: without a depth limit and with a
// small one (maxDepth 1 + first byte % 6), so LimitExceeded paths are reached.
//
// Invariants:
//  - a patch that fails validatePatch() fails apply() as Malformed;
//  - on failure the document is byte-identical (dump()) to a copy taken before,
//    the transaction holds no changed paths and no size delta (atomicity);
//  - on success rollback() restores the copy exactly as well;
//  - on success sizeDelta() equals rawSize(after) - rawSize(before) (json_measure.h)
//    exactly (the receiver's stateBytes, and so maxStateBytes, rely on it);
//  - on success with a depth limit, a document that was within the limit still is;
//  - applying the same patch to another copy gives the same document;
//  - differential: when nlohmann::json::patch() also succeeds, both results are
//    equal (nlohmann is laxer in places, e.g. it adds members to a null parent,
//    so only "both succeed" is compared).
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "json/json_measure.h"
#include "json/json_patch.h"
#include "wire/patch_code.h"
#include "json/json_pointer.h"

using agui_sync::PatchResult;
using agui_sync::PatchStatus;
using agui_sync::PatchTransaction;
using nlohmann::json;

namespace {

void checkOne(const json& docIn, const json& patch, size_t maxDepth) {
  const std::string before = docIn.dump();
  const PatchResult validation = agui_sync::validatePatch(patch);

  json doc = docIn;
  PatchTransaction tx(doc, maxDepth);
  const PatchResult r = tx.apply(patch);

  if (!validation.ok())
    FUZZ_CHECK(!r.ok() && r.status == PatchStatus::Malformed, "invalid patch (%s) applied with status %s",
               validation.message.c_str(), agui_sync::codeName(agui_sync::patchCode(r.status)));

  if (!r.ok()) {
    FUZZ_CHECK(!r.message.empty(), "failure without a message");
    if (patch.is_array() && !patch.empty())
      FUZZ_CHECK(r.opIndex < patch.size(), "opIndex %zu out of %zu ops", r.opIndex, patch.size());
    const std::string afterFail = doc.dump();
    FUZZ_CHECK(afterFail == before, "failed patch (%s) was not rolled back\n  before %s\n  after  %s", r.message.c_str(),
               fuzz::excerpt(before).c_str(), fuzz::excerpt(afterFail).c_str());
    FUZZ_CHECK(tx.changedPaths().empty() && tx.sizeDelta() == 0, "failed transaction kept changes");
    return;
  }

  // Success.
  const std::string after = doc.dump();
  const int64_t measured =
      static_cast<int64_t>(agui_sync::rawSize(doc)) - static_cast<int64_t>(agui_sync::rawSize(docIn));
  FUZZ_CHECK(tx.sizeDelta() == measured, "sizeDelta %lld but rawSize changed by %lld\n  before %s\n  after  %s",
             static_cast<long long>(tx.sizeDelta()), static_cast<long long>(measured), fuzz::excerpt(before).c_str(),
             fuzz::excerpt(after).c_str());
  if (maxDepth != 0 && agui_sync::valueDepth(docIn) <= maxDepth)
    FUZZ_CHECK(agui_sync::valueDepth(doc) <= maxDepth, "document depth %zu exceeds maxDepth %zu after a patch",
               agui_sync::valueDepth(doc), maxDepth);
  FUZZ_CHECK(tx.changedPaths().size() <= 2 * patch.size(), "%zu changed paths for %zu ops", tx.changedPaths().size(),
             patch.size());
  for (const std::string& p : tx.changedPaths()) {
    agui_sync::Tokens tokens;
    std::string error;
    FUZZ_CHECK(agui_sync::parsePointer(p, tokens, error), "changed path '%s' is not a JSON Pointer", p.c_str());
  }

  // Determinism through the one-shot API.
  json again = docIn;
  const PatchResult r2 = agui_sync::applyPatch(again, patch, maxDepth);
  FUZZ_CHECK(r2.ok() && again.dump() == after, "applyPatch() disagrees with PatchTransaction");

  // Differential against nlohmann's (non-atomic, copying) implementation.
  if (maxDepth == 0) {
    try {
      const json theirs = docIn.patch(patch);
      FUZZ_CHECK(theirs == doc, "nlohmann::json::patch() gives a different result\n  ours   %s\n  theirs %s",
                 fuzz::excerpt(after).c_str(), fuzz::excerpt(theirs.dump()).c_str());
    } catch (const json::exception&) {
      // nlohmann rejected it; RFC disagreements are not checked in this direction.
    }
  }

  tx.rollback();
  const std::string rolledBack = doc.dump();
  FUZZ_CHECK(rolledBack == before, "rollback() after success did not restore the document\n  before %s\n  after  %s",
             fuzz::excerpt(before).c_str(), fuzz::excerpt(rolledBack).c_str());
  FUZZ_CHECK(tx.changedPaths().empty() && tx.sizeDelta() == 0, "rollback() kept changes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* text = reinterpret_cast<const char*>(data);
  json doc, patch;
  if (const void* nul = std::memchr(data, 0, size)) {
    const size_t split = static_cast<size_t>(static_cast<const uint8_t*>(nul) - data);
    doc = json::parse(text, text + split, nullptr, false);
    patch = json::parse(text + split + 1, text + size, nullptr, false);
  } else {
    json pair = json::parse(text, text + size, nullptr, false);
    if (pair.is_discarded() || !pair.is_array() || pair.size() != 2) return 0;
    doc = std::move(pair[0]);
    patch = std::move(pair[1]);
  }
  if (doc.is_discarded() || patch.is_discarded()) return 0;
  checkOne(doc, patch, 0);
  checkOne(doc, patch, 1 + data[0] % 6);
  return 0;
}
