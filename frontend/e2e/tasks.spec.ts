// Tasks, against its own switchboard with task_after = "1s": an MCP client's exec that outlives
// it is answered with a task handle while the command goes on; the Activity view's Tasks list
// shows it live (caller, tool, progress, status), tasks_get from the same client reads it, and
// Cancel on the page ends it: the task reads cancelled and the command's process is gone.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { artifactsDir, repoDir } from './settings';
import { McpClient } from './mcp-client';
import { Switchboard } from './stack';

let sb: Switchboard;
const dash = useDashboard('tasks', () => sb.info!);

beforeAll(async () => {
  // Unix socket paths are limited to 108 bytes: a short HOME, as Switchboard.start makes.
  const home = mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-'));
  mkdirSync(path.join(home, '.config', 'switchboard'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'switchboard', 'config.toml'), 'task_after = "1s"\n');
  sb = new Switchboard(inject('bin'), 'tasks-switchboard');
  await sb.start('ws://127.0.0.1:1/ws', {}, home);
});

afterAll(async () => {
  await sb?.stop();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('tasks', () => {
  it('lists a long call handed back as a task and cancels it from the page', async () => {
    const page = dash.page;
    await dash.open('activity');
    const client = await McpClient.connect({ path: sb.info!.socket }, { name: 'e2e-tasks', version: '1' });
    try {
      const started = Date.now();
      const handle = (await client.request('tools/call', {
        name: 'exec',
        arguments: { command: 'sh', args: ['-c', 'echo $$ > task.pid; sleep 300'], timeout: 600 },
      })) as { isError?: boolean; content?: { text?: string }[]; _meta?: Record<string, unknown> };
      expect(Date.now() - started).toBeLessThan(10_000);
      const id = handle._meta?.['switchboard/task_id'] as string;
      expect(id).toMatch(/^task-[0-9a-f]{32}$/);
      expect(handle.content?.[0]?.text).toContain(`tasks_get {"task_id": "${id}"}`);

      const row = page.locator(tid('task-row', { 'task-id': id }));
      await row.waitFor();
      expect(await row.getAttribute('data-status')).toBe('working');
      expect(await row.textContent()).toContain('e2e-tasks (unix)');
      expect(await row.textContent()).toContain('exec');
      // exec reports progress every second: the list shows it without a reload.
      await expect.poll(() => row.locator(tid('task-progress')).textContent(), { timeout: 15_000 }).toContain('sh');

      // With UPDATE_SCREENSHOTS=1 it replaces docs/tasks-list.png (a test run never changes tracked files).
      const shot = process.env.UPDATE_SCREENSHOTS ? path.join(repoDir, 'docs', 'tasks-list.png') : path.join(artifactsDir, 'tasks-list.png');
      mkdirSync(path.dirname(shot), { recursive: true });
      await page.locator(tid('tasks')).screenshot({ path: shot });

      const got = (await client.callTool('tasks_get', { task_id: id })) as { structuredContent?: { status?: string } };
      expect(got.structuredContent?.status).toBe('working');

      const pid = Number(readFileSync(path.join(sb.info!.workspace, 'task.pid'), 'utf8').trim());
      expect(alive(pid)).toBe(true);
      await row.locator(tid('task-cancel')).click();
      await page.locator(tid('task-row', { 'task-id': id, status: 'cancelled' })).waitFor();
      expect(await row.locator(tid('task-cancel')).count()).toBe(0);
      await expect.poll(() => alive(pid), { timeout: 15_000 }).toBe(false);
      const after = (await client.callTool('tasks_get', { task_id: id })) as { structuredContent?: { status?: string } };
      expect(after.structuredContent?.status).toBe('cancelled');
    } finally {
      await client.close();
    }
  });
});
