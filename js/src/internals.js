// Symbols for test hooks. Not exported from the package entry points.
export const kInternals = Symbol('agui-state-sync.internals');
