// Builds view: builds reported by the agentic backend (the simulator in demo mode starts one every
// 4 s, see e2e/stack.ts) appear with repo, branch and status; the log viewer of a running build follows its lines
// live, and the build ends as success or failure.
import { describe, expect, it } from 'vitest';
import { recording, startRecording, tid, useDashboard } from './fixtures';

const dash = useDashboard('builds');

// A demo build logs 40 lines, the last one the verdict (mcp/ide/agenticsim: startDemo, runBuild).
const demoLines = 40;
const demoRepos = ['switchboard', 'agentic-core'];

describe('builds', () => {
  it('lists builds and follows a running build log live to its end', async () => {
    const page = dash.page;
    await dash.open('builds');

    // The first demo build started with the simulator: it is listed with repo, branch and status.
    const rows = page.locator(tid('build-row'));
    await rows.first().waitFor();
    const first = rows.first();
    expect(['running', 'success', 'failed']).toContain(await first.locator(tid('build-status')).getAttribute('data-status'));
    const firstText = (await first.textContent()) ?? '';
    expect(demoRepos.some((r) => firstText.includes(r)), firstText).toBe(true);
    expect(firstText).toContain('main');
    const seen = await rows.evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.buildId!));

    // The next one: select it the moment it shows up running, then watch its log. A demo build
    // lasts about 2 s (40 lines, 50 ms apart), so the click is made by an observer in the page
    // rather than by polling from here, which could arrive after the build had finished.
    await startRecording(page, 'log', `${tid('build-log')}, ${tid('build-log-status')}`);
    await page.evaluate((seen) => {
      const pick = () => {
        const row = Array.from(document.querySelectorAll<HTMLElement>('[data-testid="build-row"][data-status="running"]')).find(
          (r) => !seen.includes(r.dataset.buildId!),
        );
        if (!row) return;
        obs.disconnect();
        row.click();
      };
      const obs = new MutationObserver(pick);
      obs.observe(document.body, { subtree: true, childList: true, attributes: true });
      pick();
    }, seen);
    const detail = page.locator(`${tid('build-detail')}${seen.map((id) => `:not([data-build-id="${id}"])`).join('')}`);
    await detail.waitFor({ timeout: 30_000 });
    const id = (await detail.getAttribute('data-build-id'))!;
    expect(seen).not.toContain(id);

    const done = page.locator(`${tid('build-log-status', { status: 'success' })}, ${tid('build-log-status', { status: 'failed' })}`);
    await done.waitFor({ timeout: 20_000 });
    const status = (await done.getAttribute('data-status'))!;
    const log = page.locator(tid('build-log'));
    await expect.poll(() => log.getAttribute('data-lines')).toBe(String(demoLines));
    const text = (await log.textContent()) ?? '';
    const lines = text.split('\n');
    expect(lines).toHaveLength(demoLines);
    expect(lines[0]).toContain(`[${id}] step 1/${demoLines}`);
    expect(lines.at(-1)).toBe(status === 'success' ? `[${id}] BUILD SUCCESS` : `[${id}] BUILD FAILED: exit status 1`);

    // The list row ends with the same status and a duration; repo and branch are shown.
    const row = page.locator(tid('build-row', { 'build-id': id, status }));
    await row.waitFor();
    expect((await row.locator(tid('build-duration')).textContent())?.trim()).toMatch(/^\d[\d.]*(ms|s|m)/);
    const rowText = (await row.textContent()) ?? '';
    expect(demoRepos.some((r) => rowText.includes(r)), rowText).toBe(true);
    expect(rowText).toContain('main');

    // Live: while the build ran the page showed a partial log that then grew to the full one.
    const frames = await recording(page, 'log');
    const counts = frames
      .map((f) => f.find((el) => el.testid === 'build-log')?.lines)
      .filter((n): n is string => n !== undefined)
      .map(Number);
    const partial = frames.filter((f) => {
      const n = Number(f.find((el) => el.testid === 'build-log')?.lines ?? 0);
      return n > 0 && n < demoLines && f.some((el) => el.testid === 'build-log-status' && el.status === 'running');
    });
    expect(partial.length, `line counts seen: ${counts}`).toBeGreaterThan(0);
    expect(new Set(counts.filter((n) => n > 0)).size, `line counts seen: ${counts}`).toBeGreaterThanOrEqual(2);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });
});
