import { defineConfig } from 'vite';

// The page imports 'agui-state-sync/ag-ui' like any app. package.json points it
// at this repository's package (file:../../js), which npm installs as a symlink:
// preserveSymlinks resolves the package's own imports (@ag-ui/client, rxjs,
// react) from this folder's node_modules, as they would be from an app's,
// rather than from the repository root beside js/. CopilotKit keeps its own
// nested @ag-ui/client, so that one must not be deduplicated.
export default defineConfig({
  resolve: { preserveSymlinks: true, dedupe: ['react', 'react-dom'] },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    target: 'es2022',
    emptyOutDir: true,
    chunkSizeWarningLimit: 4096, // CopilotKit's entry chunk is ~2.4 MB
    rolldownOptions: {
      // CopilotKit's dependencies start with "use client" (a React Server
      // Components marker, meaningless in a client bundle): one warning each.
      onLog(level, log, handler) {
        if (log.code !== 'MODULE_LEVEL_DIRECTIVE') handler(level, log);
      },
    },
  },
  logLevel: 'warn',
});
