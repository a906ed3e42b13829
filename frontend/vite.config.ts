/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// base './' makes every asset URL relative, so the same dist works when the Wails window loads it
// from wails://wails/ and when the headless dashboard serves it at http://127.0.0.1:PORT/.
export default defineConfig(({ mode }) => ({
  base: './',
  plugins: [svelte()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Every view but the Overview is its own chunk, loaded when its tab first opens (App.svelte);
    // the Processes chunk carries xterm.js (~300 kB minified). Local files, so the default 500 kB
    // warning only adds noise.
    chunkSizeWarningLimit: 1024,
    // The build shares two cores with other jobs; rolldown's "slow plugin" report is noise here.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  // `SWITCHBOARD_URL=http://127.0.0.1:PORT npm run dev` serves the dashboard with hot reload and
  // forwards /api to a running headless Switchboard (open http://localhost:5173/?token=TOKEN).
  server: process.env.SWITCHBOARD_URL ? { proxy: { '/api': process.env.SWITCHBOARD_URL } } : undefined,
  // Component tests mount Svelte in jsdom: the "browser" condition selects Svelte's client runtime.
  resolve: mode === 'test' ? { conditions: ['browser'] } : undefined,
  test: {
    // Plain modules run in node; component tests opt into jsdom with a @vitest-environment comment.
    environment: 'node',
    include: ['src/**/*.test.ts'],
    restoreMocks: true,
    // The longest component tests (a whole Settings session) took 7.8 s, over the default 5 s
    // limit, on two cores kept busy by other jobs (load average 12); they wait on events, so a
    // larger budget changes nothing but how long a real hang takes to fail.
    testTimeout: 30_000,
  },
}));
