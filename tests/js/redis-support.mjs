// A real redis-server (Debian's package, installed by `make test`) for the
// store tests: started on a free 127.0.0.1 port with its own temp dir, stopped
// and started again by the tests (the same port and dir, so the data written
// with appendonly survives a restart like a production Redis). Not a test file.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = process.env.REDIS_SERVER ?? 'redis-server';

/** Throws a clear message when redis-server is not installed (make deps installs it). */
export function requireRedisServer() {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new Error(`${BINARY} not found: run \`make deps\` (Debian package redis-server)`);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export class RedisServer {
  port;
  dir;
  #child = null;

  static async start() {
    requireRedisServer();
    const server = new RedisServer();
    server.port = await freePort();
    server.dir = mkdtempSync(join(tmpdir(), 'agui-redis-'));
    await server.restart();
    return server;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running() {
    return this.#child !== null;
  }

  /** Starts redis-server (again) on the same port and dir; resolves once it accepts connections. */
  async restart() {
    if (this.#child) return;
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '',
      '--appendonly', 'yes', '--appendfsync', 'always', '--daemonize', 'no', '--protected-mode', 'yes', '--loglevel', 'warning'];
    const child = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.once('exit', () => { if (this.#child === child) this.#child = null; });
    const deadline = Date.now() + 10000;
    while (!(await accepts(this.port))) {
      if (this.#child !== child) throw new Error(`redis-server exited: ${output}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not start on ${this.port}: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops it (SIGTERM: an orderly shutdown, the append-only file kept) and waits for the exit. */
  async stop() {
    const child = this.#child;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    this.#child = null;
  }

  async close() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// True when something answers PING on 127.0.0.1:port.
function accepts(port) {
  return new Promise((resolve) => {
    import('node:net').then(({ connect }) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => { socket.destroy(); resolve(String(d).startsWith('+PONG')); });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => { socket.destroy(); resolve(false); });
    });
  });
}
