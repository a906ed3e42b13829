// Waiting for App's views in component tests.

import { expect, vi } from 'vitest';

/**
 * Resolves once App shows the view of `tab`: every view but the Overview is a chunk loaded the
 * first time its tab opens, so a test that opens one waits for it (main's data-view says which).
 * Under Vitest that first load compiles the view's .svelte file on demand, which on a busy
 * machine takes longer than waitFor's default second: the wait is for the view, however long
 * that takes, up to 10 s.
 */
export async function viewShown(tab: string): Promise<void> {
  await vi.waitFor(() => expect(document.querySelector('main')?.dataset.view).toBe(tab), { timeout: 10_000 });
}
