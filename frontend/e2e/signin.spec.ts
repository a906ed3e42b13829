// Servers view → Sign in (issue 38): the TypeScript SDK's example server in OAuth mode (pinned in
// test/node, with its own demo authorization server, --oauth-strict: it accepts only tokens issued
// for itself) is an upstream of the spec's own switchboard, whose grants go to a private
// gnome-keyring. Once its command is approved the row waits in "signin" with a Sign in button;
// the click opens the authorization server's page in a new tab of this Chromium (a headless hub
// cannot open a browser itself), the demo AS consents at once and redirects to the hub's loopback
// listener, and the row turns running; its tool answers through the hub. Sign out puts the row
// back to signin. A screenshot of the waiting row goes to build/test-artifacts/e2e/servers-signin.png.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { Keyring } from './keyring';
import { artifactsDir, repoDir } from './settings';
import { freePort, Switchboard } from './stack';

let keyring: Keyring;
let example: ChildProcess | null = null;
let sb: Switchboard;
let mcpUrl = '';
const dash = useDashboard('signin', () => sb.info!);

/** Starts the example server and its authorization server; resolves once both listen. */
async function startExample(): Promise<string> {
  const script = path.join(repoDir, 'test', 'node', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'examples', 'server', 'simpleStreamableHttp.js');
  if (!existsSync(script)) throw new Error(`${script} is missing: run make node-deps (npm ci in test/node)`);
  const [mcpPort, authPort] = [await freePort(), await freePort()];
  const child = spawn('node', [script, '--oauth', '--oauth-strict'], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  example = child;
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the example server did not start:\n${out}`)), 30_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if ((out.match(/listening on port/g) ?? []).length >= 2) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the example server exited (${code}):\n${out}`)));
  });
  // It names itself localhost in its metadata (resource and issuer).
  return `http://localhost:${mcpPort}/mcp`;
}

beforeAll(async () => {
  const bin = inject('bin');
  keyring = await Keyring.start(bin);
  mcpUrl = await startExample();
  const home = mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-'));
  mkdirSync(path.join(home, '.config', 'switchboard'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'switchboard', 'config.toml'), `[[servers]]\nname = "demo"\nurl = "${mcpUrl}"\n`);
  sb = new Switchboard(bin, 'signin-switchboard');
  await sb.start('ws://127.0.0.1:1/ws', { DBUS_SESSION_BUS_ADDRESS: keyring.address }, home);
}, 90_000);

afterAll(async () => {
  await sb?.stop();
  example?.kill('SIGKILL');
  await keyring?.stop();
});

interface Status {
  name: string;
  state: string;
  command_hash: string;
  oauth: boolean;
  last_error?: string;
}

describe('sign in', () => {
  it('signs the hub in to a remote server from the Servers view, and out again', async () => {
    const page = dash.page;
    const list = await api<{ servers: Status[] }>(sb.info!, 'GET', '/api/servers');
    await api(sb.info!, 'POST', '/api/servers/demo/approve-command', { hash: list.servers[0].command_hash });
    await dash.open('servers');
    const row = tid('server-row', { name: 'demo' });
    await dash.see(`${row}[data-state="signin"]`, 30_000);
    expect(await dash.text(`${row} ${tid('server-last-error')}`)).toContain('switchboard servers login demo');
    // Its tools cannot be listed before the sign-in: the button to approve them waits.
    expect(await page.locator(`${row} ${tid('server-approve')}`).count()).toBe(0);
    mkdirSync(artifactsDir, { recursive: true });
    await page.locator(row).screenshot({ path: path.join(artifactsDir, 'servers-signin.png') });

    // The hub answers with the page; the view opens it in a new tab, where the demo AS consents
    // and sends the browser back to the hub's loopback listener.
    const tab = page.context().waitForEvent('page');
    await page.locator(`${row} ${tid('server-signin')}`).click();
    const signIn = await tab;
    await signIn.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 30_000 });
    await signIn.getByText('Switchboard is signed in to demo').waitFor();
    await signIn.close();
    await dash.see(`${row}[data-state="running"]`, 30_000);

    await api(sb.info!, 'POST', '/api/servers/demo/approve', { tools: [] });
    const out = await new Promise<string>((resolve, reject) =>
      execFile(inject('bin'), ['call', 'demo__greet', '--socket', sb.info!.socket, '--args', '{"name":"e2e"}'], { timeout: 20_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`switchboard call demo__greet: ${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(out).toContain('Hello, e2e!');

    await page.locator(`${row} ${tid('server-signout')}`).click();
    await dash.see(`${row}[data-state="signin"]`, 30_000);
    await dash.see(`${row} ${tid('server-signin')}`);
  });
});
