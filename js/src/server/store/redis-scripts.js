// The Lua scripts of redisStore() (redis-store.js), read from lua/ (one copy,
// which the Python package loads too: lua/README.md says what each key holds
// and how `-- uses:` puts the shared functions before a script). Read on first
// use, so importing agui-state-sync/server touches no file system.
const USES = /^-- uses:(.*)\n/;
const texts = new Map(); // script name -> its full text

/** The text of lua/<name>.lua with the libraries it uses before it, each once. */
async function assemble(name, included) {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
  let out = '';
  for (const lib of (USES.exec(text)?.[1] ?? '').split(' ').filter(Boolean)) {
    if (included.has(lib)) continue;
    included.add(lib);
    out += await assemble(lib, included);
  }
  return out + text;
}

/** The full text of a script: 'append', 'load', 'init', 'reset' or 'claim'. */
export async function scriptText(name) {
  if (!texts.has(name)) texts.set(name, await assemble(name, new Set()));
  return texts.get(name);
}
