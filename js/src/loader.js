// Loads the WebAssembly engine (js/wasm/agui_sync.mjs + agui_sync.wasm) once per
// realm and hands out the shared instance. The .wasm ships as a separate file:
//  - browsers and bundlers: the Emscripten glue finds it with the bundler-friendly
//    `new URL('agui_sync.wasm', import.meta.url)` and streams it;
//  - Node (no fetch for file: URLs): this file reads it from disk and passes it
//    as `wasmBinary`;
//  - anything else: the caller passes `wasmBinary` or `locateFile`.
import createAguiSyncModule from '../wasm/agui_sync.mjs';
import { asCause, describeThrown, syncError } from './errors.js';

const WASM_FILE = 'agui_sync.wasm';
// Not string literals on purpose: bundlers must neither bundle the Node builtin
// nor emit the .wasm a second time (the glue's own `new URL` already does).
const WASM_DIR = ['..', 'wasm', ''].join('/');
const NODE_FS = ['node', 'fs/promises'].join(':');

/** One instantiated WebAssembly module, shared by every StateSync made from it. */
export class Engine {
  constructor(module) {
    this.module = module;
    /** The Error that killed this instance (an abort/trap), or null. */
    this.failure = null;
    this.onFailure = null;
  }

  get Facade() {
    return this.module.Facade;
  }

  /** The current heap view; re-read after every call that may grow memory. */
  get heapU8() {
    return this.module.HEAPU8;
  }

  /** Bytes of linear memory (grows, never shrinks). */
  get memoryBytes() {
    return this.module.HEAPU8.buffer.byteLength;
  }

  /** Bytes currently allocated by malloc (leak checks). */
  heapBytesInUse() {
    return this.module.heapBytesInUse();
  }

  /** After an abort the instance's memory may be inconsistent: never call into it again. */
  poison(error) {
    if (this.failure) return;
    this.failure = error;
    if (this.onFailure) this.onFailure(this);
  }
}

let defaultEngine = null; // Promise<Engine> for createStateSync() without wasm options
const customEngines = new WeakMap(); // wasmBinary / locateFile -> Promise<Engine>

/**
 * The shared engine for these options. A failed load is not cached, and an
 * engine that aborted is dropped, so the next call starts a fresh instance.
 */
export function loadEngine(options = {}) {
  const { wasmBinary, locateFile } = options;
  if (wasmBinary !== undefined && !isBinary(wasmBinary)) {
    return Promise.reject(syncError('options.wasmBinary must be an ArrayBuffer or a Uint8Array'));
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    return Promise.reject(syncError('options.locateFile must be a function'));
  }
  const key = wasmBinary ?? locateFile;
  const cached = key === undefined ? defaultEngine : customEngines.get(key);
  if (cached) return cached;

  const forget = () => {
    if (key === undefined) {
      if (defaultEngine === promise) defaultEngine = null;
    } else if (customEngines.get(key) === promise) {
      customEngines.delete(key);
    }
  };
  const promise = instantiate(wasmBinary, locateFile).then((engine) => {
    engine.onFailure = forget;
    return engine;
  });
  promise.catch(forget);
  if (key === undefined) defaultEngine = promise;
  else customEngines.set(key, promise);
  return promise;
}

function isBinary(value) {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value) ||
    Object.prototype.toString.call(value) === '[object ArrayBuffer]';
}

function toUint8Array(value) {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return new Uint8Array(value);
}

async function instantiate(wasmBinary, locateFile) {
  const moduleArgs = {};
  if (locateFile) moduleArgs.locateFile = locateFile;
  if (wasmBinary !== undefined) moduleArgs.wasmBinary = toUint8Array(wasmBinary);
  else {
    const bytes = await readWasmInNode(locateFile);
    if (bytes) moduleArgs.wasmBinary = bytes;
  }
  let engine = null;
  // abort() reports here before it throws; the throw itself is caught by the caller.
  moduleArgs.onAbort = (what) => {
    if (engine) engine.poison(syncError(`the WebAssembly engine aborted (${describeThrown(what)})`));
  };
  let module;
  try {
    module = await createAguiSyncModule(moduleArgs);
  } catch (thrown) {
    throw syncError(`could not load the WebAssembly engine (${describeThrown(thrown)})`, asCause(thrown));
  }
  engine = new Engine(module);
  return engine;
}

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    process.versions !== null && typeof process.versions.node === 'string';
}

// Node's fetch() cannot read file: URLs, so under Node the binary is read from
// disk. Returns undefined when the glue should load it itself (http URLs).
async function readWasmInNode(locateFile) {
  if (!isNode()) return undefined;
  const dir = new URL(WASM_DIR, import.meta.url);
  if (dir.protocol !== 'file:' && !locateFile) return undefined;
  const target = locateFile ? locateFile(WASM_FILE, dir.href) : new URL(WASM_FILE, dir).href;
  let where = target;
  if (typeof target === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(target) && !/^[a-z]:[\\/]/i.test(target)) {
    const url = new URL(target);
    if (url.protocol !== 'file:') return undefined;
    where = url;
  }
  try {
    const fs = await import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_FS);
    return new Uint8Array(await fs.readFile(where));
  } catch (thrown) {
    // No file: a single-file build (the wasm is embedded in the glue) loads by itself.
    if (thrown && thrown.code === 'ENOENT' && !locateFile) return undefined;
    throw syncError(
      `could not read the WebAssembly binary ${String(where)} (${describeThrown(thrown)}); ` +
        'pass options.wasmBinary or options.locateFile',
      asCause(thrown),
    );
  }
}
