// Loads the WebAssembly engines once per realm and hands out the shared instances:
//  - agui_sync (js/wasm/agui_sync.mjs + .wasm): the receiver, for createStateSync();
//  - agui_emitter (js/wasm/agui_emitter.mjs + .wasm): the sender, for
//    createStateEmitter() (emitter.js), imported dynamically so that browser
//    bundles that do not use it never contain or download it.
// Both export canonicalize/verify (canonicalJson, stateDigest, verifyApproval)
// and renderPrompt (renderStateForPrompt).
// Each .wasm ships as a separate file:
//  - browsers and bundlers: the Emscripten glue finds it with the bundler-friendly
//    `new URL('agui_sync.wasm', import.meta.url)` and streams it;
//  - Node (no fetch for file: URLs): this file reads it from disk and passes it
//    as `wasmBinary`;
//  - anything else: the caller passes `wasmBinary` or `locateFile`.
import createAguiSyncModule from '../../wasm/agui_sync.mjs';
import { asCause, describeThrown, syncError } from './errors.js';

// A module is { wasmFile, factory: async () => Emscripten factory }. The
// receiver's is here; the emitter's lives in emitter.js (its glue is imported
// dynamically there), so a bundle that never calls createStateEmitter drops it.
const SYNC_MODULE = { wasmFile: 'agui_sync.wasm', factory: async () => createAguiSyncModule };
// Not string literals on purpose: bundlers must neither bundle the Node builtin
// nor emit the .wasm a second time (the glue's own `new URL` already does).
const WASM_DIR = ['..', '..', 'wasm', ''].join('/');
const NODE_FS = ['node', 'fs/promises'].join(':');
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** One instantiated WebAssembly module, shared by every StateSync (or StateEmitter) made from it. */
export class Engine {
  constructor(module) {
    this.module = module;
    /** The Error that killed this instance (an abort/trap), or null. */
    this.failure = null;
    this.onFailure = null;
  }

  get SyncFacade() {
    return this.module.SyncFacade;
  }

  get EmitterFacade() {
    return this.module.EmitterFacade;
  }

  get CursorFacade() {
    return this.module.CursorFacade;
  }

  get StoreLineFacade() {
    return this.module.StoreLineFacade;
  }

  get ActivityFacade() {
    return this.module.ActivityFacade;
  }

  get ActivityStreamFacade() {
    return this.module.ActivityStreamFacade;
  }

  get SegmentTaxFacade() {
    return this.module.SegmentTaxFacade;
  }

  get RelayFacade() {
    return this.module.RelayFacade;
  }

  get CommitLoopFacade() {
    return this.module.CommitLoopFacade;
  }

  get RunFacade() {
    return this.module.RunFacade;
  }

  /** The requester digest of credential values (src/facade/run_facade.h): a JSON string. */
  requesterJson(credentialsJson) {
    return this.module.requesterJson(credentialsJson);
  }

  /** SyncFacade::canonicalize: JSON text -> {"ok":true,"canonical","digest"} | {"ok":false,"code","message"}. */
  canonicalize(jsonText) {
    return this.module.canonicalize(jsonText);
  }

  /** SyncFacade::verify(approvalJson, stateJson, activitiesJson) -> bool. */
  verify(approvalJson, stateJson, activitiesJson = '') {
    return this.module.verify(approvalJson, stateJson, activitiesJson);
  }

