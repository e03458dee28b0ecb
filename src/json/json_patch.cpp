#include "json/json_patch.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "json/json_measure.h"

namespace agui_sync {

using nlohmann::json;

namespace {

const std::string* stringMember(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

PatchResult fail(PatchStatus s, size_t index, std::string msg) {
  PatchResult r;
  r.status = s;
  r.opIndex = index;
  r.message = "op " + std::to_string(index) + ": " + msg;
  return r;
}

// Is `prefix` a proper prefix of `path` (so moving prefix into path would nest it in itself)?
bool properPrefix(const Tokens& prefix, const Tokens& path) {
  if (prefix.size() >= path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i] != path[i]) return false;
  return true;
}

// Insert / erase in the middle of an array by swapping neighbours. vector's own
// insert/erase move-assign each shifted element, and basic_json's assignment
// (by value: construct, swap, destroy) costs several times a swap; in WASM that
// made a removal from a 2,000-element list the largest cost of a delta.
void insertAt(json::array_t& arr, size_t idx, json value) {
  arr.push_back(std::move(value));
  for (size_t i = arr.size() - 1; i > idx; --i) arr[i].swap(arr[i - 1]);
}

void eraseAt(json::array_t& arr, size_t idx) {
  for (size_t i = idx; i + 1 < arr.size(); ++i) arr[i].swap(arr[i + 1]);
  arr.pop_back();
}

// Indexed by OpKind: the one table of op names, for parsing and for messages.
// string_views, so that matching a name compares lengths first (with C strings
// each candidate cost a strlen and a compare: visible per op of every delta).
constexpr std::string_view kOpNames[] = {"add", "remove", "replace", "move", "copy", "test"};
static_assert(sizeof kOpNames / sizeof *kOpNames == static_cast<size_t>(OpKind::Test) + 1, "one name per OpKind");

// Bytes a member (object) or element (array) adds to its container's
// serialized size besides its value: the quoted key and colon, and a comma
// unless it is the only one. `others`: the container's other members. With
// this, sizeDelta() is exactly the change of serializedSize(doc, Raw).
int64_t memberOverhead(const json& parent, const std::string& key, size_t others) {
  int64_t n = others > 0 ? 1 : 0;
  if (parent.is_object()) n += static_cast<int64_t>(stringSize(key, SizeMode::Raw)) + 1;
  return n;
}

}  // namespace

PatchResult checkOp(size_t index, const OpFields& f, PatchOp& out) {
  if (!f.isObject) return fail(PatchStatus::Malformed, index, "operation is not an object");
  const std::string* name = f.op;
  const auto* const known = name ? std::find(std::begin(kOpNames), std::end(kOpNames), *name) : std::end(kOpNames);
  if (known == std::end(kOpNames)) return fail(PatchStatus::Malformed, index, "missing or unknown 'op'");
  out.kind = static_cast<OpKind>(known - std::begin(kOpNames));
  if (!f.path) return fail(PatchStatus::Malformed, index, "missing or non-string 'path'");
  std::string err;
  if (!parsePointer(*f.path, out.pathTokens, err)) return fail(PatchStatus::Malformed, index, err);
  if (out.kind == OpKind::Move || out.kind == OpKind::Copy) {
    if (!f.from) return fail(PatchStatus::Malformed, index, "missing or non-string 'from'");
    if (!parsePointer(*f.from, out.fromTokens, err)) return fail(PatchStatus::Malformed, index, err);
  }
  if ((out.kind == OpKind::Add || out.kind == OpKind::Replace || out.kind == OpKind::Test) && !f.hasValue)
    return fail(PatchStatus::Malformed, index, "missing 'value'");
  return PatchResult{};
}

namespace {

OpFields fieldsOf(const json& op) {
  OpFields f;
  f.isObject = op.is_object();
  if (!f.isObject) return f;
  f.op = stringMember(op, "op");
  f.path = stringMember(op, "path");
  f.from = stringMember(op, "from");
  f.hasValue = op.find("value") != op.end();
  return f;
}

}  // namespace

PatchResult validatePatch(const json& ops) {
  if (!ops.is_array()) return fail(PatchStatus::Malformed, 0, "a patch must be an array of operations");
  size_t i = 0;
  PatchOp scratch;
  for (const auto& op : ops) {
    PatchResult r = checkOp(i++, fieldsOf(op), scratch);
    if (!r.ok()) return r;
  }
  return PatchResult{};
}

PatchResult toPatchOps(json ops, PatchOps& out) {
  out.clear();
  if (!ops.is_array()) return fail(PatchStatus::Malformed, 0, "a patch must be an array of operations");
  out.reserve(ops.size());
  size_t i = 0;
  for (auto& op : *ops.get_ptr<json::array_t*>()) {
    out.emplace_back();
    PatchOp& p = out.back();
    const OpFields f = fieldsOf(op);
    PatchResult r = checkOp(i++, f, p);
    if (!r.ok()) {
      out.clear();
      return r;
    }
    p.path = *f.path;
    if (f.from) p.from = *f.from;
    if (f.hasValue) p.value = std::move(op["value"]);
  }
  return PatchResult{};
}

bool PatchTransaction::depthOk(const Tokens& path, const json& value, std::string& error) const {
  if (maxDepth_ == 0 || !value.is_structured()) {
    if (maxDepth_ != 0 && path.size() > maxDepth_) {
      error = "path is deeper than the depth limit";
      return false;
    }
    return true;
  }
  if (path.size() + valueDepth(value) > maxDepth_) {
    error = "result would nest deeper than the depth limit (" + std::to_string(maxDepth_) + ")";
    return false;
  }
  return true;
}

bool PatchTransaction::add(const Tokens& path, json value, std::string& error) {
  if (!depthOk(path, value, error)) {
    depthFailure_ = true;
    return false;
  }
  if (path.empty()) {
    sizeDelta_ += static_cast<int64_t>(rawSize(value)) - static_cast<int64_t>(rawSize(doc_));
    undo_.push_back(Undo{UndoKind::Swap, &path, 0, {}, 0, std::move(doc_)});
    doc_ = std::move(value);
    return true;
  }
  json* parent = resolvePointer(doc_, path, path.size() - 1, &error);
  if (!parent) return false;
  const std::string& last = path.back();
  const size_t parentCount = path.size() - 1;
  if (parent->is_object()) {
    auto& obj = *parent->get_ptr<json::object_t*>();
    int64_t added = static_cast<int64_t>(rawSize(value));
    auto it = obj.find(last);
    if (it != obj.end()) {
      sizeDelta_ += added - static_cast<int64_t>(rawSize(it->second));
      undo_.push_back(Undo{UndoKind::RestoreKey, &path, parentCount, last, 0, std::move(it->second)});
      it->second = std::move(value);
    } else {
      sizeDelta_ += added + memberOverhead(*parent, last, obj.size());
      obj.emplace(last, std::move(value));
      undo_.push_back(Undo{UndoKind::EraseKey, &path, parentCount, last, 0, json()});
    }
    return true;
  }
  if (parent->is_array()) {
    auto& arr = *parent->get_ptr<json::array_t*>();
    size_t idx = 0;
    if (last == "-") {
      idx = arr.size();
      appendedIndex_ = idx;
      appended_ = true;
    } else if (!parseArrayIndex(last, idx)) {
      error = "invalid array index '" + last + "'";
      return false;
    } else if (idx > arr.size()) {
      error = "array index " + last + " is past the end (size " + std::to_string(arr.size()) + ")";
      return false;
    }
    sizeDelta_ += static_cast<int64_t>(rawSize(value)) + memberOverhead(*parent, last, arr.size());
    insertAt(arr, idx, std::move(value));
    undo_.push_back(Undo{UndoKind::EraseIndex, &path, parentCount, {}, idx, json()});
    return true;
  }
  error = "cannot add a member to a scalar at " + formatPointer(path, path.size() - 1);
  return false;
}

bool PatchTransaction::remove(const Tokens& path, json* removed, std::string& error) {
  if (path.empty()) {
    error = "cannot remove the whole document";
    return false;
  }
  json* parent = resolvePointer(doc_, path, path.size() - 1, &error);
  if (!parent) return false;
  const std::string& last = path.back();
  const size_t parentCount = path.size() - 1;
  if (parent->is_object()) {
    auto& obj = *parent->get_ptr<json::object_t*>();
    auto it = obj.find(last);
    if (it == obj.end()) {
      error = "no member '" + last + "' to remove";
      return false;
    }
    sizeDelta_ -= static_cast<int64_t>(rawSize(it->second)) + memberOverhead(*parent, last, obj.size() - 1);
    json old = std::move(it->second);
    obj.erase(it);
    if (removed) *removed = old;  // copy only when a move needs the value
    undo_.push_back(Undo{UndoKind::RestoreKey, &path, parentCount, last, 0, std::move(old)});
    return true;
  }
  if (parent->is_array()) {
    auto& arr = *parent->get_ptr<json::array_t*>();
    size_t idx = 0;
    if (!parseArrayIndex(last, idx) || idx >= arr.size()) {
      error = "array index '" + last + "' is not an existing element";
      return false;
    }
    sizeDelta_ -= static_cast<int64_t>(rawSize(arr[idx])) + memberOverhead(*parent, last, arr.size() - 1);
    json old = std::move(arr[idx]);
    eraseAt(arr, idx);
    if (removed) *removed = old;
    undo_.push_back(Undo{UndoKind::InsertIndex, &path, parentCount, {}, idx, std::move(old)});
    return true;
  }
  error = "cannot remove from a scalar at " + formatPointer(path, path.size() - 1);
  return false;
}

bool PatchTransaction::replace(const Tokens& path, json value, std::string& error) {
  if (!depthOk(path, value, error)) {
    depthFailure_ = true;
    return false;
  }
  json* target = resolvePointer(doc_, path, path.size(), &error);
  if (!target) return false;
  sizeDelta_ += static_cast<int64_t>(rawSize(value)) - static_cast<int64_t>(rawSize(*target));
  undo_.push_back(Undo{UndoKind::Swap, &path, path.size(), {}, 0, std::move(*target)});
  *target = std::move(value);
  return true;
}

PatchResult PatchTransaction::applyOne(PatchOp& op, size_t index) {
  Tokens& path = op.pathTokens;
  std::string error;
  bool ok = true;
  depthFailure_ = false;
  appended_ = false;

  switch (op.kind) {
    case OpKind::Test: {
      const json* target = resolvePointer(doc_, path, path.size(), &error);
      if (!target) return fail(PatchStatus::PreconditionFailed, index, "test: " + error);
      // nlohmann's equality compares numbers by value and objects as sorted maps,
      // which is exactly RFC 6902 section 4.6 equality.
      if (!(*target == op.value))
        return fail(PatchStatus::PreconditionFailed, index, "test: value at '" + op.path + "' differs");
      return PatchResult{};
    }
    case OpKind::Add: ok = add(path, std::move(op.value), error); break;
    case OpKind::Remove: ok = remove(path, nullptr, error); break;
    case OpKind::Replace: ok = replace(path, std::move(op.value), error); break;
    case OpKind::Move: {
      const Tokens& from = op.fromTokens;
      if (properPrefix(from, path)) return fail(PatchStatus::Failed, index, "move: cannot move a value into its own child");
      if (from == path) {
        // A move onto itself is a no-op, but the source must still exist.
        if (!resolvePointer(doc_, from, from.size(), &error)) return fail(PatchStatus::Failed, index, "move: " + error);
        return PatchResult{};
      }
      json value;
      ok = remove(from, &value, error) && add(path, std::move(value), error);
      if (ok) changed_.push_back(std::move(op.from));  // the op's texts are not read again
      break;
    }
    case OpKind::Copy: {
      const json* source = resolvePointer(doc_, op.fromTokens, op.fromTokens.size(), &error);
      if (!source) return fail(PatchStatus::Failed, index, "copy: " + error);
      // Measured before copying (O(source), as the copy itself): copies that
      // double the document op after op stop here, not at an out-of-memory.
      const size_t bytes = rawSize(*source, kMaxCopyBytes - copied_ + 1);  // stops counting past the budget
      if (bytes > kMaxCopyBytes - copied_)
        return fail(PatchStatus::LimitExceeded, index, "copy: the patch's copies would add more than 8 MiB");
      copied_ += bytes;
      json value = *source;  // a copy costs the copied subtree, which the patch asked for
      ok = add(path, std::move(value), error);
      break;
    }
  }
  if (!ok) return fail(depthFailure_ ? PatchStatus::LimitExceeded : PatchStatus::Failed, index, std::string(kOpNames[static_cast<int>(op.kind)]) + ": " + error);
  if (appended_) {
    // Report where an append landed, not the "-" token: consumers want a real
    // path. (The token itself stays: undo steps read this op's tokens.)
    Tokens real(path.begin(), path.end() - 1);
    real.push_back(std::to_string(appendedIndex_));
    changed_.push_back(formatPointer(real));
  } else {
    changed_.push_back(std::move(op.path));
  }
  return PatchResult{};
}

PatchResult PatchTransaction::apply(json ops) {
  PatchOps parsed;
  PatchResult v = toPatchOps(std::move(ops), parsed);
  if (!v.ok()) return v;
  return apply(std::move(parsed));
}

// Not inlined: the receiver and the edit layer share one copy of the loop
// (the browser engine's size budget); one call per event costs nothing.
__attribute__((noinline)) PatchResult PatchTransaction::apply(PatchOps ops) {
  // Kept until commit/rollback: undo steps point at these operations' tokens
  // (a moved vector keeps its elements where they are).
  batches_.push_back(std::move(ops));
  PatchOps& kept = batches_.back();
  copied_ = 0;
  undo_.reserve(undo_.size() + kept.size() + 1);
  changed_.reserve(changed_.size() + kept.size());  // one path per op (a move adds one more)
  for (size_t i = 0; i < kept.size(); ++i) {
    PatchResult r = applyOne(kept[i], i);
    if (!r.ok()) {
      rollback();
      return r;
    }
  }
  return PatchResult{};
}

void PatchTransaction::rollback() {
  // Undo in reverse: each entry's parent path is valid again once every later
  // entry is undone, because the document is back to the shape it had then.
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    Undo& u = *it;
    if (u.kind == UndoKind::Swap) {
      json* target = resolvePointer(doc_, *u.path, u.count);
      if (target) *target = std::move(u.value);
      continue;
    }
    json* parent = resolvePointer(doc_, *u.path, u.count);
    if (!parent) continue;  // unreachable: the shape is restored step by step
    switch (u.kind) {
      case UndoKind::EraseKey: parent->get_ptr<json::object_t*>()->erase(u.key); break;
      case UndoKind::RestoreKey: (*parent->get_ptr<json::object_t*>())[u.key] = std::move(u.value); break;
      case UndoKind::EraseIndex: {
        auto& arr = *parent->get_ptr<json::array_t*>();
        eraseAt(arr, u.index);
        break;
      }
      case UndoKind::InsertIndex: {
        auto& arr = *parent->get_ptr<json::array_t*>();
        insertAt(arr, u.index, std::move(u.value));
        break;
      }
      case UndoKind::Swap: break;
    }
  }
  undo_.clear();
  batches_.clear();
  changed_.clear();
  sizeDelta_ = 0;
}

PatchResult applyPatch(json& doc, const json& ops, size_t maxDepth) {
  PatchTransaction tx(doc, maxDepth);
  PatchResult r = tx.apply(ops);  // copies: the caller keeps its ops
  if (r.ok()) tx.commit();
  return r;
}

}  // namespace agui_sync
