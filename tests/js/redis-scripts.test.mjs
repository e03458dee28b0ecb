// The Redis store's Lua scripts come from one copy (js/src/server/store/lua/),
// assembled by `-- uses:` lines; the Python package assembles the same bytes
// (tests/python pins the same SHA1s), so a Node and a Python instance share one
// thread with the same atomic scripts and one entry in Redis's script cache.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { jsDir } from './support.mjs';

const { scriptText } = await import(join(jsDir, 'src', 'server', 'store', 'redis-scripts.js'));
const luaDir = join(jsDir, 'src', 'server', 'store', 'lua');

// SHA1 of each assembled script, as Redis's SCRIPT LOAD names it. A change to a
// script changes its pin here and in tests/python/test_redis_scripts.py together.
export const SCRIPT_SHA1 = {
  append: 'f0a09f002fec29bbee80941aab8a85e9c2181911',
  claim: '73774fcc2d5f7e4e7f4d40cbca021873848ad7e4',
  init: 'cd5afdf889abd01159d06f3cdda1d4213f49990f',
  load: 'c164f87e47ebdb907c9ae7abceeb8727ff9b7b8e',
  release: 'e876afdcebb60a802b548226f5062f38af226366',
  reset: 'be99eab3a82568914a08f206572091aa04501457',
};

describe('redisStore Lua scripts', () => {
  test('each script assembles to its pinned bytes', async () => {
    for (const [name, sha] of Object.entries(SCRIPT_SHA1)) {
      assert.equal(createHash('sha1').update(await scriptText(name)).digest('hex'), sha, name);
    }
  });

  test('a library comes before its users, once, and every .lua file is used', async () => {
    const init = await scriptText('init');
    assert.ok(init.indexOf('local function expire') < init.indexOf('local function newLine'));
    assert.equal(init.split('local function expire').length, 2);
    const used = new Set(Object.keys(SCRIPT_SHA1));
    for (const name of Object.keys(SCRIPT_SHA1)) {
      for (const m of (await scriptText(name)).matchAll(/^-- uses:(.*)$/gm)) m[1].split(' ').filter(Boolean).forEach((l) => used.add(l));
    }
    assert.deepEqual(readdirSync(luaDir).filter((f) => f.endsWith('.lua')).map((f) => f.slice(0, -4)).sort(), [...used].sort());
  });
});
