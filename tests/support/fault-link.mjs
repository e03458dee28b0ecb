// A real faulty link for tests: a TCP proxy on 127.0.0.1 between a client and
// a server (this machine's kernel has no netem qdisc, so the faults live in
// userspace). Each accepted connection is forwarded to `target`; the server's
// bytes back to the client are re-chunked, delayed, stalled and cut at a
// byte offset, all decided by a PRNG seeded from (seed, connection index), so
// a seed replays the same faults on every run. Requests (client to server)
// pass through untouched. Only loopback addresses are ever used.
import net from 'node:net';

/** splitmix32-style generator: deterministic floats in [0, 1). */
export function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
}

const DEFAULTS = {
  cutProbability: 0, // chance that a connection is cut at all
  cutAfterBytes: [200, 4000], // where a cut connection is cut (server-to-client bytes)
  stallProbability: 0, // chance per forwarded chunk of a stall
  stallMs: 300,
  delayMs: [0, 0], // per forwarded chunk
  chunkBytes: [1, 1024], // re-chunking of the server's bytes
};

/**
 * Starts the link. options: { target: { host: '127.0.0.1', port }, seed, ...faults (DEFAULTS) }.
 * Returns { port, url(path), setFaults(partial), stats, close() }.
 */
export async function startFaultLink(options) {
  const { target, seed = 1 } = options;
  if (!target || target.host !== '127.0.0.1') throw new Error('fault link: the target must be on 127.0.0.1');
  let faults = { ...DEFAULTS, ...pick(options) };
  const stats = { connections: 0, cuts: 0, stalls: 0, bytes: 0 };
  const sockets = new Set();
  const server = net.createServer((client) => {
    const index = stats.connections++;
    link(client, target, prng((seed * 1000003 + index) >>> 0), faults, stats, sockets);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    port,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    stats,
    /** New faults for connections accepted from now on. */
    setFaults(partial) {
      faults = { ...faults, ...pick(partial) };
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function pick(options) {
  const out = {};
  for (const key of Object.keys(DEFAULTS)) if (options[key] !== undefined) out[key] = options[key];
  return out;
}

function between(random, [lo, hi]) {
  return lo + Math.floor(random() * (hi - lo + 1));
}

// One client connection: forward the request, then feed the response back
// through the fault schedule. Either side closing closes the other.
function link(client, target, random, faults, stats, sockets) {
  const upstream = net.connect(target.port, target.host);
  sockets.add(client);
  sockets.add(upstream);
  const cutAt = random() < faults.cutProbability ? between(random, faults.cutAfterBytes) : Infinity;
  let sent = 0;
  let queue = Promise.resolve();
  const closeBoth = () => {
    client.destroy();
    upstream.destroy();
    sockets.delete(client);
    sockets.delete(upstream);
  };
  client.on('data', (chunk) => upstream.write(chunk));
  client.on('error', closeBoth);
  client.on('close', closeBoth);
  upstream.on('error', closeBoth);
  upstream.on('close', () => {
    queue = queue.then(() => client.end());
  });
  upstream.on('data', (chunk) => {
    upstream.pause();
    queue = queue.then(() => forward(chunk)).then(() => upstream.resume(), closeBoth);
  });

  async function forward(chunk) {
    for (let offset = 0; offset < chunk.length && !client.destroyed;) {
      const size = Math.min(chunk.length - offset, between(random, faults.chunkBytes));
      let piece = chunk.subarray(offset, offset + size);
      offset += size;
      const delay = between(random, faults.delayMs);
      if (random() < faults.stallProbability) {
        stats.stalls++;
        await sleep(faults.stallMs);
      }
      if (delay > 0) await sleep(delay);
      if (sent + piece.length >= cutAt) {
        piece = piece.subarray(0, cutAt - sent);
        if (piece.length) client.write(piece);
        stats.cuts++;
        stats.bytes += piece.length;
        closeBoth();
        return;
      }
      sent += piece.length;
      stats.bytes += piece.length;
      client.write(piece);
    }
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
