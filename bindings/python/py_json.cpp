#include "py_json.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <cmath>
#include <vector>

#include "json/ecma_number.h"
#include "json/json_escape.h"

namespace agui_py {
namespace {

struct Writer {
  std::string& out;
  size_t maxDepth;
  bool wellFormed;
  size_t maxBytes;
  std::vector<PyObject*> path;  // the containers being written, outermost first
  JsonRefusal refusal = JsonRefusal::None;
  std::string message;
  std::string where;  // JSON Pointer of the refused value, built while unwinding
  bool tooDeep = false;  // a cycle or the depth limit: a pointer thousands of levels long would help nobody

  bool fail(JsonRefusal r, std::string m) {
    refusal = r;
    message = std::move(m);
    return false;
  }

  // JSON.stringify's escapes, written by the core's one string writer.
  void appendString(const char* s, Py_ssize_t n) { agui_sync::appendJsonString(out, std::string_view(s, static_cast<size_t>(n))); }

  bool writeStr(PyObject* v) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(v, &n);
    if (s == nullptr) {  // a lone surrogate: no UTF-8 form, so no JSON text either
      PyErr_Clear();
      if (wellFormed) return writeReplacingSurrogates(v);
      return fail(JsonRefusal::Value, "a string holds a lone surrogate, which JSON text cannot carry");
    }
    appendString(s, n);
    return true;
  }

  // A str's UTF-8 with U+FFFD for each lone surrogate (code point by code point:
  // the slow path, for the strings that have no UTF-8 form of their own).
  static std::string wellFormedUtf8(PyObject* v) {
    std::string utf8;
    const Py_ssize_t n = PyUnicode_GET_LENGTH(v);
    for (Py_ssize_t i = 0; i < n; ++i) {
      Py_UCS4 c = PyUnicode_READ_CHAR(v, i);
      if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;
      if (c < 0x80) {
        utf8.push_back(char(c));
      } else if (c < 0x800) {
        utf8.push_back(char(0xC0 | (c >> 6)));
        utf8.push_back(char(0x80 | (c & 0x3F)));
      } else if (c < 0x10000) {
        utf8.push_back(char(0xE0 | (c >> 12)));
        utf8.push_back(char(0x80 | ((c >> 6) & 0x3F)));
        utf8.push_back(char(0x80 | (c & 0x3F)));
      } else {
        utf8.push_back(char(0xF0 | (c >> 18)));
        utf8.push_back(char(0x80 | ((c >> 12) & 0x3F)));
        utf8.push_back(char(0x80 | ((c >> 6) & 0x3F)));
        utf8.push_back(char(0x80 | (c & 0x3F)));
      }
    }
    return utf8;
  }

  bool writeReplacingSurrogates(PyObject* v) {
    const std::string utf8 = wellFormedUtf8(v);
    appendString(utf8.data(), Py_ssize_t(utf8.size()));
    return true;
  }

