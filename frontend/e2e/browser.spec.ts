// Browser view: an agent launches the hub's private Chromium and drives it through MCP tools
// (`switchboard call --socket`); the dashboard shows the page's title, URL, a live screenshot that
// changes after navigation, and the page's console, without a reload. Disconnecting empties it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { callTool } from './stack';

const dash = useDashboard('browser');
let server: http.Server;
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    if (req.url?.startsWith('/two')) {
      res.end('<!doctype html><title>Second page</title><body style="background:#0a4"><h1>Two</h1></body>');
    } else {
      // The first page sends its <title> a moment after the document is committed, as a slow
      // page (or a busy machine) does: Chrome announces the navigation with "host:port" as the
      // title and never announces the parsed one, so the view must learn it from the load.
      res.write('<!doctype html><html><head>');
      setTimeout(() => {
        res.end('<title>First page</title></head><body style="background:#fff"><h1>One</h1><button onclick="console.error(\'clicked in the page\')">Press</button></body></html>');
      }, 500);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await callTool(inject('bin'), dash.server.socket, 'webview_disconnect', {}).catch(() => {});
  server?.close();
});

const call = (tool: string, args: object) => callTool(inject('bin'), dash.server.socket, tool, args);

describe('browser', () => {
  it('shows what the agent sees, live', async () => {
    const page = dash.page;
    await dash.open('browser');
    await dash.see(tid('browser-empty'));

    await call('webview_launch', { url: `${base}/` });
    await call('webview_wait', { selector: 'button' });
    await expect.poll(() => page.locator(tid('browser-title')).textContent().catch(() => ''), { timeout: 15_000 }).toBe('First page');
    expect(await dash.text(tid('browser-url'))).toBe(`${base}/`);
    expect(await page.locator(tid('browser-mode')).textContent()).toBe('launched');
    const shot = page.locator(tid('browser-screenshot'));
    await shot.waitFor();
    const first = (await shot.getAttribute('src'))!;
    expect(first.startsWith('data:image/jpeg;base64,')).toBe(true);

    // An action in the page: its console error reaches the console tail.
    await call('webview_click', { selector: 'button' });
    await dash.see(tid('browser-console-line', { type: 'error' }));
    expect(await dash.text(tid('browser-console-line', { type: 'error' }))).toContain('clicked in the page');

    // Navigation: title, URL and screenshot follow.
    await call('webview_navigate', { url: `${base}/two` });
    await expect.poll(() => page.locator(tid('browser-title')).textContent(), { timeout: 15_000 }).toBe('Second page');
    expect(await dash.text(tid('browser-url'))).toBe(`${base}/two`);
    await expect.poll(() => shot.getAttribute('src'), { timeout: 15_000 }).not.toBe(first);

    // Disconnect: the view says so and the picture is gone.
    await call('webview_disconnect', {});
    await dash.see(tid('browser-empty'));
    expect(await page.locator(tid('browser-screenshot')).count()).toBe(0);
  });
});
