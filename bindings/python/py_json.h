#pragma once
// Python value -> JSON text, written exactly as JavaScript's JSON.stringify
// writes the same data (key order kept, ECMAScript number text, the same
// string escapes), so StateEmitter.encode() gives the JS emitter's bytes and
// every facade gets UTF-8 JSON. Values JSON cannot hold are refused as data,
// never half-written: the caller raises.
#include <cstddef>
#include <cstdint>
#include <string>

#include <Python.h>

namespace agui_py {

enum class JsonRefusal { None, Type, Value, Depth, Size };

struct JsonText {
  std::string text;
  JsonRefusal refusal = JsonRefusal::None;
  std::string message;  // what was refused and where (a JSON Pointer)
};

// Serializes `value`: dict (str keys), list, tuple, str, int, float, bool,
// None. Refuses NaN/Infinity, integers outside [-2^63, 2^64), lone surrogates
// (Value), any other type (Type), cycles (Value) and nesting deeper than
// `maxDepth` (Depth).
// With `wellFormed`, a lone surrogate is written as U+FFFD instead (what the JS
// prompt renderer does, so a prompt never fails on text cut inside an emoji).
// With `maxBytes`, writing stops (refusal Size) once the text is longer: for a
// caller that only needs to know whether it is.
JsonText toJson(PyObject* value, size_t maxDepth, bool wellFormed = false, size_t maxBytes = SIZE_MAX);

}  // namespace agui_py
