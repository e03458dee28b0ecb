// A Python server script of tests/python/live/ as a child process, once it
// prints "listening <port>": { port, stderr(), exited(), signal(name), close() }. The venv's Python
// (AGUI_PYTHON, else build/venv).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { until } from '../../support/until.mjs';
import { repoRoot } from '../../js/support.mjs';

const PYTHON = process.env.AGUI_PYTHON ?? join(repoRoot, 'build', 'venv', 'bin', 'python');

export async function startPythonServer(script, args = []) {
  const child = spawn(PYTHON, ['-u', join(repoRoot, 'tests', 'python', 'live', script), ...args],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let exited = null;
  child.stdout.on('data', (chunk) => { out += chunk; });
  child.stderr.on('data', (chunk) => { err += chunk; });
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  const match = await until(() => {
    if (exited) throw new Error(`the Python server exited (${JSON.stringify(exited)}): ${err}`);
    return /listening (\d+)/.exec(out);
  }, () => `the Python server to listen (stdout: ${out}, stderr: ${err})`);
  return {
    port: Number(match[1]),
    stderr: () => err,
    exited: () => exited, // { code, signal } once the process is gone, else null
    signal: (name) => child.kill(name),
    async close() {
      if (exited) return;
      child.kill('SIGTERM');
      await until(() => exited, 'the Python server to exit');
    },
  };
}
