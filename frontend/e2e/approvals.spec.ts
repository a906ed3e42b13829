// Trust: a rule that asks, written into the running hub's config file (hot reload), holds an MCP
// call from a client without elicitation until the user answers in the dashboard's approvals
// panel, which is visible from every view and counts what waits. Allow lets the call run; Deny
// refuses it with the reason.
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
