// The dashboard's layout where a person notices it, against its own switchboard (it adds servers,
// which the shared hub's specs expect not to find): the tab bar stays one row at the window's
// default size (1200x800) and at 1440x900 with badges showing, and keeps its height when a badge
// appears (the page does not jump), nor do the tabs move when another is chosen; a long address wraps after a separator, never inside a name;
// in the Servers view a server waiting for the user comes before an approved server and its tools.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';
import { repoDir, viewport } from './settings';
import { Switchboard } from './stack';

let sb: Switchboard;
const dash = useDashboard('layout', () => sb.info!);
const fixture = path.join(repoDir, 'test', 'node', 'upstream-fixture.mjs');

beforeAll(async () => {
  sb = new Switchboard(inject('bin'), 'layout-switchboard');
  await sb.start(inject('sim').url);
});

afterAll(async () => {
  await dash.page.setViewportSize(viewport);
  await sb?.stop();
});

/** The tab bar: its height, one tab's height, and how many rows the tabs sit on. */
async function tabBar(page: Page): Promise<{ height: number; tab: number; rows: number; header: number }> {
  return page.evaluate(() => {
    const bar = document.querySelector<HTMLElement>('[data-testid="tabs"]')!;
    const tabs = Array.from(bar.querySelectorAll<HTMLElement>('[role="tab"]'));
    return {
      height: bar.clientHeight,
      tab: tabs[0].offsetHeight,
      rows: new Set(tabs.map((t) => t.offsetTop)).size,
      header: document.querySelector('header')!.getBoundingClientRect().height,
    };
  });
}

describe('layout', () => {
  it('keeps the tab bar on one row at 1200x800 and 1440x900, with badges, without a jump when one appears', async () => {
    const page = dash.page;
    const client = await McpClient.connect({ path: sb.info!.socket }, { name: 'layout-agent', version: '1' });
    try {
      for (const size of [
        { width: 1200, height: 800 },
        { width: 1440, height: 900 },
      ]) {
        await page.setViewportSize(size);
        await dash.open('overview');
        // The session badge (this client) and the builds badge (the simulator's demo builds).
        await page.locator(tid('tab-sessions')).locator(tid('tab-count')).waitFor();
        await page.locator(tid('tab-builds')).locator(tid('tab-count')).waitFor();
        const before = await tabBar(page);
        expect(before.rows, `tabs on one row at ${size.width}x${size.height}`).toBe(1);
        expect(before.height).toBeLessThan(before.tab * 2);
        // No tab hidden by the bar's scrolling at these sizes: every tab is in the window.
        expect(await page.evaluate(() => {
          const bar = document.querySelector<HTMLElement>('[data-testid="tabs"]')!;
          return bar.scrollWidth <= bar.clientWidth;
        })).toBe(true);

        // A badge appears (a running process): same rows, same header height.
        const p = await api<{ id: string }>(sb.info!, 'POST', '/api/processes', { command: 'sleep', args: ['60'] });
        await page.locator(tid('tab-processes')).locator(tid('tab-count')).waitFor();
        const after = await tabBar(page);
        expect(after.rows).toBe(1);
        expect(after.header).toBe(before.header);
        await api(sb.info!, 'POST', `/api/processes/${p.id}/kill`);
        await dash.gone(`${tid('tab-processes')} ${tid('tab-count')}`);
      }

      // Choosing a tab moves no other tab (the current one is not set in wider bold text).
      const lefts = () => page.locator('[role="tab"]').evaluateAll((tabs) => tabs.map((t) => Math.round(t.getBoundingClientRect().left)));
      const at = await lefts();
      await page.locator(tid('tab-clients')).click();
      await page.locator('main[data-view="clients"]').waitFor();
      expect(await lefts()).toEqual(at);

      // Keyboard: arrows move between tabs (the ARIA tabs pattern).
      await page.locator(tid('tab-overview')).focus();
      await page.keyboard.press('ArrowRight');
      await page.locator('main[data-view="sessions"]').waitFor();
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('tab-sessions');
      await page.keyboard.press('End');
      await page.locator('main[data-view="settings"]').waitFor();
    } finally {
      await client.close();
    }
  });

  it('lists a server waiting for approval before an approved one and its tool table, and wraps its address after separators', async () => {
    const page = dash.page;
    await page.setViewportSize({ width: 1200, height: 800 });
    // An approved server with its tools, then one written into the config file by hand.
    await api(sb.info!, 'POST', '/api/servers', { name: 'approved', command: 'node', args: [fixture] });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = await api<{ servers: { name: string; tools?: unknown[] }[] }>(sb.info!, 'GET', '/api/servers');
      if (list.servers.find((s) => s.name === 'approved')?.tools?.length) break;
      if (Date.now() > deadline) throw new Error('the fixture listed no tools');
      await new Promise((r) => setTimeout(r, 300));
    }
    await api(sb.info!, 'POST', '/api/servers/approved/approve', { tools: [] });
    appendFileSync(path.join(sb.info!.home, '.config', 'switchboard', 'config.toml'), `\n[[servers]]\nname = "waiting"\ncommand = "node"\nargs = [${JSON.stringify(fixture)}]\n`);

    await dash.open('servers');
    await page.locator(tid('server-row', { name: 'waiting', 'command-approved': 'false' })).waitFor({ timeout: 30_000 });
    await page.locator(tid('server-row', { name: 'approved', approved: 'true' })).locator(tid('server-tools')).waitFor();
    expect(await page.locator(tid('server-row')).evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.name))).toEqual(['waiting', 'approved']);
    // The waiting server is in the window without scrolling, its Approve… button too.
    const approve = (await page.locator(tid('server-row', { name: 'waiting' })).locator(tid('server-approve')).boundingBox())!;
    expect(approve.y + approve.height).toBeLessThanOrEqual(800);

    // The config file's path wraps after a separator: every line of it ends at a /, . or similar.
    const lines = await page.locator(tid('servers-config-path')).evaluate((el) => {
      const range = document.createRange();
      const text = el.textContent ?? '';
      const tops: { top: number; ch: string }[] = [];
      let offset = 0;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (let i = 0; i < (n.textContent ?? '').length; i++) {
          range.setStart(n, i);
          range.setEnd(n, i + 1);
          tops.push({ top: Math.round(range.getBoundingClientRect().top), ch: text[offset + i] });
        }
        offset += (n.textContent ?? '').length;
      }
      // The last character of each line but the last.
      return tops.filter((t, i) => i + 1 < tops.length && tops[i + 1].top > t.top).map((t) => t.ch);
    });
    for (const ch of lines) expect('/:.?&=_').toContain(ch);
  });
});
