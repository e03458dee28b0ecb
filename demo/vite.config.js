import { defineConfig } from 'vite';

// The page imports 'agui-state-sync' like any app; package.json points it at
// the local package (file:../js), so the build uses this repo's WASM engine.
export default defineConfig({
  // The package's React hook and the page must share one React.
  resolve: { dedupe: ['react', 'react-dom'] },
  build: { outDir: 'dist', target: 'es2022', emptyOutDir: true },
  logLevel: 'warn',
});
