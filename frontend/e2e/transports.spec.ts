// Overview → Transports: switching TCP on from the page really opens the port (an MCP client
// connects to it and is seen as a tcp session), the address is shown, and switching it off closes it.
import { describe, expect, it } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';
import { canConnect } from './stack';

const dash = useDashboard('transports');

describe('transports', () => {
  it('switches TCP on and off from the page', async () => {
    const page = dash.page;
    const [host, portText] = dash.server.tcpAddr.split(':');
    const port = Number(portText);
    await dash.open('overview');

    const row = page.locator(tid('transport-row', { name: 'tcp' }));
    const toggle = page.locator(tid('transport-tcp-toggle'));
    await row.waitFor();
    expect(await row.getAttribute('data-running')).toBe('false');
    expect(await toggle.isChecked()).toBe(false);
    expect(await canConnect(port, host)).toBe(false);
    // The dashboard reaches the hub through "ws": its switch must not be usable.
    expect(await page.locator(tid('transport-ws-toggle')).isDisabled()).toBe(true);

    await toggle.check();
    await page.locator(tid('transport-row', { name: 'tcp', running: 'true' })).waitFor();
    await dash.see(tid('transport-tcp-status', { status: 'running' }));
    await expect.poll(() => dash.text(tid('transport-tcp-addr'))).toBe(dash.server.tcpAddr);
    // How clients authenticate is shown: loopback TCP without a token refuses non-JSON-RPC openers.
    await expect.poll(() => dash.text(tid('transport-tcp-auth'))).toContain('first line must be JSON-RPC');
    expect(await canConnect(port, host)).toBe(true);

    // It is the MCP hub on that port, and the session it serves shows up on the page.
    const client = await McpClient.connect({ host, port }, { name: 'e2e-tcp-client', version: '1.0.0' });
    try {
      expect(client.serverInfo.name).toBeTruthy();
      await page.locator(tid('overview-session-row'), { hasText: 'e2e-tcp-client' }).waitFor();
      expect(await page.locator(tid('overview-session-row'), { hasText: 'e2e-tcp-client' }).textContent()).toContain('tcp');
    } finally {
      await client.close();
    }

    await toggle.uncheck();
    await page.locator(tid('transport-row', { name: 'tcp', running: 'false' })).waitFor();
    await dash.see(tid('transport-tcp-status', { status: 'off' }));
    await expect.poll(() => canConnect(port, host)).toBe(false);
    expect(await toggle.isChecked()).toBe(false);
  });
});