  bool writeInt(PyObject* v) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0) {
      out += std::to_string(i);
      return true;
    }
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(v);
      if (!PyErr_Occurred()) {
        out += std::to_string(u);
        return true;
      }
      PyErr_Clear();
    }
    return fail(JsonRefusal::Value, "an integer outside [-2^63, 2^64) has no JSON number here");
  }

  bool writeFloat(PyObject* v) {
    const double d = PyFloat_AsDouble(v);
    if (!std::isfinite(d)) return fail(JsonRefusal::Value, "JSON cannot represent NaN or Infinity");
    agui_sync::appendEcmaNumber(d, out);
    return true;
  }

  // Entering a container: the depth limit, and a cycle named as one.
  bool enter(PyObject* v) {
    if (path.size() >= maxDepth) {
      tooDeep = true;
      for (PyObject* p : path)
        if (p == v) return fail(JsonRefusal::Value, "the value contains a reference cycle");
      return fail(JsonRefusal::Depth, "the value nests deeper than " + std::to_string(maxDepth) + " levels");
    }
    path.push_back(v);
    return true;
  }

  bool writeSequence(PyObject* v) {
    if (!enter(v)) return false;
    PyObject* fast = PySequence_Fast(v, "");  // a list or tuple: no copy
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject** items = PySequence_Fast_ITEMS(fast);
    out.push_back('[');
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (i) out.push_back(',');
      if (!write(items[i])) {
        if (!tooDeep) where = "/" + std::to_string(i) + where;
        Py_DECREF(fast);
        return false;
      }
    }
    out.push_back(']');
    Py_DECREF(fast);
    path.pop_back();
    return true;
  }

  // A JS object lists its array-index keys ("0".."4294967294", canonical)
  // first, in numeric order, then the rest in insertion order; JSON.stringify
  // writes them so, and so must we for the same bytes.
  static bool isArrayIndex(PyObject* key, uint64_t& index) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(key, &n);
    if (s == nullptr) return PyErr_Clear(), false;
    if (n == 0 || n > 10 || (n > 1 && s[0] == '0')) return false;
    index = 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      index = index * 10 + uint64_t(s[i] - '0');
    }
    return index < 4294967295ULL;
  }

  bool writeMember(PyObject* key, PyObject* item, bool& first) {
    if (!PyUnicode_Check(key)) return fail(JsonRefusal::Type, "a dict key is not a str");
    if (!first) out.push_back(',');
    first = false;
    if (!writeStr(key)) return false;
    out.push_back(':');
    if (write(item)) return true;
    if (tooDeep) return false;
    Py_ssize_t n = 0;
    const char* k = PyUnicode_AsUTF8AndSize(key, &n);
    if (k == nullptr) PyErr_Clear();  // a key with a lone surrogate: named with U+FFFD in the message
    std::string seg = k != nullptr ? std::string(k, n) : wellFormedUtf8(key);
    for (size_t at = 0; (at = seg.find_first_of("~/", at)) != std::string::npos; at += 2)
      seg.replace(at, 1, seg[at] == '~' ? "~0" : "~1");
    where = "/" + seg + where;
    return false;
  }

  bool writeDict(PyObject* v) {
    if (!enter(v)) return false;
    std::vector<std::pair<uint64_t, Py_ssize_t>> indexKeys;  // (index, position)
    Py_ssize_t pos = 0, at = 0;
    PyObject *key, *item;
    uint64_t index;
    while (PyDict_Next(v, &pos, &key, &item)) {
      if (PyUnicode_Check(key) && isArrayIndex(key, index)) indexKeys.emplace_back(index, at);
      ++at;
    }
    out.push_back('{');
    bool first = true;
    if (indexKeys.empty()) {  // the usual case: insertion order
      pos = 0;
      while (PyDict_Next(v, &pos, &key, &item))
        if (!writeMember(key, item, first)) return false;
    } else if (!writeIndexedDict(v, indexKeys, first)) {
      return false;
    }
    out.push_back('}');
    path.pop_back();
    return true;
  }

  bool writeIndexedDict(PyObject* v, std::vector<std::pair<uint64_t, Py_ssize_t>>& indexKeys, bool& first) {
    std::sort(indexKeys.begin(), indexKeys.end());
    std::vector<std::pair<PyObject*, PyObject*>> members;
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(v, &pos, &key, &item)) members.emplace_back(key, item);
    std::vector<bool> written(members.size(), false);
    for (const auto& [index, at] : indexKeys) {
      written[at] = true;
      if (!writeMember(members[at].first, members[at].second, first)) return false;
    }
    for (size_t i = 0; i < members.size(); ++i)
      if (!written[i] && !writeMember(members[i].first, members[i].second, first)) return false;
    return true;
  }

  bool write(PyObject* v) {
    if (out.size() > maxBytes) return fail(JsonRefusal::Size, "the text is longer than asked");
    if (v == Py_None) return out += "null", true;
    if (v == Py_True) return out += "true", true;
    if (v == Py_False) return out += "false", true;
    if (PyUnicode_Check(v)) return writeStr(v);
    if (PyLong_Check(v)) return writeInt(v);
    if (PyFloat_Check(v)) return writeFloat(v);
    if (PyDict_Check(v)) return writeDict(v);
    if (PyList_Check(v) || PyTuple_Check(v)) return writeSequence(v);
    return fail(JsonRefusal::Type, std::string("JSON cannot represent a value of type ") + Py_TYPE(v)->tp_name);
  }
};

}  // namespace

JsonText toJson(PyObject* value, size_t maxDepth, bool wellFormed, size_t maxBytes) {
  JsonText result;
  Writer w{result.text, maxDepth, wellFormed, maxBytes, {}, JsonRefusal::None, {}, {}};
  if (!w.write(value)) {
    result.text.clear();
    result.refusal = w.refusal;
    result.message = w.where.empty() ? w.message : w.message + " (at " + w.where + ")";
  }
  return result;
}

}  // namespace agui_py
