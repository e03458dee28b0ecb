// An Emscripten JS library (linked with --js-library: cmake/wasm.cmake): how
// the engine turns a JSON number that Clinger's fast path cannot take (more
// than 15 significant digits, or a power of ten past 22) into a double.
//
// Why: musl's strtod computes in software long double, and with it (and the
// printf family it shares that arithmetic with) came ~9 KB of the browser
// engine's gzipped download. JavaScript's Number() reads a decimal to the
// nearest double, as strtod does, so the engine's values are the same bytes as
// in the native and Python builds, which keep strtod. The text was already
// validated as a JSON number, which is also a JavaScript numeric literal, and
// is ASCII.
mergeInto(LibraryManager.library, {
  agui_parse_decimal__sig: 'dii',
  agui_parse_decimal: function(ptr, length) {
    var text = '';
    for (var i = 0; i < length; i++) text += String.fromCharCode(HEAPU8[ptr + i]);
    return Number(text);
  },
});
