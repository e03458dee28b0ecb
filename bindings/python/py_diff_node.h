#pragma once
// A Python value as the `to` side of the core's differ (src/json/json_diff_impl.h):
// sequence_state diffs the thread's JSON state against an agent's snapshot dict
// directly, so a 500 KB node exit that changed three fields is compared in C
// (no allocation for equal subtrees) instead of being written out as JSON text
// and parsed back whole. The differ, its strategy and its ops are the core's;
// this file only answers its questions about a Python value, exactly as the
// value's JSON text (py_json.h) would answer them once parsed by the core:
//   equal()   numbers by value, bools only equal bools, dict keys by their UTF-8;
//   members() a dict's keys in UTF-8 byte order (the core's object order);
//   value()   the JSON text written by py_json.h and read by the core's reader;
//   measure() that text's length, written no further than needed.
// A value with no JSON form (a set, NaN, a lone surrogate, a non-str key) is
// never an error here: the context is marked failed and the caller takes the
// JSON-text route, which raises the usual error.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <Python.h>
#include <nlohmann/json.hpp>

namespace agui_py {

struct DiffContext {
  size_t maxDepth;      // for the JSON form of a value that goes into the ops
  bool failed = false;  // some value had no JSON form: the ops are unusable
};

struct PyNode {
  PyObject* v;
  DiffContext* ctx;

  static bool equal(const nlohmann::json& a, const PyNode& b);
  bool isObject() const { return PyDict_Check(v); }
  bool isArray() const { return PyList_Check(v) || PyTuple_Check(v); }
  size_t size() const { return static_cast<size_t>(PyList_Check(v) ? PyList_GET_SIZE(v) : PyTuple_GET_SIZE(v)); }
  PyNode at(size_t i) const {
    const Py_ssize_t n = static_cast<Py_ssize_t>(i);
    return PyNode{PyList_Check(v) ? PyList_GET_ITEM(v, n) : PyTuple_GET_ITEM(v, n), ctx};
  }
  std::vector<std::pair<std::string, PyNode>> members() const;
  nlohmann::json value(bool& failed) const;
  size_t measure(size_t limit) const;
};

}  // namespace agui_py
