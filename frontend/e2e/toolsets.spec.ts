// Overview → Toolsets: switching a toolset off on the page removes its tools for a connected MCP
// client, which is told so (notifications/tools/list_changed); switching it on brings them back.
import { describe, expect, it } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';

const dash = useDashboard('toolsets');

async function toolNames(client: McpClient): Promise<string[]> {
  const res = (await client.request('tools/list', {})) as { tools: { name: string }[] };
  return res.tools.map((t) => t.name);
}

describe('toolsets', () => {
  it('switches the process toolset off and on from the page; a connected client follows', async () => {
    const page = dash.page;
    await dash.open('overview');
    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-toolsets-client', version: '1.0.0' });
    try {
      expect(await toolNames(client)).toContain('exec');
      const row = page.locator(tid('toolset-row', { name: 'process' }));
      await row.waitFor();
      expect(await row.getAttribute('data-enabled')).toBe('true');
      await expect.poll(() => dash.text(tid('toolset-process-tools'))).toMatch(/\d+/);

      const toggle = page.locator(tid('toolset-process-toggle'));
      await toggle.uncheck();
      await page.locator(tid('toolset-row', { name: 'process', enabled: 'false' })).waitFor();
      await expect.poll(() => client.notifications.filter((m) => m === 'notifications/tools/list_changed').length).toBeGreaterThan(0);
      const off = await toolNames(client);
      expect(off).not.toContain('exec');
      expect(off).not.toContain('process_start');
      expect(off).toContain('file_read');

      const seen = client.notifications.length;
      await toggle.check();
      await page.locator(tid('toolset-row', { name: 'process', enabled: 'true' })).waitFor();
      await expect.poll(() => client.notifications.slice(seen).includes('notifications/tools/list_changed')).toBe(true);
      expect(await toolNames(client)).toContain('exec');
      const res = (await client.callTool('exec', { command: 'echo', args: ['back'] })) as { structuredContent?: { stdout?: string } };
      expect(res.structuredContent?.stdout?.trim()).toBe('back');
    } finally {
      await client.close();
    }
  });
});
