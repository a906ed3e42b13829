// First run of a desktop launch, against its own switchboard started as the application menu
// starts it: no --workspace, in its (temporary) HOME. The dashboard asks "Choose a project folder";
// an MCP client's file call is refused meanwhile with how to choose one, and nothing lands in the
// home. The page refuses a relative path itself and shows the hub's refusal of the home directory;
// then a project typed as ~/… is taken: the prompt goes, the header names it, and the same
// connected client writes there at once. A restart from the home starts in that folder, no prompt.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';
import { Switchboard } from './stack';

let sb: Switchboard;
let home = '';
const dash = useDashboard('project', () => sb.info!);

beforeAll(async () => {
  // Unix socket paths are limited to 108 bytes: a short HOME, as Switchboard.start makes.
  home = mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-'));
  sb = new Switchboard(inject('bin'), 'project-switchboard');
  await sb.start('ws://127.0.0.1:1/ws', {}, home, { fromHome: true });
});

afterAll(async () => {
  await sb?.stop();
});

/** A tool call's outcome: 'ok', or the refusal's text. */
async function write(client: McpClient, file: string): Promise<string> {
  return client.callTool('file_write', { path: file, content: 'from e2e' }).then(
    () => 'ok',
    (e: Error) => e.message,
  );
}

describe('project folder', () => {
  it('asks for a project folder on first run, refuses the home directory, and serves the folder chosen', async () => {
    const page = dash.page;
    expect(sb.output).toContain('no project folder chosen yet');
    await dash.open('overview');
    const prompt = page.locator(tid('project-prompt'));
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain('Choose a project folder');
    expect(await page.locator(tid('project-button')).textContent()).toContain('none');
    expect(await page.locator(tid('project-pick')).count()).toBe(0); // a browser has no native picker

    const client = await McpClient.connect({ path: sb.info!.socket }, { name: 'e2e-project', version: '1' });
    try {
      expect(await write(client, 'early.txt')).toContain('no project folder chosen yet: pick one in the Switchboard window or the tray, or pass --workspace DIR');
      expect(existsSync(path.join(home, 'early.txt'))).toBe(false);

      // Checked on the page: a relative path never reaches the hub.
      await page.locator(tid('project-input')).fill('src/app');
      await page.locator(tid('project-save')).click();
      expect(await page.locator(tid('project-error')).textContent()).toContain('"src/app" is relative');
      // Refused by the hub: the home directory itself.
      await page.locator(tid('project-input')).fill(home);
      await page.locator(tid('project-save')).click();
      await page.locator(tid('project-error')).filter({ hasText: 'is your home directory' }).waitFor();
      expect((await api<{ dir: string }>(sb.info!, 'GET', '/api/project')).dir).toBe('');

      mkdirSync(path.join(home, 'src', 'app'), { recursive: true });
      await page.locator(tid('project-input')).fill('~/src/app');
      await page.locator(tid('project-save')).click();
      await prompt.waitFor({ state: 'detached' });
      await page.locator(tid('project-saved')).waitFor();
      const button = page.locator(tid('project-button'));
      expect(await button.textContent()).toContain('app');
      const chosen = (await api<{ dir: string; source: string }>(sb.info!, 'GET', '/api/project'));
      expect(chosen.source).toBe('chosen');
      expect(await button.getAttribute('data-dir')).toBe(chosen.dir);

      // The same connected client works there now.
      expect(await write(client, 'hello.txt')).toBe('ok');
      expect(readFileSync(path.join(home, 'src', 'app', 'hello.txt'), 'utf8')).toBe('from e2e');

      // The header's button opens the chooser on the current folder.
      await button.click();
      expect(await page.locator(tid('project-current')).textContent()).toBe(chosen.dir);
      await page.locator(tid('project-close')).click();
    } finally {
      await client.close();
    }

    // A restart from the home: the folder chosen last, no prompt.
    await sb.stop({ keepHome: true });
    await sb.start('ws://127.0.0.1:1/ws', {}, home, { fromHome: true });
    expect(sb.output).toMatch(/project folder \S+src\/app \(last\)/);
    await dash.open('overview');
    await page.locator(tid('project-button', { dir: (await api<{ dir: string }>(sb.info!, 'GET', '/api/project')).dir })).waitFor();
    expect(await page.locator(tid('project-prompt')).count()).toBe(0);
  });
});
