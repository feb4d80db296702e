import { defineConfig } from 'electron-vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { resolve } from 'node:path';

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rollupOptions: {
        // The audit import's worker thread is its own entry, found beside the code that starts it
        // (import.ts looks for ./stage-worker.js): shared chunks stay in out/main for that reason.
        input: {
          index: resolve(import.meta.dirname, 'electron/main/index.ts'),
          'stage-worker': resolve(import.meta.dirname, 'electron/core/audit/stage-worker.ts'),
        },
        output: { entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // A sandboxed preload cannot require anything but electron: bundle it as one CommonJS file.
      rollupOptions: {
        input: resolve(import.meta.dirname, 'electron/preload/index.ts'),
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(import.meta.dirname, 'renderer'),
    plugins: [svelte({ configFile: resolve(import.meta.dirname, 'svelte.config.js') })],
    resolve: { alias: { $shared: resolve(import.meta.dirname, 'shared') } },
    build: {
      outDir: resolve(import.meta.dirname, 'out/renderer'),
      // Every window and tab parses the whole script as it opens: 0.9 MB minified against 1.7 MB.
      minify: true,
      rollupOptions: {
        input: resolve(import.meta.dirname, 'renderer/index.html'),
        output: {
          codeSplitting: {
            groups: [
              { name: 'svelte', test: /node_modules[\\/]svelte[\\/]/ },
              { name: 'zod', test: /node_modules[\\/]zod[\\/]|zod-jitless/ },
              { name: 'catalogue', test: /shared[\\/](catalogue|official)[\\/]/ },
            ],
          },
        },
      },
    },
  },
});
