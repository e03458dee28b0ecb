#pragma once
// RFC 6902 JSON Patch applied in place and atomically.
//
// Why not nlohmann's patch(): it copies the whole document per call (O(state)),
// and patch_inplace() leaves earlier operations applied when a later one fails.
// Here every mutation records an undo entry holding the *moved-out* old value, so
// a failed patch is rolled back exactly and a successful one costs O(ops x path
// depth + size of the values it carries or removes), independent of state size.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json/json_pointer.h"

namespace agui_sync {

enum class PatchStatus {
  Ok,
  Malformed,           // an operation object is not a valid RFC 6902 operation
  Failed,              // a path did not resolve, an index was out of range, ...
  PreconditionFailed,  // a `test` operation did not match
  LimitExceeded,       // the result would nest deeper than the depth limit, or the
                       // patch's `copy` ops would add more than kMaxCopyBytes
};

// What one apply() call's `copy` operations may add to the document, in
// serialized bytes. Without it each {"op":"copy","from":"","path":"/k"} doubles
// the document before any caller could check its size: a few hundred bytes of
// patch would allocate gigabytes (found by fuzz_edits, "copy-amplification").
constexpr size_t kMaxCopyBytes = 8u << 20;

struct PatchResult {
  PatchStatus status = PatchStatus::Ok;
  size_t opIndex = 0;   // the failing operation
  std::string message;  // human-readable why
  bool ok() const { return status == PatchStatus::Ok; }
};

enum class OpKind : uint8_t { Add, Remove, Replace, Move, Copy, Test };

// One operation, already checked for structure: pointers are parsed, `value`
// is present exactly when the kind needs one.
struct PatchOp {
  OpKind kind = OpKind::Add;
  std::string path;  // pointer text as received (reported in changedPaths)
  std::string from;  // move / copy
  Tokens pathTokens;
  Tokens fromTokens;
  nlohmann::json value;  // add / replace / test
};
using PatchOps = std::vector<PatchOp>;

// The members of one operation object as a reader found them (nullptr = absent
// or not a string), so the decoder that parses events straight into PatchOps
// and validatePatch() share one set of rules and messages.
struct OpFields {
  bool isObject = true;
  const std::string* op = nullptr;
  const std::string* path = nullptr;
  const std::string* from = nullptr;
  bool hasValue = false;
};
// Checks one operation's structure; on success fills out.kind and the tokens
// (out.path/out.from/out.value are the caller's to fill).
PatchResult checkOp(size_t index, const OpFields& fields, PatchOp& out);

// Structural validation of a patch document without touching any state: an array
// of objects, each with a known `op`, a parseable `path`, `from` for move/copy and
// `value` for add/replace/test.
PatchResult validatePatch(const nlohmann::json& ops);
// Validates and converts; operation values are moved out of `ops`.
PatchResult toPatchOps(nlohmann::json ops, PatchOps& out);

class PatchTransaction {
 public:
  // maxDepth bounds the nesting of the resulting document (0 = unlimited).
  explicit PatchTransaction(nlohmann::json& doc, size_t maxDepth = 0) : doc_(doc), maxDepth_(maxDepth) {}
  ~PatchTransaction() = default;
  PatchTransaction(const PatchTransaction&) = delete;
  PatchTransaction& operator=(const PatchTransaction&) = delete;

  // Applies every op in order. On failure the document is already rolled back.
  // Takes the ops by value so a caller that owns them can std::move them in and
  // the operation values are moved, not copied, into the document.
  PatchResult apply(nlohmann::json ops);
  // The same for operations that were validated already (checkOp/toPatchOps).
  PatchResult apply(PatchOps ops);
  // Undo everything applied so far (used when a later check, e.g. a size limit or
  // a digest, rejects a patch that applied cleanly).
  void rollback();
  // Forget the undo log; the changes stay.
  void commit() {
    undo_.clear();
    batches_.clear();
  }

  // Pointers the patch wrote, in order (move contributes `from` and `path`).
  const std::vector<std::string>& changedPaths() const { return changed_; }
  std::vector<std::string> takeChangedPaths() { return std::move(changed_); }
  // Estimated change of the serialized state size, in bytes.
  int64_t sizeDelta() const { return sizeDelta_; }

 private:
  enum class UndoKind { EraseKey, RestoreKey, EraseIndex, InsertIndex, Swap };
  struct Undo {
    UndoKind kind;
    // The parent's path (for Swap: the replaced value's path) is the first
    // `count` tokens of an operation's pointer, which batches_ keeps alive, so
    // recording an undo step copies no path.
    const Tokens* path;
    size_t count;
    std::string key;
    size_t index = 0;
    nlohmann::json value;
  };

  PatchResult applyOne(PatchOp& op, size_t index);
  bool add(const Tokens& path, nlohmann::json value, std::string& error);
  bool remove(const Tokens& path, nlohmann::json* removed, std::string& error);
  bool replace(const Tokens& path, nlohmann::json value, std::string& error);
  bool depthOk(const Tokens& path, const nlohmann::json& value, std::string& error) const;

  nlohmann::json& doc_;
  size_t maxDepth_;
  std::vector<PatchOps> batches_;  // the applied operations (their tokens back undo_)
  std::vector<Undo> undo_;
  std::vector<std::string> changed_;
  int64_t sizeDelta_ = 0;
  size_t copied_ = 0;  // bytes the current apply() call's copy ops added (kMaxCopyBytes)
  bool depthFailure_ = false;
  size_t appendedIndex_ = 0;  // where the last add with "-" landed, for changedPaths
  bool appended_ = false;     // the current operation appended to an array with "-"
};

// One-shot convenience: validate, then apply atomically and commit.
PatchResult applyPatch(nlohmann::json& doc, const nlohmann::json& ops, size_t maxDepth = 0);

}  // namespace agui_sync