  /**
   * renderPromptParts (src/facade/prompt_facade.h) of `stateJson`, copied into
   * the heap with encodeInto: '{"ok":true,...}\n' + text | '{"ok":false,"code","message"}'.
   */
  renderPrompt(stateJson, optionsJson) {
    const capacity = stateJson.length * 3; // UTF-16 -> UTF-8: at most 3 bytes per code unit
    const ptr = this.module.promptInputBuffer(capacity);
    const { written } = textEncoder.encodeInto(stateJson, this.module.HEAPU8.subarray(ptr, ptr + capacity));
    const result = this.module.renderPromptInput(written, optionsJson);
    const heap = this.module.HEAPU8; // re-read: rendering may have grown memory
    const length = (heap[result] | (heap[result + 1] << 8) | (heap[result + 2] << 16) | (heap[result + 3] << 24)) >>> 0;
    return textDecoder.decode(heap.subarray(result + 4, result + 4 + length));
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

// Per module: Promise<Engine> for calls without wasm options, and per
// wasmBinary / locateFile. A failed load is not cached, and an engine that
// aborted is dropped, so the next call starts a fresh instance.
const caches = new Map(); // module spec -> { default, custom }
// Engines that finished loading and have not failed, in load order: what the
// synchronous helpers (canonicalJson, ...) use.
const readyEngines = new Set();

/** The shared receiver engine (agui_sync) for these options. */
export function loadEngine(options = {}) {
  return loadModule(SYNC_MODULE, options);
}

/** A loaded, healthy engine of either kind, or null (nothing loaded yet, or every one failed). */
export function readyEngine() {
  for (const engine of readyEngines) {
    if (!engine.failure) return engine;
    readyEngines.delete(engine);
  }
  return null;
}

/** A loaded, healthy engine whose module exports `name` (the sender's own functions), or null. */
export function readyEngineWith(name) {
  for (const engine of readyEngines) {
    if (!engine.failure && typeof engine.module[name] === 'function') return engine;
  }
  return null;
}

/** The shared engine of module `spec` for these options. */
export function loadModule(spec, options = {}) {
  const { wasmBinary, locateFile } = options;
  if (wasmBinary !== undefined && !isBinary(wasmBinary)) {
    return Promise.reject(syncError('invalid-options', 'options.wasmBinary must be an ArrayBuffer or a Uint8Array'));
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    return Promise.reject(syncError('invalid-options', 'options.locateFile must be a function'));
  }
  let cache = caches.get(spec);
  if (!cache) caches.set(spec, (cache = { default: null, custom: new WeakMap() }));
  const key = wasmBinary ?? locateFile;
  const cached = key === undefined ? cache.default : cache.custom.get(key);
  if (cached) return cached;

  const forget = () => {
    if (key === undefined) {
      if (cache.default === promise) cache.default = null;
    } else if (cache.custom.get(key) === promise) {
      cache.custom.delete(key);
    }
  };
  const promise = instantiate(spec, wasmBinary, locateFile).then((engine) => {
    engine.onFailure = (failed) => {
      readyEngines.delete(failed);
      forget();
    };
    readyEngines.add(engine);
    return engine;
  });
  promise.catch(forget);
  if (key === undefined) cache.default = promise;
  else cache.custom.set(key, promise);
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

async function instantiate(spec, wasmBinary, locateFile) {
  const moduleArgs = {};
  if (locateFile) moduleArgs.locateFile = locateFile;
  if (wasmBinary !== undefined) moduleArgs.wasmBinary = toUint8Array(wasmBinary);
  else {
    const bytes = await readWasmInNode(spec.wasmFile, locateFile);
    if (bytes) moduleArgs.wasmBinary = bytes;
  }
  let engine = null;
  // abort() reports here before it throws; the throw itself is caught by the caller.
  moduleArgs.onAbort = (what) => {
    if (engine) engine.poison(syncError('engine-failed', `the WebAssembly engine aborted (${describeThrown(what)})`));
  };
  let module;
  try {
    const factory = await spec.factory();
    module = await factory(moduleArgs);
  } catch (thrown) {
    throw syncError('load-failed', `could not load the WebAssembly engine (${describeThrown(thrown)})`, { cause: asCause(thrown) });
  }
  engine = new Engine(module);
  return engine;
}

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    process.versions !== null && typeof process.versions.node === 'string';
}

// Where to read `wasmFile` from under Node: a path or a file: URL, or REMOTE
// for a URL that is not a file: URL (the glue fetches it).
const REMOTE = Symbol('remote');
function wasmLocation(wasmFile, locateFile, dir) {
  let target;
  try {
    target = locateFile ? locateFile(wasmFile, dir.href) : new URL(wasmFile, dir).href;
    if (typeof target === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(target) && !/^[a-z]:[\\/]/i.test(target)) {
      const url = new URL(target);
      return url.protocol === 'file:' ? url : REMOTE;
    }
  } catch (thrown) {
    throw syncError('load-failed', `could not locate the WebAssembly binary ${wasmFile} (${describeThrown(thrown)})`, {
      cause: asCause(thrown),
    });
  }
  return target;
}

// Node's fetch() cannot read file: URLs, so under Node the binary is read from
// disk. Returns undefined when the glue should load it itself (http URLs).
async function readWasmInNode(wasmFile, locateFile) {
  if (!isNode()) return undefined;
  const dir = new URL(WASM_DIR, import.meta.url);
  if (dir.protocol !== 'file:' && !locateFile) return undefined;
  const where = wasmLocation(wasmFile, locateFile, dir);
  if (where === REMOTE) return undefined;
  try {
    const fs = await import(/* @vite-ignore */ /* webpackIgnore: true */ NODE_FS);
    return new Uint8Array(await fs.readFile(where));
  } catch (thrown) {
    // No file: a single-file build (the wasm is embedded in the glue) loads by itself.
    if (thrown && thrown.code === 'ENOENT' && !locateFile) return undefined;
    throw syncError(
      'load-failed',
      `could not read the WebAssembly binary ${String(where)} (${describeThrown(thrown)}); ` +
        'pass options.wasmBinary or options.locateFile',
      { cause: asCause(thrown) },
    );
  }
}
