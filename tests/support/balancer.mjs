// A small round-robin TCP balancer on 127.0.0.1 for the fleet tests: each
// accepted connection goes to the next backend port; one that refuses the
// connection is skipped (as a health-checked balancer does). Only loopback.
import net from 'node:net';

/** Starts it over `ports` (a list that may change later): a net.Server; its port is server.address().port. */
export async function startBalancer(ports) {
  let next = 0;
  const balancer = net.createServer((client) => {
    client.pause();
    const tryBackend = (attempt) => {
      if (attempt >= ports.length) return client.destroy();
      const backend = net.connect(ports[(next + attempt) % ports.length], '127.0.0.1');
      backend.once('error', () => tryBackend(attempt + 1));
      backend.once('connect', () => {
        next = (next + attempt + 1) % ports.length;
        backend.removeAllListeners('error');
        client.pipe(backend).pipe(client);
        client.resume();
        const close = () => { client.destroy(); backend.destroy(); };
        client.on('error', close).on('close', close);
        backend.on('error', close).on('close', close);
      });
    };
    tryBackend(0);
  });
  await new Promise((resolve) => balancer.listen(0, '127.0.0.1', resolve));
  return balancer;
}
