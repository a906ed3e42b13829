// Settings shared by the e2e config, the global setup and the specs. Plain data only: this module
// is imported both by Vitest's main process (config, global setup) and by the test workers.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** frontend/ */
export const frontendDir = fileURLToPath(new URL('..', import.meta.url));
/** The Go module root (the binary is built from here). */
export const repoDir = path.resolve(frontendDir, '..');
/** Screenshots, server logs and browser console logs of a run. */
export const artifactsDir = path.join(repoDir, 'build', 'test-artifacts', 'e2e');

/** Debian's Chromium (build/setup-deps.sh installs it); SWITCHBOARD_E2E_CHROMIUM overrides. */
export const chromiumPath = process.env.SWITCHBOARD_E2E_CHROMIUM || '/usr/bin/chromium';

// Chromium runs as root on a closed network here: without these flags it refuses to start
// (sandbox) or stalls on background requests that can never connect.
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Wide enough for the two-column layouts (lists beside detail panes). */
export const viewport = { width: 1440, height: 1000 };

/** Longest wait for one UI condition. Generous: two shared cores, a browser and two servers. */
export const uiTimeout = 15_000;
