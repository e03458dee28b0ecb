// embind's __getTypeName, built without RTTI (EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0),
// names a type by its address: sprintf(str, "%p", ti). That one call links
// libc's whole printf formatter into the engine, ~1.3 KB of the browser's
// gzipped download (issue 27), to print a pointer only for the message of an
// unbound-type error, which this package's bindings never leave. These
// entry points do that one format and abort on any other, so a future caller
// finds out in the first test that runs it rather than getting a wrong
// string. All three names of libc's sprintf.o are defined (LLVM turns a
// sprintf without floats into siprintf), so that object is never linked;
// snprintf and the rest of the family stay libc's.
#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

int formatPointer(char* out, const char* format, va_list args) {
  if (std::strcmp(format, "%p") != 0) std::abort();
  uintptr_t v = reinterpret_cast<uintptr_t>(va_arg(args, void*));
  char digits[2 * sizeof v];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0);
  int len = 0;
  out[len++] = '0';
  out[len++] = 'x';
  while (n > 0) out[len++] = digits[--n];
  out[len] = '\0';
  return len;
}

}  // namespace

#define AGUI_POINTER_SPRINTF(name)                    \
  extern "C" int name(char* out, const char* format, ...) { \
    va_list args;                                     \
    va_start(args, format);                           \
    const int len = formatPointer(out, format, args); \
    va_end(args);                                     \
    return len;                                       \
  }

AGUI_POINTER_SPRINTF(sprintf)
AGUI_POINTER_SPRINTF(siprintf)
AGUI_POINTER_SPRINTF(__small_sprintf)
