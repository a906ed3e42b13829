// Logs view: the audit trail read back from the hub's audit file, and the hub's own log, against
// the real binary. A deny rule written into the running hub's config file (hot reload) refuses
// one of an MCP client's calls; with an allowed call and one that fails, the Audit pane lists
// them, filtered by client, tool and decision (the hub filters, the page asks), a row opens on its
// arguments, rule and error, and a call made while the page is open appears on top. The Hub pane
// shows the hub's start-up lines and the policy reload, and follows: a server added through the
// API that crashes at start (the fixture, FIXTURE_MODE=crash-at-start) shows up as a warning,
// which the level filter keeps.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';
import { repoDir } from './settings';

const dash = useDashboard('logs');

interface ApprovalList {
  policy: { rules: number };
}

interface ToolResult {
  isError?: boolean;
  content?: { text?: string }[];
}

describe('logs', () => {
  // The shared hub runs with HOME = dirname(workspace); its config file is the default path.
  const home = () => path.dirname(dash.server.workspace);
  const configFile = () => path.join(home(), '.config', 'switchboard', 'config.toml');
  afterAll(async () => {
    await fetch(`${dash.server.origin}/api/servers/logs-crasher`, { method: 'DELETE', headers: { Authorization: `Bearer ${dash.server.token}` } }).catch(() => {});
    rmSync(configFile(), { force: true }); // back to the built-in allow-all policy
  });

  it('the Audit pane lists calls from the audit file, filters them by client, tool and decision, opens one, and adds new ones live', async () => {
    mkdirSync(path.dirname(configFile()), { recursive: true });
    writeFileSync(configFile(), '[[policy.rules]]\ntool = "file_write"\nargs = { path = "logs-e2e/secret/*" }\naction = "deny"\n');
    await expect.poll(async () => (await api<ApprovalList>(dash.server, 'GET', '/api/approvals')).policy.rules, { timeout: 10_000 }).toBe(1);

    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-logs', version: '1' });
    try {
      const call = (name: string, args: object) => client.request('tools/call', { name, arguments: args }) as Promise<ToolResult>;
      expect((await call('file_write', { path: 'logs-e2e/ok.txt', content: 'fine' })).isError ?? false).toBe(false);
      const refused = await call('file_write', { path: 'logs-e2e/secret/key.txt', content: 'no' });
      expect(refused.isError).toBe(true);
      expect(refused.content?.[0]?.text).toContain('denied by rule 1');
      expect((await call('file_read', { path: 'logs-e2e/missing.txt' })).isError).toBe(true);

      const page = dash.page;
      await dash.open('logs');
      const pane = page.locator(tid('logs', { pane: 'audit' }));
      await pane.waitFor();
      // The hub's other specs called tools too: this client's calls are the newest three.
      const mine = page.locator(tid('audit-row', { client: 'e2e-logs' }));
      await mine.first().waitFor();
      expect(await mine.evaluateAll((rows) => rows.slice(0, 3).map((r) => `${(r as HTMLElement).dataset.tool}:${(r as HTMLElement).dataset.decision}:${(r as HTMLElement).dataset.outcome}`))).toEqual([
        'file_read:allow:error',
        'file_write:deny:error',
        'file_write:allow:ok',
      ]);
      expect(await dash.text(tid('audit-files'))).toContain(path.join(home(), '.local', 'share', 'switchboard', 'logs', 'audit.log'));

      // By client: only this one's calls.
      await page.locator(tid('audit-filter-client')).fill('e2e-logs');
      const rows = page.locator(tid('audit-row'));
      await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.tool))).toEqual(['file_read', 'file_write', 'file_write']);

      // By tool (a prefix, then a glob).
      await page.locator(tid('audit-filter-tool')).fill('file_w');
      await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.tool))).toEqual(['file_write', 'file_write']);
      await page.locator(tid('audit-filter-tool')).fill('*_read');
      await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.tool))).toEqual(['file_read']);

      // By decision: the refused write, opened on its arguments, rule and error.
      await page.locator(tid('audit-filter-tool')).fill('');
      await page.locator(tid('audit-filter-decision')).selectOption('deny');
      await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => `${(r as HTMLElement).dataset.tool}:${(r as HTMLElement).dataset.decision}`))).toEqual(['file_write:deny']);
      await rows.first().click();
      const details = page.locator(tid('audit-details'));
      await details.waitFor();
      expect(await details.locator(tid('audit-detail', { key: 'arguments' })).textContent()).toContain('path="logs-e2e/secret/key.txt"');
      expect(await details.locator(tid('audit-detail', { key: 'arguments' })).textContent()).not.toContain('"no"'); // the content is summarised
      expect(await details.locator(tid('audit-detail', { key: 'policy' })).textContent()).toMatch(/^deny by rule 1/);
      expect(await details.locator(tid('audit-detail', { key: 'error' })).textContent()).toContain('denied by rule 1');

      // A refusal while the page is open: on top, live, through the same filter; an allowed
      // call is not listed.
      await call('file_write', { path: 'logs-e2e/other.txt', content: 'fine' });
      await call('file_write', { path: 'logs-e2e/secret/again.txt', content: 'no' });
      await page.locator(tid('audit-row', { live: 'true' })).waitFor();
      expect(await rows.evaluateAll((rs) => rs.map((r) => `${(r as HTMLElement).dataset.decision}:${(r as HTMLElement).dataset.live}`))).toEqual(['deny:true', 'deny:false']);

      // Clear: every call again, newest first.
      await page.locator(tid('audit-filter-clear')).click();
      await expect.poll(async () => (await rows.count()) >= 5).toBe(true);
      expect(await rows.first().getAttribute('data-decision')).toBe('deny');
      expect(await page.locator(tid('audit-row', { decision: 'allow' })).count()).toBeGreaterThanOrEqual(3);
      expect(await page.locator(tid('control-error')).count()).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('the Hub pane shows the hub log from start-up and follows it; the level filter keeps the warnings', async () => {
    const page = dash.page;
    await dash.open('logs/hub');
    await page.locator(tid('logs', { pane: 'hub' })).waitFor();
    const rows = page.locator(tid('hublog-row'));
    await rows.first().waitFor();
    expect(await dash.text(tid('hublog-file'))).toBe(path.join(home(), '.local', 'share', 'switchboard', 'logs', 'hub.log'));
    await page.locator(tid('hublog-msg'), { hasText: 'policy: reloaded' }).first().waitFor(); // the first test's rule
    await page.locator(tid('hublog-filter-text')).fill('hub started');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator(tid('hublog-attrs')).textContent()).toContain(`workspace=${dash.server.workspace}`);
    await page.locator(tid('hublog-filter-text')).fill('');
    await page.locator(tid('hublog-msg'), { hasText: /^listening$/ }).first().waitFor();

    // Live: a server that crashes at start, added through the API.
    const fixture = path.join(repoDir, 'test', 'node', 'upstream-fixture.mjs');
    await api(dash.server, 'POST', '/api/servers', { name: 'logs-crasher', command: 'node', args: [fixture], env: { FIXTURE_MODE: 'crash-at-start' } });
    const warning = page.locator(tid('hublog-row', { level: 'WARN' }), { hasText: 'servers: logs-crasher exited; restarting' }).first();
    await warning.waitFor({ timeout: 30_000 });
    expect(await warning.locator(tid('hublog-attrs')).textContent()).toContain('exited with status 3');

    await page.locator(tid('hublog-level')).selectOption('WARN');
    await expect.poll(() => rows.evaluateAll((rs) => rs.every((r) => ['WARN', 'ERROR'].includes((r as HTMLElement).dataset.level ?? '')))).toBe(true);
    await warning.waitFor();
    expect(await page.locator(tid('hublog-msg'), { hasText: 'hub started' }).count()).toBe(0);

    // The pane is the route's: back to Audit and here again by the tabs.
    await page.locator(tid('logs-tab-audit')).click();
    await page.locator(tid('logs', { pane: 'audit' })).waitFor();
    expect(new URL(page.url()).hash).toBe('#logs/audit');
    const res = await fetch(`${dash.server.origin}/api/servers/logs-crasher`, { method: 'DELETE', headers: { Authorization: `Bearer ${dash.server.token}` } });
    expect(res.ok).toBe(true);
    expect(await page.locator(tid('control-error')).count()).toBe(0);
  });
});
