// Processes view: a real process started from the form streams its output into the terminal,
// input typed in the page reaches its stdin and echoes back, Stop and Kill end real processes,
// and a process another MCP client starts shows up in the list live.
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Page } from 'playwright-core';
import { recording, startRecording, tid, useDashboard } from './fixtures';
import { callTool } from './stack';

const dash = useDashboard('processes');

/** The terminal's rendered text (xterm's DOM renderer: one element per row). */
function terminalText(page: Page): Promise<string> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid="process-output"] .xterm-rows > *'))
      .map((r) => (r.textContent ?? '').trimEnd())
      .join('\n'),
  );
}

async function waitForTerminal(page: Page, text: string): Promise<void> {
  await expect.poll(() => terminalText(page), { timeout: 15_000 }).toContain(text);
}

/** True while the OS still has a process with this pid. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('processes', () => {
  it('streams output live, echoes input sent from the page, and stops the process', async () => {
    const page = dash.page;
    await dash.open('processes');
    await startRecording(page, 'chars', tid('process-output'), false);

    await page.locator(tid('process-start-command')).fill('sh');
    await page.locator(tid('process-start-args')).fill(`-c 'for i in 1 2 3; do echo line$i; sleep 0.3; done; cat'`);
    await page.locator(tid('process-start')).click();

    // Starting selects the new process: its terminal opens beside the list.
    const output = page.locator(tid('process-output'));
    await output.waitFor();
    const id = (await output.getAttribute('data-process-id'))!;
    const row = page.locator(tid('process-row', { 'process-id': id }));
    expect(await row.getAttribute('data-status')).toBe('running');
    expect(await row.textContent()).toContain("sh -c for i in 1 2 3");
    const pid = Number(await row.locator('td.num').textContent());
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);

    await waitForTerminal(page, 'line1\nline2\nline3');

    await page.locator(tid('process-input')).fill('hello from the page');
    await page.locator(tid('process-input-send')).click();
    await waitForTerminal(page, 'line3\nhello from the page'); // cat echoed our stdin
    expect(await page.locator(tid('process-input')).inputValue()).toBe('');

    // The terminal grew while we watched (input echo at the least), never shrank, and holds at
    // least everything the process wrote.
    const chars = (await recording(page, 'chars'))
      .map((f) => f.find((el) => el.processId === id)?.chars)
      .filter((c): c is string => c !== undefined)
      .map(Number);
    const distinct = [...new Set(chars)];
    expect(distinct.length, `data-chars states: ${chars}`).toBeGreaterThanOrEqual(2);
    expect(chars).toEqual([...chars].sort((a, b) => a - b));
    expect(chars.at(-1)).toBeGreaterThanOrEqual('line1\nline2\nline3\nhello from the page\n'.length);

    await page.locator(tid('process-stop')).click();
    await page.locator(tid('process-row', { 'process-id': id, status: 'stopped' })).waitFor();
    await dash.see(tid('process-detail-status', { status: 'stopped' }));
    expect(await page.locator(tid('process-stop')).isDisabled()).toBe(true);
    expect(await page.locator(tid('process-input')).isDisabled()).toBe(true);
    await expect.poll(() => alive(pid)).toBe(false);

    // What the person did here is in the audit trail, and the Activity view shows it as theirs.
    await dash.open('activity');
    for (const tool of ['process_start', 'process_input', 'process_stop']) {
      await page.locator(tid('activity-row', { tool, actor: 'dashboard' })).first().waitFor();
    }
  });

  it('shows a process started by another MCP client live, and kills it', async () => {
    const page = dash.page;
    await dash.open('processes');
    const started = (await callTool(inject('bin'), dash.server.socket, 'process_start', {
      command: 'sh',
      args: ['-c', 'echo ready; exec sleep 300'],
    })) as { id: string; pid: number };
    expect(started.id).toBeTruthy();

    const row = page.locator(tid('process-row', { 'process-id': started.id, status: 'running' }));
    await row.waitFor();
    await row.click();
    await dash.see(tid('process-output', { 'process-id': started.id }));
    await waitForTerminal(page, 'ready');
    expect(alive(started.pid)).toBe(true);

    await page.locator(tid('process-kill')).click();
    await page.locator(tid('process-row', { 'process-id': started.id, status: 'killed' })).waitFor();
    await dash.see(tid('process-detail-status', { status: 'killed' }));
    expect(await page.locator(tid('process-kill')).isDisabled()).toBe(true);
    await expect.poll(() => alive(started.pid)).toBe(false);
  });
});
