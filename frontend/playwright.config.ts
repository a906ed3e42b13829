// End-to-end suite configuration: Playwright (playwright-core, driving Debian's Chromium) against a
// real headless switchboard, run by Vitest. Vitest is the runner because the project already uses
// it and playwright-core ships no test runner; `npm run e2e` runs `vitest run --config` on this file.
// Browser settings (executable, flags, viewport) are in e2e/settings.ts.
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The specs share one switchboard and one simulator, so they run one file at a time, in this
// order. The builds spec waits for the simulator's second demo build, 20 s after it started: first
// in line, the start-up time counts towards that wait (later, it could just miss one and wait a
// full 20 s more). The bridge spec stops a simulator, so it has its own stack and goes last.
const order = ['builds', 'sessions', 'processes', 'transports', 'bridge'];

class SpecOrder extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = order.findIndex((name) => f.moduleId.endsWith(`/${name}.spec.ts`));
      return i < 0 ? order.length : i;
    };
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

export default defineConfig({
  test: {
    include: ['e2e/**/*.spec.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    environment: 'node',
    fileParallelism: false,
    sequence: { sequencer: SpecOrder },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ['verbose'],
  },
});
