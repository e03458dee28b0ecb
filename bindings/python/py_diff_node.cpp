#include "py_diff_node.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "json/json_measure.h"
#include "json/json_reader.h"
#include "py_json.h"

namespace agui_py {

using nlohmann::json;

namespace {

// A str's UTF-8 (cached on the str by CPython), or false for a lone surrogate.
bool utf8Of(PyObject* s, const char*& data, Py_ssize_t& n) {
  data = PyUnicode_AsUTF8AndSize(s, &n);
  if (data != nullptr) return true;
  PyErr_Clear();
  return false;
}

// A Python number as the core would read its JSON text. Integral floats of
// 2^53 and beyond are written out and read back (their text is an integer the
// core keeps exactly); below that json(d) compares by the same value.
bool numberOf(PyObject* b, json& out) {
  if (PyLong_Check(b)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(b, &overflow);
    if (overflow == 0) return out = i >= 0 ? json(static_cast<uint64_t>(i)) : json(static_cast<int64_t>(i)), true;
    if (overflow < 0) return false;
    const unsigned long long u = PyLong_AsUnsignedLongLong(b);
    if (PyErr_Occurred()) return PyErr_Clear(), false;
    return out = json(static_cast<uint64_t>(u)), true;
  }
  const double d = PyFloat_AsDouble(b);
  if (!std::isfinite(d)) return false;
  if (std::fabs(d) < 9007199254740992.0) return out = json(d), true;
  JsonText text = toJson(b, 1);
  return text.refusal == JsonRefusal::None && agui_sync::JsonReader::parse(text.text, 1, out);
}

bool equalObject(const json::object_t& a, PyObject* b) {
  if (static_cast<size_t>(PyDict_GET_SIZE(b)) != a.size()) return false;
  Py_ssize_t pos = 0;
  PyObject *key, *item;
  const char* k;
  Py_ssize_t n;
  while (PyDict_Next(b, &pos, &key, &item)) {
    if (!PyUnicode_Check(key) || !utf8Of(key, k, n)) return false;
    auto it = a.find(std::string_view(k, static_cast<size_t>(n)));  // std::less<>: no copy of the key
    if (it == a.end() || !PyNode::equal(it->second, PyNode{item, nullptr})) return false;
  }
  return true;
}

bool equalArray(const json::array_t& a, PyObject* b) {
  const bool list = PyList_Check(b);
  if (!list && !PyTuple_Check(b)) return false;
  const Py_ssize_t n = list ? PyList_GET_SIZE(b) : PyTuple_GET_SIZE(b);
  if (static_cast<size_t>(n) != a.size()) return false;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!PyNode::equal(a[static_cast<size_t>(i)], PyNode{list ? PyList_GET_ITEM(b, i) : PyTuple_GET_ITEM(b, i), nullptr}))
      return false;
  return true;
}

}  // namespace

// Recursion follows `a`, whose depth the core bounds, so a cycle in `b` ends.
bool PyNode::equal(const json& a, const PyNode& node) {
  PyObject* b = node.v;
  switch (a.type()) {
    case json::value_t::null: return b == Py_None;
    case json::value_t::boolean: return b == (a.get<bool>() ? Py_True : Py_False);
    case json::value_t::string: {
      const char* s;
      Py_ssize_t n;
      if (!PyUnicode_Check(b) || !utf8Of(b, s, n)) return false;
      const std::string& t = *a.get_ptr<const std::string*>();
      return t.size() == static_cast<size_t>(n) && std::memcmp(t.data(), s, t.size()) == 0;
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: {
      if (PyBool_Check(b) || !(PyLong_Check(b) || PyFloat_Check(b))) return false;
      json number;
      return numberOf(b, number) && a == number;
    }
    case json::value_t::object: return PyDict_Check(b) && equalObject(*a.get_ptr<const json::object_t*>(), b);
    case json::value_t::array: return equalArray(*a.get_ptr<const json::array_t*>(), b);
    default: return false;
  }
}

std::vector<std::pair<std::string, PyNode>> PyNode::members() const {
  std::vector<std::pair<std::string, PyNode>> out;
  out.reserve(static_cast<size_t>(PyDict_GET_SIZE(v)));
  Py_ssize_t pos = 0;
  PyObject *key, *item;
  const char* k;
  Py_ssize_t n;
  while (PyDict_Next(v, &pos, &key, &item)) {
    if (!PyUnicode_Check(key) || !utf8Of(key, k, n)) {
      ctx->failed = true;  // no JSON form: the JSON route says why
      continue;
    }
    out.emplace_back(std::string(k, static_cast<size_t>(n)), PyNode{item, ctx});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return out;
}

json PyNode::value(bool& failed) const {
  json out;
  JsonText text = toJson(v, ctx->maxDepth);
  if (text.refusal != JsonRefusal::None || !agui_sync::JsonReader::parse(text.text, ctx->maxDepth, out)) {
    failed = ctx->failed = true;
    return json();
  }
  return out;
}

// The text is written only up to about twice the limit (a number's text may
// differ in length from the core's by a character or two, never by half), so
// measuring a large container the diff kept costs O(limit), not O(container).
size_t PyNode::measure(size_t limit) const {
  const size_t cap = limit > (SIZE_MAX - 64) / 2 ? SIZE_MAX : 2 * limit + 64;
  // "More than the limit" is limit + 1, as serializedSize says it: the caller adds to it.
  const size_t beyond = limit == SIZE_MAX ? limit : limit + 1;
  JsonText text = toJson(v, ctx->maxDepth, false, cap);
  if (text.refusal == JsonRefusal::Size) return beyond;
  json parsed;
  if (text.refusal != JsonRefusal::None || !agui_sync::JsonReader::parse(text.text, ctx->maxDepth, parsed)) {
    ctx->failed = true;
    return beyond;
  }
  return agui_sync::serializedSize(parsed, limit);
}

}  // namespace agui_py
