// The browser entry of the installed tarball, as a user's page imports it:
// Vite bundles this (tests/install/run.sh) and must emit the engine's .wasm.
import { createStateSync } from 'agui-state-sync';

async function main() {
  const sync = await createStateSync();
  sync.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{"n":1},"metadata":{"seq":1}}\n\n');
  document.getElementById('state').textContent = JSON.stringify(sync.state);
}

main();
