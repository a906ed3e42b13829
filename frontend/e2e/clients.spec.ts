// Clients view: every MCP client with its config file and state in the hub's temporary HOME.
// Gemini CLI's settings (comments, another server) are connected from the page — the preview
// shows the diff first and nothing is written until confirmed — then the state reads "connected
// to this hub", the backup is shown, and Disconnect restores the file. A file the client could
// not read shows its line. The entry carries Gemini CLI's own token (Settings › Client tokens
// lists it; Disconnect revokes it), shown on the page only as a placeholder. A screenshot of the
// view goes to build/test-artifacts/e2e/; with UPDATE_SCREENSHOTS=1 it replaces
// docs/clients-view.png (a test run never changes tracked files).
// In the default window (1200x800), Connect on the table's last row opens its preview right
// under that row, in sight and with the focus; Escape closes it and gives the focus back.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { artifactsDir, repoDir, viewport } from './settings';

const dash = useDashboard('clients');

const geminiSettings = `{
  // picked in /settings
  "theme": "GitHub",
  "mcpServers": {
    "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] }
  }
}
`;

describe('clients', () => {
  it('connects Gemini CLI after showing the diff, shows the backup, and disconnects it', async () => {
    const home = dash.server.home;
    const gemini = path.join(home, '.gemini', 'settings.json');
    mkdirSync(path.dirname(gemini), { recursive: true });
    writeFileSync(gemini, geminiSettings);
    // Windsurf reads strict JSON: a comment makes a file it cannot read.
    const windsurf = path.join(home, '.codeium', 'windsurf', 'mcp_config.json');
    mkdirSync(path.dirname(windsurf), { recursive: true });
    writeFileSync(windsurf, '{\n  // mine\n  "mcpServers": {}\n}\n');

    await dash.open('clients');
    const page = dash.page;
    const row = page.locator(tid('client-row', { client: 'gemini-cli', scope: 'user' }));
    await row.waitFor();
    expect(await row.locator(tid('client-path')).textContent()).toBe(gemini);
    expect(await row.getAttribute('data-state')).toBe('not set up');
    expect(await row.locator(tid('client-installed')).getAttribute('data-installed')).toBe('true');
    // Every client is listed, with project-scope rows for the hub's workspace.
    for (const name of ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'windsurf', 'zed', 'gemini-cli', 'codex', 'cline', 'continue', 'junie']) {
      await page.locator(tid('client-row', { client: name, scope: 'user' })).waitFor();
    }
    expect(await page.locator(tid('client-row', { client: 'gemini-cli', scope: 'project' })).locator(tid('client-path')).textContent()).toBe(
      path.join(dash.server.workspace, '.gemini', 'settings.json'),
    );
    const broken = page.locator(tid('client-row', { client: 'windsurf', scope: 'user', state: 'cannot read the config' }));
    expect(await broken.locator(tid('client-detail')).textContent()).toContain('a comment, which this client');

    // Connect: the preview shows the diff; nothing is written yet.
    await row.locator(tid('client-connect')).click();
    const preview = page.locator(tid('client-preview', { client: 'gemini-cli', action: 'connect', changed: 'true' }));
    await preview.waitFor();
    const diff = (await preview.locator(tid('client-diff')).textContent()) ?? '';
    expect(diff).toContain(`--- ${gemini}`);
    expect(diff).toContain('+    "switchboard": {');
    expect(diff).toContain('"connect"');
    // The client's own token goes into its entry, issued only when the file is written.
    expect(diff).toContain('"SWITCHBOARD_CLIENT_TOKEN": "(a new client token, issued when written)"');
    expect(readFileSync(gemini, 'utf8')).toBe(geminiSettings);
    const shot = process.env.UPDATE_SCREENSHOTS ? path.join(repoDir, 'docs', 'clients-view.png') : path.join(artifactsDir, 'clients-view.png');
    mkdirSync(path.dirname(shot), { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0)); // the preview scrolled into sight; the sticky header at the top of the picture
    await page.screenshot({ path: shot, fullPage: true });

    // Confirm: written with a backup of the original; the row reads connected.
    await preview.locator(tid('client-confirm')).click();
    const result = page.locator(tid('client-result', { client: 'gemini-cli', action: 'connect', applied: 'true' }));
    await result.waitFor();
    const backup = (await result.locator(tid('client-backup')).textContent()) ?? '';
    expect(backup).toContain(`${gemini}.switchboard-backup-`);
    expect(readFileSync(backup, 'utf8')).toBe(geminiSettings);
    await page.locator(tid('client-row', { client: 'gemini-cli', scope: 'user', state: 'connected to this hub' })).waitFor();
    expect(await row.locator(tid('client-state')).textContent()).toBe('connected to this hub');
    const written = readFileSync(gemini, 'utf8');
    expect(written).toContain('// picked in /settings');
    expect(written).toContain('server-filesystem');
    // It carries Gemini CLI's own token: the row says so, Settings › Client tokens lists it, and
    // the page shows no token.
    expect(written).toMatch(/"SWITCHBOARD_CLIENT_TOKEN": "sbc_[A-Za-z0-9_-]+"/);
    expect(await row.locator(tid('client-has-token')).textContent()).toBe('token: gemini-cli');
    const tokens = () => api<{ tokens: { client: string }[] }>(dash.server, 'GET', '/api/settings/client-tokens');
    expect((await tokens()).tokens.map((t) => t.client)).toContain('gemini-cli');
    expect(await page.content()).not.toContain(written.match(/sbc_[A-Za-z0-9_-]+/)![0]);
    // The API agrees with the page.
    const list = await api<{ clients: { name: string; scopes: { scope: string; state: string }[] }[] }>(dash.server, 'GET', '/api/clients');
    expect(list.clients.find((c) => c.name === 'gemini-cli')?.scopes.find((s) => s.scope === 'user')?.state).toBe('connected to this hub');

    // Disconnect: previewed, confirmed, the entry is gone and the state is back.
    await row.locator(tid('client-disconnect')).click();
    const undo = page.locator(tid('client-preview', { client: 'gemini-cli', action: 'disconnect', changed: 'true' }));
    await undo.waitFor();
    expect(await undo.locator(tid('client-diff')).textContent()).toContain('-    "switchboard": {');
    await undo.locator(tid('client-confirm')).click();
    await page.locator(tid('client-result', { client: 'gemini-cli', action: 'disconnect', applied: 'true' })).waitFor();
    await page.locator(tid('client-row', { client: 'gemini-cli', scope: 'user', state: 'not set up' })).waitFor();
    expect(readFileSync(gemini, 'utf8')).not.toContain('switchboard');
    expect(await page.locator(tid('control-error')).count()).toBe(0);
    // Disconnected, its token is revoked.
    expect((await tokens()).tokens.map((t) => t.client)).not.toContain('gemini-cli');
    expect(await row.locator(tid('client-has-token')).count()).toBe(0);

    // The broken file: Connect is refused with the line and the fix, as a notice.
    await broken.locator(tid('client-connect')).click();
    await page.locator(tid('control-error'), { hasText: 'line 2: a comment' }).waitFor();
    expect(await page.locator(tid('client-preview')).count()).toBe(0);
  });

  it('opens the preview under the row clicked, in sight and focused, at the default window size', async () => {
    const page = dash.page;
    await page.setViewportSize({ width: 1200, height: 800 });
    try {
      await dash.open('clients');
      const rows = page.locator(tid('client-row'));
      await rows.first().waitFor();
      const count = await rows.count();
      expect(count).toBeGreaterThanOrEqual(15);
      // The last row with a Connect button: far below the fold.
      let i = count - 1;
      while (i > 0 && (await rows.nth(i).locator(tid('client-connect')).count()) === 0) i--;
      expect(i).toBeGreaterThanOrEqual(14);
      const row = rows.nth(i);
      const client = (await row.getAttribute('data-client')) ?? '';
      const scope = (await row.getAttribute('data-scope')) ?? '';
      await row.locator(tid('client-connect')).click();
      const preview = page.locator(tid('client-preview', { client, scope }));
      await preview.waitFor();
      // Right under the row clicked.
      expect(await preview.evaluate((el) => (el.closest('tr')?.previousElementSibling as HTMLElement | null)?.dataset.client)).toBe(client);
      // In the window, its Write button too, and holding the focus.
      const box = (await preview.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + Math.min(box.height, 200)).toBeLessThanOrEqual(800);
      const confirm = preview.locator(tid('client-confirm'));
      const confirmBox = (await confirm.boundingBox())!;
      expect(confirmBox.y + confirmBox.height).toBeLessThanOrEqual(800);
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('client-preview');
      // Escape: closed, nothing written, the focus back on the button.
      await page.keyboard.press('Escape');
      await dash.gone(tid('client-preview'));
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('client-connect');
    } finally {
      await page.setViewportSize(viewport);
    }
  });
});
