#pragma once
// AGUI_COLD marks code that the per-delta path never runs (user edits, setup,
// one-off facade calls): optimized for size and kept out of hot callers, so
// features that are rarely exercised do not grow the browser engine (the
// -O3 build inlines everything it can; see cmake/wasm.cmake for the budget).
#if defined(__clang__)
#define AGUI_COLD __attribute__((cold, minsize, noinline))
#elif defined(__GNUC__)
#define AGUI_COLD __attribute__((cold, noinline))
#else
#define AGUI_COLD
#endif
