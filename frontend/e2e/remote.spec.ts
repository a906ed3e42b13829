// A client on another machine (issue 38, the hub's own authorization server): the spec's own
// switchboard runs with [http] auth = "oauth". A client registers and its authorization page opens
// in a tab of this Chromium, where it waits; the dashboard's approvals panel shows "<client> on
// <device> wants to use this hub" with the toolsets it asked for; the user unticks one and allows.
// The waiting tab goes on to the client's redirect URI with a code, which the client exchanges
// (PKCE) for a token scoped to what the user left ticked. Settings › Other machines lists the grant;
// Revoke ends it, and the token gets 401 at once.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { freePort, Switchboard } from './stack';

let sb: Switchboard;
let hub = '';
let callback: Server;
let redirect = '';
const dash = useDashboard('remote', () => sb.info!);

beforeAll(async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-'));
  mkdirSync(path.join(home, '.config', 'switchboard'), { recursive: true });
  const port = await freePort();
  hub = `http://127.0.0.1:${port}`;
  writeFileSync(path.join(home, '.config', 'switchboard', 'config.toml'), `[http]\nenabled = true\naddr = "127.0.0.1:${port}"\nauth = "oauth"\n`);
  sb = new Switchboard(inject('bin'), 'remote-switchboard');
  await sb.start('ws://127.0.0.1:1/ws', {}, home);
  // The client's loopback redirect URI: it answers so the tab has a page to land on.
  const cbPort = await freePort();
  redirect = `http://127.0.0.1:${cbPort}/callback`;
  callback = createServer((_, res) => res.end('the client got its code'));
  await new Promise<void>((r) => callback.listen(cbPort, '127.0.0.1', r));
}, 90_000);

afterAll(async () => {
  await sb?.stop();
  callback?.close();
});

describe('a client on another machine', () => {
  it('is approved on the dashboard with the toolsets left ticked, listed in Settings, and revoked', async () => {
    const reg = await (await fetch(`${hub}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Laptop Agent', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
    })).json();
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authURL = `${hub}/oauth/authorize?${new URLSearchParams({
      response_type: 'code', client_id: reg.client_id, redirect_uri: redirect, state: 'e2e', scope: 'files process',
      code_challenge: challenge, code_challenge_method: 'S256', resource: `${hub}/mcp`,
    })}`;

    await dash.open('overview');
    const tab = await dash.page.context().newPage();
    const landed = tab.waitForURL((u) => u.toString().startsWith(redirect), { timeout: 60_000 });
    void tab.goto(authURL).catch(() => {}); // waits on the hub's page until the user answers

    const item = dash.page.locator(tid('approval', { kind: 'client' }));
    await item.waitFor();
    expect((await item.textContent())?.replace(/\s+/g, ' ')).toContain('Laptop Agent on 127.0.0.1 wants to use this hub');
    const sets = item.locator(tid('approval-toolset'));
    expect(await sets.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.toolset))).toEqual(['files', 'process']);
    await item.locator(tid('approval-toolset', { toolset: 'process' })).uncheck();
    await item.locator(tid('approval-allow')).click();

    await landed;
    const code = new URL(tab.url()).searchParams.get('code');
    expect(code).toBeTruthy();
    await tab.close();
    const tok = await (await fetch(`${hub}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, client_id: reg.client_id, redirect_uri: redirect,
        code_verifier: verifier, resource: `${hub}/mcp` }),
    })).json();
    expect(tok.scope).toBe('files');

    const initialize = () =>
      fetch(`${hub}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${tok.access_token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'laptop', version: '1' } } }),
      });
    expect((await initialize()).status).toBe(200);

    await dash.open('settings/grants');
    const row = dash.page.locator(tid('grant'));
    await row.waitFor();
    expect((await row.textContent())?.replace(/\s+/g, ' ')).toContain('Laptop Agent');
    expect(await dash.text(tid('grant-scopes'))).toBe('files');
    await row.locator(tid('grant-revoke')).click();
    await dash.see(tid('grants-empty'));
    const after = await initialize();
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('resource_metadata=');
  });
});
