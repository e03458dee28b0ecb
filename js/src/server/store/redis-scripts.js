// The Lua scripts of redisStore() (redis-store.js), read from lua/ (one copy,
// which the Python package loads too: lua/README.md says what each key holds
// and how `-- uses:` puts the shared functions before a script). Read on first
// use, so importing agui-state-sync/server touches no file system.
const USES = /^-- uses:(.*)\n/;
const texts = new Map(); // script URL -> its full text

/** The text of lua/<name>.lua with the libraries it uses before it, each once. */
async function assemble(dir, name, included) {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(new URL(`${name}.lua`, dir), 'utf8');
  let out = '';
  for (const lib of (USES.exec(text)?.[1] ?? '').split(' ').filter(Boolean)) {
    if (included.has(lib)) continue;
    included.add(lib);
    out += await assemble(dir, lib, included);
  }
  return out + text;
}

const STORE_SCRIPTS = new URL('./lua/', import.meta.url);

/**
 * The full text of a script: 'append', 'load', 'init', 'reset' or 'claim', or
 * one in another folder `dir` (a URL ending in '/': the proxy's run logs).
 */
export async function scriptText(name, dir = STORE_SCRIPTS) {
  const key = `${dir.href}${name}`;
  if (!texts.has(key)) texts.set(key, await assemble(dir, name, new Set()));
  return texts.get(key);
}
