// An Emscripten JS library (linked with --js-library: cmake/wasm.cmake) that
// replaces how embind moves a std::string across the boundary (and keeps the
// wide strings, which no binding here uses, out of the glue: at the end).
//
// Why: embind's own conversion walks UTF-8 one code unit at a time in JS, twice
// on the way in (once to measure, once to write) and once more on the way out
// (a scan for NUL bytes). For the JSON text the server module reads (an agent's
// 50 KB snapshot written through an emitter) those loops cost more than parsing
// the text in WebAssembly: under `node --cpu-prof`, bench/js/bench_proxy.mjs's
// proxy spent 17% of its CPU in lengthBytesUTF8 and stringToUTF8Array. Here the
// platform's TextEncoder / TextDecoder do the work.
//
// The contract is embind's, unchanged: a std::string on the wire is a malloc'd
// block of a 32-bit length, the bytes and a NUL. A JS string goes in as UTF-8;
// one that is not well formed (a lone surrogate) goes through embind's own
// encoder, so the engine sees exactly the bytes it saw before and refuses them
// as it did. A Uint8Array / ArrayBuffer goes in as its bytes. A returned
// std::string is decoded whole: embedded NULs come back as U+0000 (embind split
// and re-joined at them: the same string), invalid UTF-8 as U+FFFD (as
// embind's TextDecoder did), and a leading U+FEFF is kept (embind dropped it).
// The unsigned-char string embind also registers keeps its one-byte-per-char
// meaning.
mergeInto(LibraryManager.library, {
  _embind_register_std_string__deps: ['$readLatin1String', '$registerType', '$simpleReadValueFromPointer',
    '$throwBindingError', 'malloc', 'free'],
  _embind_register_std_string: function(rawType, name) {
    name = readLatin1String(name);
    var utf8 = name === 'std::string';
    var encoder = new TextEncoder();
    var decoder = new TextDecoder('utf-8', { ignoreBOM: true });

    // A block holding `length` bytes, written by `write(at)`.
    function block(length, write) {
      var ptr = _malloc(4 + length + 1);
      HEAPU32[ptr >> 2] = length;
      write(ptr + 4); // HEAPU8 is read inside write(): _malloc may have grown memory
      HEAPU8[ptr + 4 + length] = 0;
      return ptr;
    }

    function fromString(value) {
      if (!utf8) {
        return block(value.length, function(at) {
          for (var i = 0; i < value.length; ++i) {
            var code = value.charCodeAt(i);
            if (code > 255) {
              _free(at - 4);
              throwBindingError('String has UTF-16 code units that do not fit in 8 bits');
            }
            HEAPU8[at + i] = code;
          }
        });
      }
      if (typeof value.isWellFormed === 'function' && value.isWellFormed()) {
        var bytes = encoder.encode(value);
        return block(bytes.length, function(at) { HEAPU8.set(bytes, at); });
      }
      var length = lengthBytesUTF8(value);
      return block(length, function(at) { stringToUTF8(value, at, length + 1); });
    }

    registerType(rawType, {
      name: name,
      'fromWireType': function(ptr) {
        var length = HEAPU32[ptr >> 2];
        var bytes = HEAPU8.subarray(ptr + 4, ptr + 4 + length);
        var str = '';
        if (utf8) str = decoder.decode(bytes);
        else for (var i = 0; i < length; ++i) str += String.fromCharCode(bytes[i]);
        _free(ptr);
        return str;
      },
      'toWireType': function(destructors, value) {
        if (value instanceof ArrayBuffer) value = new Uint8Array(value);
        var ptr;
        if (typeof value == 'string') {
          ptr = fromString(value);
        } else if (value instanceof Uint8Array || value instanceof Uint8ClampedArray || value instanceof Int8Array) {
          var bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
          ptr = block(bytes.length, function(at) { HEAPU8.set(bytes, at); });
        } else {
          throwBindingError('Cannot pass non-string to std::string');
        }
        if (destructors !== null) destructors.push(_free, ptr);
        return ptr;
      },
      'argPackAdvance': 8,
      'readValueFromPointer': simpleReadValueFromPointer,
      destructorFunction: function(ptr) { _free(ptr); },
    });
  },
  // std::wstring, std::u16string and std::u32string: embind registers them in
  // every module, but no binding of this package takes or returns one. They are
  // registered as types that refuse to cross, so embind's UTF-16 and UTF-32
  // codecs (~2.5 KB of glue, ~0.7 KB of a page's gzipped download) stay out.
  _embind_register_std_wstring__deps: ['$readLatin1String', '$registerType', '$simpleReadValueFromPointer',
    '$throwBindingError'],
  _embind_register_std_wstring: function(rawType, charSize, name) {
    name = readLatin1String(name);
    function refuse() {
      throwBindingError(name + ' does not cross this boundary');
    }
    registerType(rawType, {
      name: name,
      'fromWireType': refuse,
      'toWireType': refuse,
      'argPackAdvance': 8,
      'readValueFromPointer': simpleReadValueFromPointer,
      destructorFunction: null,
    });
  },
});
