// Embind surface of agui-state-sync: the string-in/string-out Facade (src/facade.h)
// and nothing else. Every method returns a string, a number or nothing; the
// core is exception-free and built with -fno-exceptions, so nothing can throw
// across this boundary (a bug that would throw aborts instead, which the JS
// wrapper turns into an Error and a dead instance).
#include <emscripten/bind.h>

#include <malloc.h>

#include <cstdint>
#include <string>

#include "facade.h"

using agui_sync::Facade;

namespace {

// The scratch buffer's address, for the wrapper's HEAPU8.set / encodeInto.
uintptr_t inputBuffer(Facade& f, size_t n) { return reinterpret_cast<uintptr_t>(f.inputBuffer(n)); }
std::string feedInput(Facade& f, size_t n) { return f.feedInput(n); }
std::string initError(const Facade& f) { return f.initError(); }

// Internal (tests only): bytes currently allocated by malloc, to prove that
// create/feed/dispose leaves the heap flat.
size_t heapBytesInUse() { return mallinfo().uordblks; }

}  // namespace

EMSCRIPTEN_BINDINGS(agui_state_sync) {
  emscripten::class_<Facade>("Facade")
      .constructor<const std::string&>()
      .function("initError", &initError)
      .function("inputBuffer", &inputBuffer)
      .function("feedInput", &feedInput)
      .function("end", &Facade::end)
      .function("reset", &Facade::reset)
      .function("stateJson", &Facade::stateJson)
      .function("metricsJson", &Facade::metricsJson)
      .function("statusJson", &Facade::statusJson);
  emscripten::function("heapBytesInUse", &heapBytesInUse);
}
