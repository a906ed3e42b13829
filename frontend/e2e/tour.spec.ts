// A screenshot tour of the dashboard, for a person to look at: every tab at 1200x800 (the window's
// default size) and 1440x900, light and dark, what the window shows and the whole page. Off unless
// SWITCHBOARD_TOUR names a directory to write them to (nothing is asserted beyond each view
// loading):
//
//   cd frontend && SWITCHBOARD_TOUR=/tmp/shots npm run e2e -- e2e/tour.spec.ts
//
// Its own switchboard, fed by the shared simulator, with something in every view: an MCP client
// that made a few calls, a process writing output, one upstream server approved with its tools
// and one written into the config file by hand (waiting for its command's approval).
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, it, inject } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';
import { repoDir } from './settings';
import { Switchboard } from './stack';

const dir = process.env.SWITCHBOARD_TOUR ?? '';
const TABS = ['overview', 'sessions', 'clients', 'servers', 'builds', 'processes', 'knowledge', 'browser', 'activity', 'logs', 'settings'];
const SIZES = [
  { width: 1200, height: 800 },
  { width: 1440, height: 900 },
];

let sb: Switchboard;
let client: McpClient | null = null;
const dash = useDashboard('tour', () => sb.info!);

describe.skipIf(!dir)('tour', () => {
  beforeAll(async () => {
    sb = new Switchboard(inject('bin'), 'tour-switchboard');
    const info = await sb.start(inject('sim').url);
    const fixture = path.join(repoDir, 'test', 'node', 'upstream-fixture.mjs');
    await api(info, 'POST', '/api/servers', { name: 'fixture', command: 'node', args: [fixture] });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = await api<{ servers: { name: string; tools?: unknown[] }[] }>(info, 'GET', '/api/servers');
      if (list.servers.find((s) => s.name === 'fixture')?.tools?.length) break;
      if (Date.now() > deadline) throw new Error('the fixture server listed no tools');
      await new Promise((r) => setTimeout(r, 300));
    }
    await api(info, 'POST', '/api/servers/fixture/approve', { tools: [] });
    const config = path.join(info.home, '.config', 'switchboard', 'config.toml');
    appendFileSync(config, `\n[[servers]]\nname = "byhand"\ncommand = "node"\nargs = [${JSON.stringify(fixture)}]\n`);
    client = await McpClient.connect({ path: info.socket }, { name: 'tour-agent', version: '1.0.0' });
    await client.callTool('file_write', { path: 'notes/hello.md', content: '# Hello\n' });
    await client.callTool('dir_list', { path: '.' });
    await api(info, 'POST', '/api/processes', { command: 'sh', args: ['-c', 'for i in 1 2 3; do echo "line $i"; done; sleep 300'] });
    mkdirSync(dir, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await client?.close();
    await sb?.stop();
  });

  for (const scheme of ['light', 'dark'] as const) {
    for (const size of SIZES) {
      it(`${scheme} ${size.width}x${size.height}`, async () => {
        const page = dash.page;
        await page.emulateMedia({ colorScheme: scheme });
        await page.setViewportSize(size);
        await dash.open();
        for (const t of TABS) {
          await page.locator(tid(`tab-${t}`)).click();
          await page.locator(`main[data-view="${t}"]`).waitFor();
          await page.waitForTimeout(800); // lists filled from the API, charts drawn
          const name = `${scheme}-${size.width}x${size.height}-${t}`;
          await page.screenshot({ path: path.join(dir, `${name}.png`) });
          await page.screenshot({ path: path.join(dir, `${name}-full.png`), fullPage: true });
        }
        // What opens on a click: a client's Connect preview (the table's last row), and Settings
        // with a change not saved yet, then its review.
        const prefix = `${scheme}-${size.width}x${size.height}`;
        await page.locator(tid('tab-clients')).click();
        const connect = page.locator(`${tid('client-row')} ${tid('client-connect')}`).last();
        await connect.click();
        await page.locator(tid('client-preview')).waitFor();
        await page.screenshot({ path: path.join(dir, `${prefix}-clients-preview.png`) });
        await page.keyboard.press('Escape');
        await dash.open('settings/policy');
        await page.locator(tid('settings-policy-timeout')).fill('45s');
        await page.locator(tid('settings-save-bar', { changed: 'policy' })).waitFor();
        await page.screenshot({ path: path.join(dir, `${prefix}-settings-unsaved.png`) });
        await page.locator(tid('settings-review-open')).click();
        await page.locator(tid('settings-review')).waitFor();
        await page.screenshot({ path: path.join(dir, `${prefix}-settings-review.png`) });
        await page.locator(tid('settings-review-close')).click();
        await page.locator(tid('settings-discard')).click();
      });
    }
  }
});
