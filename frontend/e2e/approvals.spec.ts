// Trust: a rule that asks, written into the running hub's config file (hot reload), holds an MCP
// call from a client without elicitation until the user answers in the dashboard's approvals
// panel, which is visible from every view and counts what waits. Allow lets the call run; Deny
// refuses it with the reason. The Activity view then shows both calls by client, decision and
// path, and finds one by its path.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';

const dash = useDashboard('approvals');

interface ApprovalList {
  approvals: { id: string; tool: string }[];
  policy: { rules: number; path: string; error?: string };
}

describe('approvals', () => {
  // The shared hub runs with HOME = dirname(workspace); its config file is the default path.
  const configFile = () => path.join(path.dirname(dash.server.workspace), '.config', 'switchboard', 'config.toml');
  afterAll(() => rmSync(configFile(), { force: true })); // back to the built-in allow-all policy

  it('a rule added to the config file asks; the dashboard panel allows one call and denies another', async () => {
    mkdirSync(path.dirname(configFile()), { recursive: true });
    writeFileSync(
      configFile(),
      '[policy]\nask_timeout = "60s"\n[[policy.rules]]\ntool = "file_write"\nargs = { path = "approve-e2e/*" }\naction = "ask"\n',
    );
    await expect
      .poll(async () => (await api<ApprovalList>(dash.server, 'GET', '/api/approvals')).policy.rules, { timeout: 10_000 })
      .toBe(1);

    await dash.open('overview');
    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-asking', version: '1' });
    try {
      const allowed = client.request('tools/call', { name: 'file_write', arguments: { path: 'approve-e2e/yes.txt', content: 'approved' } }, 60_000);
      const item = dash.page.locator(tid('approval'), { hasText: 'e2e-asking wants to run file_write' });
      await item.waitFor();
      expect(await dash.text(tid('approvals-count'))).toBe('1');
      expect(await item.locator(tid('approval-args')).textContent()).toContain('path: approve-e2e/yes.txt');
      // Visible from every view.
      for (const t of ['sessions', 'processes', 'activity']) {
        await dash.page.locator(tid(`tab-${t}`)).click();
        await item.waitFor();
      }
      await item.locator(tid('approval-allow')).click();
      const res = (await allowed) as { isError?: boolean };
      expect(res.isError ?? false).toBe(false);
      expect(readFileSync(path.join(dash.server.workspace, 'approve-e2e', 'yes.txt'), 'utf8')).toBe('approved');
      await dash.gone(tid('approvals-panel'));

      const denied = client.request('tools/call', { name: 'file_write', arguments: { path: 'approve-e2e/no.txt', content: 'x' } }, 60_000);
      await dash.page.locator(tid('approval'), { hasText: 'file_write' }).locator(tid('approval-deny')).click();
      const res2 = (await denied) as { isError?: boolean; content?: { text?: string }[] };
      expect(res2.isError).toBe(true);
      expect(res2.content?.[0]?.text).toContain('declined on the dashboard');
      expect(existsSync(path.join(dash.server.workspace, 'approve-e2e', 'no.txt'))).toBe(false);
      await dash.gone(tid('approvals-panel'));

      // The Activity view tells the two calls apart: the client by name and transport (its
      // session id in the tooltip), how each was decided and by whom, and the path each wrote
      // (the value from the hub's memory; the content stays a size and hash). The filter finds
      // a call by its path.
      await dash.page.locator(tid('tab-activity')).click();
      const yes = dash.page.locator(tid('activity-row', { tool: 'file_write', client: 'e2e-asking', decision: 'approved' }));
      const no = dash.page.locator(tid('activity-row', { tool: 'file_write', client: 'e2e-asking', decision: 'declined' }));
      await yes.waitFor();
      await no.waitFor();
      expect((await yes.locator(tid('activity-client')).textContent())?.replace(/\s+/g, ' ').trim()).toBe('e2e-asking · unix');
      expect(await yes.locator(tid('activity-client')).getAttribute('title')).toMatch(/^session unix-\d+$/);
      expect(await yes.locator(tid('activity-decision')).textContent()).toContain('asked → approved');
      expect(await yes.locator(tid('activity-decision')).textContent()).toContain('on the dashboard');
      expect(await no.locator(tid('activity-decision')).textContent()).toContain('asked → declined');
      const args = (await yes.locator(tid('activity-args')).textContent()) ?? '';
      expect(args).toContain('approve-e2e/yes.txt');
      expect(args).toMatch(/content\s+<8 bytes sha256=[0-9a-f]{12}…>/); // the whole hash is in the tooltip
      expect(await yes.locator(tid('activity-args')).getAttribute('title')).toMatch(/content=<8 bytes sha256=[0-9a-f]{64}>/);
      expect(args).not.toContain('approved'); // the content itself ("approved") never reaches the page

      await dash.page.locator(tid('activity-filter-text')).fill('APPROVE-E2E/YES');
      await expect.poll(() => dash.page.locator(tid('activity-row')).count()).toBe(1);
      await yes.waitFor();
      // By decision: the declined call stays, the approved one goes (the hub is shared with the
      // other specs, whose own declined calls may show too).
      await dash.page.locator(tid('activity-filter-text')).fill('declined');
      await no.waitFor();
      await expect.poll(() => yes.count()).toBe(0);
      await dash.page.locator(tid('activity-filter-clear')).click();
      await expect.poll(() => dash.page.locator(tid('activity-row')).count()).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
    }
  });

  it('a question says which session asked, and is withdrawn the moment its client goes away', async () => {
    await dash.open('overview');
    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-leaving', version: '1' });
    const pending = client.request('tools/call', { name: 'file_write', arguments: { path: 'approve-e2e/gone.txt', content: 'x' } }, 60_000);
    pending.catch(() => {}); // the connection closes under it
    const item = dash.page.locator(tid('approval'), { hasText: 'e2e-leaving wants to run file_write' });
    await item.waitFor();
    expect(await item.locator(tid('approval-session')).textContent()).toMatch(/^unix-\d+/);
    await client.close();
    const gone = dash.page.locator(tid('approval-withdrawn'), { hasText: 'e2e-leaving' });
    await gone.waitFor();
    expect(await gone.textContent()).toContain("client's connection closed");
    await dash.gone(tid('approvals-panel'));
    expect(existsSync(path.join(dash.server.workspace, 'approve-e2e', 'gone.txt'))).toBe(false);
  });
});
