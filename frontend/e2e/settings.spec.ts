// Settings view, against its own switchboard whose config file a person wrote (comments, a
// commented transport, a rule). From the page: a bad TCP address is refused next to the field
// and nothing is written; TCP is switched on at its port, the git toolset off, a deny rule added
// and moved to the top, and a call tested against the edited rules (deny, rule 1) before saving.
// Each save shows the file's diff; the file keeps its comments and holds the new values; the
// running hub applies them (the TCP port answers, an MCP client on the Unix socket loses git_*
// and is denied exec rm). Then the binary restarts on the same HOME and everything is still so.
// The second test, on that restarted switchboard: the --workspace flag it runs with is marked;
// TCP starts asking for its token, the client token is regenerated (the old one refused, the new
// one let in, neither ever on the page), web_fetch reaches a loopback host once it is allowed,
// InfluxDB and the RAG key reference are saved (the key itself never shown); and Start at login
// switched by another window (as the tray does) shows here without a reload.
// The third: the view's sections are links (#settings/policy opens on the policy, focused); there
// is one Save, in a bar that names the sections changed and shows the diff each would write
// before anything is (the one written is the one shown), the navigation marks them, Discard puts
// the file's values back, and a look at another tab loses nothing; a rule's tool field offers the hub's tools and an upstream server's
// (server__tool); a saved policy is logged once as reloaded in the hub log.
// The fourth: Code intelligence shows [code] idle and each language's server with its default and
// what its next start runs; a program that does not exist is refused at the review beside its
// field; a new gopls command and a 2s idle are saved to the commented file and used without a
// restart: an agent's code call starts gopls by the new name, and 2 s after it, it is stopped.
// The fifth: Tasks goes through the same Save bar: a value the hub would refuse is shown beside
// task_after before anything is sent; a new one is reviewed (its diff, nothing written), saved to
// the commented file and in force (GET /api/settings says so); emptied, the key goes again.
// A screenshot goes to build/test-artifacts/e2e/; with UPDATE_SCREENSHOTS=1 it replaces
// docs/settings-view.png (a test run never changes tracked files).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { api, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';
import { artifactsDir, repoDir, viewport } from './settings';
import { canConnect, freePort, Switchboard } from './stack';

let sb: Switchboard;
let home = '';
let port = 0;
let configFile = '';
let original = '';
const dash = useDashboard('settings', () => sb.info!);

beforeAll(async () => {
  // Unix socket paths are limited to 108 bytes: a short HOME, as Switchboard.start makes.
  home = mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-'));
  port = await freePort();
  configFile = path.join(home, '.config', 'switchboard', 'config.toml');
  original = `# My Switchboard settings, kept in my dotfiles.
read_only = false  # write tools are fine here

# Transports
[tcp]
enabled = false  # only while I test clients
addr = "127.0.0.1:${port}"
# require_token = true

[policy]
default = "allow"

# deletes need a yes
[[policy.rules]]
tool = "file_delete"
action = "ask"
`;
  mkdirSync(path.dirname(configFile), { recursive: true });
  writeFileSync(configFile, original);
  sb = new Switchboard(inject('bin'), 'settings-switchboard');
  // MCP_ADDR empty: the TCP address is the file's (the shared stack sets one by environment).
  await sb.start('ws://127.0.0.1:1/ws', { MCP_ADDR: '' }, home);
});

afterAll(async () => {
  await sb?.stop();
});

async function toolNames(client: McpClient): Promise<string[]> {
  const res = (await client.request('tools/list', {})) as { tools: { name: string }[] };
  return res.tools.map((t) => t.name);
}

/** exec rm through the hub: the policy's answer (a denial rejects with the tool's text). */
async function execRm(client: McpClient): Promise<string> {
  return client.callTool('exec', { command: 'rm', args: ['-f', 'no-such-file'] }).then(
    () => 'ran',
    (e: Error) => e.message,
  );
}

describe('settings', () => {
  it('saves transports, toolsets and a reordered rule to the commented file, applies them live, and keeps them after a restart', async () => {
    const page = dash.page;
    await dash.open('settings');
    expect(await dash.text(tid('settings-path'))).toBe(configFile);
    const section = (name: string) => page.locator(tid('settings-section', { section: name }));
    // The one Save (the bar at the bottom), which names the section changed, then shows the diff
    // it would write (nothing written yet), then writes it.
    const saveAndWait = async (name: string) => {
      expect((await page.locator(tid('settings-save-bar')).getAttribute('data-changed'))?.split(',')).toContain(name);
      const before = readFileSync(configFile, 'utf8');
      await page.locator(tid('settings-review-open')).click();
      await page.locator(tid('settings-review-section', { section: name, refused: 'false' })).waitFor();
      expect(readFileSync(configFile, 'utf8')).toBe(before);
      await page.locator(tid('settings-save')).click();
      await section(name).locator(tid('settings-saved')).waitFor();
    };
    const client = await McpClient.connect({ path: sb.info!.socket }, { name: 'e2e-settings', version: '1' });
    try {
      expect(await toolNames(client)).toContain('git_status');
      expect(await execRm(client)).toBe('ran');

      // Transports: a bad address is refused next to its field and nothing is written.
      const tcp = page.locator(tid('settings-transport', { name: 'tcp' }));
      expect(await tcp.getAttribute('data-running')).toBe('false');
      await tcp.locator(tid('settings-transport-enabled')).check();
      await tcp.locator(tid('settings-transport-addr')).fill('localhost');
      await page.locator(tid('settings-review-open')).click();
      await page.locator(tid('settings-review-section', { section: 'transports', refused: 'true' })).waitFor();
      expect(await page.locator(tid('settings-save')).isDisabled()).toBe(true);
      await tcp.locator(tid('settings-field-error', { field: 'tcp.addr' })).waitFor();
      expect(await tcp.locator(tid('settings-field-error')).textContent()).toContain('"localhost" is not host:port');
      expect(readFileSync(configFile, 'utf8')).toBe(original);
      expect(await canConnect(port)).toBe(false);
      // TCP on at the file's port: saved, open now.
      await tcp.locator(tid('settings-transport-addr')).fill(`127.0.0.1:${port}`);
      await saveAndWait('transports');
      expect(await section('transports').locator(tid('settings-saved')).getAttribute('data-applies')).toBe('now');
      expect(await section('transports').locator(tid('settings-diff')).textContent()).toContain('+enabled = true  # only while I test clients');
      await page.locator(tid('settings-transport', { name: 'tcp', running: 'true' })).waitFor();
      expect(await canConnect(port)).toBe(true);

      // Toolsets: git off; the connected client loses its tools.
      await page.locator(`${tid('settings-toolset', { name: 'git' })} input`).uncheck();
      await saveAndWait('toolsets');
      await expect.poll(async () => (await toolNames(client)).some((n) => n.startsWith('git_'))).toBe(false);
      expect(await toolNames(client)).toContain('exec');

      // Policy: a deny rule added, moved to the top, and a call tested against the rules as edited.
      await page.locator(tid('settings-rule-add')).click();
      const added = page.locator(tid('settings-rule', { index: '2' }));
      await added.locator(tid('settings-rule-tool')).fill('exec');
      await added.locator(tid('settings-rule-args')).fill('command=rm*');
      await added.locator(tid('settings-rule-action')).selectOption('deny');
      await added.locator(tid('settings-rule-up')).click();
      await page.locator(tid('settings-rule', { index: '1', tool: 'exec', origin: '0' })).waitFor();
      await page.locator(tid('settings-rule', { index: '2', tool: 'file_delete', origin: '1' })).waitFor();
      await page.locator(tid('settings-test-tool')).fill('exec');
      await page.locator(tid('settings-test-args')).fill('{"command": "rm", "args": ["-rf", "build"]}');
      await page.locator(tid('settings-test-run')).click();
      const result = page.locator(tid('settings-test-result', { decision: 'deny', 'rule-index': '1' }));
      await result.waitFor();
      expect(await result.locator(tid('settings-test-rule')).textContent()).toBe('rule 1 (tool="exec" args.command="rm*" → deny)');
      // Tested, not saved: the hub still runs it.
      expect(await execRm(client)).toBe('ran');
      await saveAndWait('policy');
      expect(await execRm(client)).toContain('denied by rule 1');
    } finally {
      await client.close();
    }

    // The file: the person's comments and order, the new values.
    const written = readFileSync(configFile, 'utf8');
    for (const kept of ['# My Switchboard settings, kept in my dotfiles.\n', 'read_only = false  # write tools are fine here\n', '# Transports\n', '# require_token = true\n', '# deletes need a yes\n']) {
      expect(written).toContain(kept);
    }
    expect(written).toContain('enabled = true  # only while I test clients\n');
    expect(written).toMatch(/^toolsets = \[[^\]]*\]$/m);
    expect(written.match(/^toolsets = .*$/m)?.[0]).not.toContain('"git"');
    expect(written.indexOf('tool = "exec"')).toBeGreaterThan(0);
    expect(written.indexOf('tool = "exec"')).toBeLessThan(written.indexOf('tool = "file_delete"'));
    expect(written).toContain('args = { command = "rm*" }');
    expect(await page.locator(tid('control-error')).count()).toBe(0);

    // Restart on the same HOME: the settings are still there, and in force.
    await sb.stop({ keepHome: true });
    expect(await canConnect(port)).toBe(false);
    await sb.start('ws://127.0.0.1:1/ws', { MCP_ADDR: '' }, home);
    await dash.open('settings');
    await page.locator(tid('settings-transport', { name: 'tcp', running: 'true' })).waitFor();
    expect(await canConnect(port)).toBe(true);
    expect(await page.locator(`${tid('settings-toolset', { name: 'git' })} input`).isChecked()).toBe(false);
    expect(await page.locator(tid('settings-toolset', { name: 'git' })).getAttribute('data-served')).toBe('false');
    await page.locator(tid('settings-rule', { index: '1', tool: 'exec', action: 'deny' })).waitFor();
    const settings = await api<{ policy: { status: { rules: number } } }>(sb.info!, 'GET', '/api/settings');
    expect(settings.policy.status.rules).toBe(2);
    const again = await McpClient.connect({ path: sb.info!.socket }, { name: 'e2e-settings-again', version: '1' });
    try {
      expect((await toolNames(again)).some((n) => n.startsWith('git_'))).toBe(false);
      expect(await execRm(again)).toContain('denied by rule 1');
    } finally {
      await again.close();
    }
  });
});

/**
 * The first reply line of an initialize sent over TCP, after the switchboard/auth handshake when
 * a token is given; '' when the hub closed the connection without one.
 */
function tcpReply(port: number, token?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = '';
    const done = (v: string) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(buf), 5_000);
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) done(buf.slice(0, nl));
    });
    sock.on('close', () => done(buf));
    sock.on('error', reject);
    sock.on('connect', () => {
      if (token) sock.write(JSON.stringify({ jsonrpc: '2.0', method: 'switchboard/auth', params: { token } }) + '\n');
      sock.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e-tcp', version: '1' } } }) + '\n');
    });
  });
}

describe('settings: security, web fetch, backends, start at login', () => {
  it('require_token, a regenerated token, a web_fetch host, InfluxDB and the RAG key: checked, saved with comments, live; Start at login switched elsewhere shows here', async () => {
    const page = dash.page;
    await dash.open('settings');
    const section = (name: string) => page.locator(tid('settings-section', { section: name }));
    // The one Save (the bar at the bottom), which names the section changed, then shows the diff
    // it would write (nothing written yet), then writes it.
    const saveAndWait = async (name: string) => {
      expect((await page.locator(tid('settings-save-bar')).getAttribute('data-changed'))?.split(',')).toContain(name);
      const before = readFileSync(configFile, 'utf8');
      await page.locator(tid('settings-review-open')).click();
      await page.locator(tid('settings-review-section', { section: name, refused: 'false' })).waitFor();
      expect(readFileSync(configFile, 'utf8')).toBe(before);
      await page.locator(tid('settings-save')).click();
      await section(name).locator(tid('settings-saved')).waitFor();
    };
    const tokenFile = path.join(home, '.config', 'switchboard', 'token');
    const readToken = () => readFileSync(tokenFile, 'utf8').trim();

    // This run's --workspace flag is marked, in the intro and beside the workspace field.
    await page.locator(tid('settings-flag', { flag: '--workspace' })).waitFor();
    expect(await section('workspace').textContent()).toContain('workspace is set by --workspace');

    // Transport security: a bad origin is refused next to its field, nothing written.
    expect(await tcpReply(port)).toContain('"serverInfo"'); // loopback, no token asked yet
    const before = readFileSync(configFile, 'utf8');
    await page.locator(tid('settings-security-require-token')).check();
    await page.locator(tid('settings-security-origins')).fill('http://localhost:6274/');
    await page.locator(tid('settings-review-open')).click();
    const originError = section('security').locator(tid('settings-field-error', { field: 'http.allowed_origins' }));
    await originError.waitFor();
    expect(await originError.textContent()).toContain('has a path');
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    // Saved: TCP asks every client for the token from now on.
    await page.locator(tid('settings-security-origins')).fill('http://localhost:6274');
    await saveAndWait('security');
    await page.locator(tid('settings-security-running', { 'require-token': 'true' })).waitFor();
    expect(await tcpReply(port)).not.toContain('"serverInfo"');
    const oldToken = readToken();
    expect(await tcpReply(port, oldToken)).toContain('"serverInfo"');

    // The client token, regenerated after saying who needs it: the old one is refused at once,
    // the new one let in; neither is ever on the page.
    const client = page.locator(tid('settings-token', { token: 'client' }));
    await client.locator(tid('settings-token-regenerate')).click();
    expect(await client.locator(tid('settings-token-confirm-text')).textContent()).toContain('TCP clients');
    await client.locator(tid('settings-token-confirm')).click();
    await page.locator(tid('settings-token-done', { token: 'client' })).waitFor();
    const newToken = readToken();
    expect(newToken).not.toBe(oldToken);
    expect(await tcpReply(port, oldToken)).not.toContain('"serverInfo"');
    expect(await tcpReply(port, newToken)).toContain('"serverInfo"');
    for (const t of [oldToken, newToken]) expect(await page.content()).not.toContain(t);

    // Web fetch: a loopback page is refused until its host is allowed, then fetched at once.
    const intranet = http.createServer((_, res) => res.end('intranet wiki page'));
    await new Promise<void>((resolve) => intranet.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(intranet.address() as net.AddressInfo).port}`;
    const mcp = await McpClient.connect({ path: sb.info!.socket }, { name: 'e2e-settings-web', version: '1' });
    try {
      await expect(mcp.callTool('web_fetch', { url: `http://${host}/` })).rejects.toThrow(/refused/);
      await page.locator(tid('settings-web-allow')).fill(host);
      await page.locator(tid('settings-web-timeout')).fill('20s');
      await saveAndWait('web');
      const res = (await mcp.callTool('web_fetch', { url: `http://${host}/` })) as { structuredContent?: { content?: string } };
      expect(res.structuredContent?.content).toContain('intranet wiki page');
    } finally {
      await mcp.close();
      intranet.close();
    }

    // ml_status's InfluxDB: saved and in force at once (nothing pending); the RAG key as a
    // reference: saved and in force at once too (the embedded store needs no key).
    await page.locator(tid('settings-ml-influx-url')).fill('http://127.0.0.1:8086');
    await page.locator(tid('settings-ml-influx-db')).fill('lab');
    await saveAndWait('ml');
    expect(await section('ml').locator(tid('settings-saved')).getAttribute('data-applies')).toBe('now');
    expect(await page.locator(tid('settings-pending', { section: 'ml' })).count()).toBe(0);
    await page.locator(tid('settings-rag-key-mode')).selectOption('reference');
    await page.locator(tid('settings-rag-key-ref')).fill('${QDRANT_API_KEY}');
    await page.locator(tid('settings-review-open')).click();
    await page.locator(tid('settings-review-section', { section: 'ragkey' })).waitFor();
    await page.locator(tid('settings-save')).click();
    await page.locator(tid('settings-rag-key', { state: 'env' })).waitFor();
    expect(await page.locator(tid('settings-rag-key-state')).textContent()).toContain('QDRANT_API_KEY');
    expect(await page.locator(tid('settings-saved', { section: 'ragkey' })).getAttribute('data-applies')).toBe('now');
    expect(await page.locator(tid('settings-pending', { section: 'rag' })).count()).toBe(0);

    const shot = process.env.UPDATE_SCREENSHOTS ? path.join(repoDir, 'docs', 'settings-view.png') : path.join(artifactsDir, 'settings-view.png');
    mkdirSync(path.dirname(shot), { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0)); // the sticky header at the top of the picture
    await page.screenshot({ path: shot, fullPage: true });

    // Start at login switched by another window (the tray does the same): shown here, no reload.
    await page.locator(tid('settings-autostart-state', { enabled: 'false' })).waitFor();
    await api(sb.info!, 'POST', '/api/settings/autostart', { enabled: true });
    await page.locator(tid('settings-autostart-state', { enabled: 'true' })).waitFor();
    expect(await page.locator(tid('settings-autostart-toggle')).isChecked()).toBe(true);
    await api(sb.info!, 'POST', '/api/settings/autostart', { enabled: false });
    await page.locator(tid('settings-autostart-state', { enabled: 'false' })).waitFor();

    // The file: the person's comments, the new keys; no token in it (the client token is in its own file).
    const written = readFileSync(configFile, 'utf8');
    for (const kept of ['# My Switchboard settings, kept in my dotfiles.\n', 'enabled = true  # only while I test clients\n', '# require_token = true\n', '# deletes need a yes\n']) {
      expect(written).toContain(kept);
    }
    expect(written).toMatch(/^require_token = true$/m);
    expect(written).toContain('allowed_origins = ["http://localhost:6274"]');
    expect(written).toContain(`allow = ["${host}"]`);
    expect(written).toContain('influx_url = "http://127.0.0.1:8086"');
    expect(written).toContain('api_key = "${QDRANT_API_KEY}"');
    for (const t of [oldToken, newToken]) expect(written).not.toContain(t);
    expect(await page.locator(tid('control-error')).count()).toBe(0);
  });
});

describe('settings: navigation, one save, tool names', () => {
  it('links to each section, has one Save naming what changed, offers tool names in a rule, and logs a policy reload once', async () => {
    const page = dash.page;
    await page.setViewportSize({ width: 1200, height: 800 });
    // An upstream server: its tools (quarantined ones too) are offered as server__tool.
    const fixture = path.join(repoDir, 'test', 'node', 'upstream-fixture.mjs');
    await api(sb.info!, 'POST', '/api/servers', { name: 'fixture', command: 'node', args: [fixture] });
    try {
      // A deep link: the section's title in the window, with the focus.
      await dash.open('settings/policy');
      const title = page.locator('#settings-policy');
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('settings-policy');
      const box = (await title.boundingBox())!;
      expect(box.y).toBeGreaterThan(0);
      expect(box.y).toBeLessThan(300);
      const nav = page.locator(tid('settings-nav'));
      expect(await nav.locator(tid('settings-nav-link')).count()).toBe(13);
      expect(await nav.locator(tid('settings-nav-link', { section: 'policy' })).getAttribute('aria-current')).toBe('location');
      // The navigation: Web fetch's link brings it into sight, and into the address bar.
      await nav.locator(tid('settings-nav-link', { section: 'web' })).click();
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('settings-web');
      expect(new URL(page.url()).hash).toBe('#settings/web');
      const web = (await page.locator('#settings-web').boundingBox())!;
      expect(web.y).toBeGreaterThan(0);
      expect(web.y).toBeLessThan(800);

      // One way to save for the whole view, in sight wherever the page is scrolled; nothing to save yet.
      expect(await page.locator('main button', { hasText: /^\s*(Save|Review changes)/ }).count()).toBe(1);
      const review = page.locator(tid('settings-review-open'));
      expect(await review.isDisabled()).toBe(true);
      const bar = (await page.locator(tid('settings-save-bar')).boundingBox())!;
      expect(bar.y + bar.height).toBeLessThanOrEqual(800);

      // A rule's tool field offers the hub's tools and the server's.
      const rule = page.locator(tid('settings-rule')).first();
      const list = await rule.locator(tid('settings-rule-tool')).getAttribute('list');
      expect(list).toBeTruthy();
      await expect
        .poll(() => page.locator(`datalist#${list} option`).evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)))
        .toEqual(expect.arrayContaining(['exec', 'file_read', 'git_status', 'fixture__greet', 'fixture__*']));
      expect(await page.locator(tid('settings-test-tool')).getAttribute('list')).toBe(list);

      // A change: named by the bar and marked in the navigation; Discard puts the file's value back.
      const timeout = page.locator(tid('settings-policy-timeout'));
      const was = await timeout.inputValue();
      await timeout.fill('45s');
      await page.locator(tid('settings-save-bar', { changed: 'policy' })).waitFor();
      expect(await nav.locator(tid('settings-nav-link', { section: 'policy' })).getAttribute('data-unsaved')).toBe('true');
      expect(await page.locator(tid('settings-save-status')).textContent()).toContain('Policy and roots');
      // A look at another tab loses nothing.
      await page.locator(tid('tab-overview')).click();
      await page.locator('main[data-view="overview"]').waitFor();
      await page.locator(tid('tab-settings')).click();
      await page.locator(tid('settings-save-bar', { changed: 'policy' })).waitFor();
      expect(await timeout.inputValue()).toBe('45s');
      await page.locator(tid('settings-discard')).click();
      await page.locator(tid('settings-save-bar', { changed: '' })).waitFor();
      expect(await timeout.inputValue()).toBe(was);

      // Saved: the policy reload is logged once.
      const reloads = async () =>
        (await api<{ records: { msg: string }[] }>(sb.info!, 'GET', '/api/hublog?limit=1000')).records.filter((r) => r.msg === 'policy: reloaded').length;
      const before = await reloads();
      await timeout.fill('45s');
      // Reviewed first: the diff shown, the focus on it, nothing written (no reload); then saved.
      await review.click();
      const shown = (await page.locator(tid('settings-review-section', { section: 'policy' })).locator(tid('settings-review-diff')).textContent()) ?? '';
      expect(shown).toContain('+ask_timeout = "45s"');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('settings-review');
      expect(await reloads()).toBe(before);
      await page.locator(tid('settings-save')).click();
      await page.locator(tid('settings-saved', { section: 'policy' })).waitFor();
      // The diff written is the one shown.
      expect(await page.locator(tid('settings-saved', { section: 'policy' })).locator(tid('settings-diff')).textContent()).toBe(shown);
      await expect.poll(reloads).toBe(before + 1);
      await new Promise((r) => setTimeout(r, 1500)); // the config watcher reads the file back
      expect(await reloads()).toBe(before + 1);
    } finally {
      await api(sb.info!, 'DELETE', '/api/servers/fixture');
      await page.setViewportSize(viewport);
    }
  });
});

/** The pids whose command line holds needle (Linux /proc). */
function pidsRunning(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').some((a) => a.includes(needle))) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('settings: code intelligence', () => {
  it('saves [code] through the Save bar and the running pool uses it without a restart', async () => {
    const page = dash.page;
    await dash.open('settings/code');
    const section = page.locator(tid('settings-section', { section: 'code' }));
    await section.waitFor();
    expect(await page.locator(tid('settings-code-idle')).getAttribute('placeholder')).toBe('10m0s');
    expect(await page.locator(tid('settings-code-idle-state')).getAttribute('data-running')).toBe('10m0s');
    const goRow = section.locator(tid('settings-code-server', { language: 'go' }));
    const gopls = (await goRow.locator(tid('settings-code-found')).textContent())!.trim();
    expect(gopls).toMatch(/gopls$/);
    expect(await goRow.locator(tid('settings-code-command')).getAttribute('placeholder')).toBe('gopls');

    // A program that does not exist: refused at the review, beside its field; nothing written.
    const before = readFileSync(configFile, 'utf8');
    await goRow.locator(tid('settings-code-command')).fill('/nonexistent/gopls');
    await expect.poll(async () => (await page.locator(tid('settings-save-bar')).getAttribute('data-changed'))?.split(',')).toContain('code');
    await page.locator(tid('settings-review-open')).click();
    const refused = goRow.locator(tid('settings-field-error', { field: 'code.servers.go' }));
    await refused.waitFor();
    expect(await refused.textContent()).toContain('/nonexistent/gopls');
    expect(readFileSync(configFile, 'utf8')).toBe(before);

    // Another name for gopls and a 2 s idle: reviewed, saved, in force.
    const renamed = path.join(home, 'bin', 'gopls-e2e-settings');
    mkdirSync(path.dirname(renamed), { recursive: true });
    symlinkSync(gopls, renamed);
    await goRow.locator(tid('settings-code-command')).fill(renamed);
    await page.locator(tid('settings-code-idle')).fill('2s');
    await page.locator(tid('settings-review-open')).click();
    const shown = (await page.locator(tid('settings-review-section', { section: 'code', refused: 'false' })).locator(tid('settings-review-diff')).textContent()) ?? '';
    expect(shown).toContain('+idle = "2s"');
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    await page.locator(tid('settings-save')).click();
    await section.locator(tid('settings-saved')).waitFor();
    const file = readFileSync(configFile, 'utf8');
    expect(file.startsWith('# My Switchboard settings, kept in my dotfiles.')).toBe(true);
    expect(file).toContain(`[code]\nidle = "2s"\n`);
    expect(file).toContain(`[code.servers]\ngo = ["${renamed}"]\n`);
    expect((await section.textContent())!.replace(/\s+/g, ' ')).toContain('next server start');
    await page.locator(tid('settings-code-idle-state', { running: '2s' })).waitFor();
    expect((await goRow.locator(tid('settings-code-found')).textContent())!.trim()).toBe(renamed);

    // An agent's code call starts gopls by its new name; unused for 2 s, it is stopped.
    const mod = path.join(sb.info!.workspace, 'gosettings');
    mkdirSync(mod, { recursive: true });
    writeFileSync(path.join(mod, 'go.mod'), 'module example.com/gosettings\n\ngo 1.22\n');
    writeFileSync(path.join(mod, 'a.go'), 'package gosettings\n\n// A is one.\nfunc A() int { return 1 }\n');
    const client = await McpClient.connect({ path: sb.info!.socket }, { name: 'e2e-settings-code', version: '1.0.0' });
    try {
      await client.callTool('code_symbols', { path: 'gosettings/a.go' });
      expect(pidsRunning('gopls-e2e-settings').length).toBeGreaterThan(0);
      await expect.poll(() => pidsRunning('gopls-e2e-settings').length, { timeout: 20_000 }).toBe(0);
    } finally {
      await client.close();
    }
  });
});

describe('settings: tasks', () => {
  it('saves task_after through the Save bar, reviewed first, and the running hub uses it', async () => {
    const page = dash.page;
    await dash.open('settings/tasks');
    const section = page.locator(tid('settings-section', { section: 'tasks' }));
    await section.waitFor();
    const input = page.locator(tid('settings-tasks-after'));
    const inForce = page.locator(tid('settings-tasks-in-force'));
    expect(await input.getAttribute('placeholder')).toBe('45s');
    expect(await inForce.getAttribute('data-running')).toBe('45s');
    expect(await inForce.textContent()).toContain('after 45s (the default)');
    // The section has no Save of its own: the bar saves it with the rest.
    expect(await section.locator('button').count()).toBe(0);
    const running = async () => (await api<{ tasks: { saved: string; running: string } }>(sb.info!, 'GET', '/api/settings')).tasks;
    expect(await running()).toEqual({ saved: '', running: '45s', default: '45s' });

    // Refused before anything is sent, beside the field.
    const before = readFileSync(configFile, 'utf8');
    await input.fill('500ms');
    const problem = section.locator(tid('settings-field-error', { field: 'task_after' }));
    await problem.waitFor();
    expect(await problem.textContent()).toContain('at least "1s"');

    // 90s: named by the bar, reviewed (the diff, nothing written), saved, in force.
    await input.fill('90s');
    await expect.poll(() => problem.count()).toBe(0);
    await expect.poll(async () => (await page.locator(tid('settings-save-bar')).getAttribute('data-changed'))?.split(',')).toContain('tasks');
    await page.locator(tid('settings-review-open')).click();
    const shown = (await page.locator(tid('settings-review-section', { section: 'tasks', refused: 'false' })).locator(tid('settings-review-diff')).textContent()) ?? '';
    expect(shown).toContain('+task_after = "1m30s"');
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    expect((await running()).running).toBe('45s');
    await page.locator(tid('settings-save')).click();
    await section.locator(tid('settings-saved')).waitFor();
    expect(await section.locator(tid('settings-diff')).textContent()).toBe(shown);
    const file = readFileSync(configFile, 'utf8');
    expect(file.startsWith('# My Switchboard settings, kept in my dotfiles.')).toBe(true);
    expect(file).toContain('task_after = "1m30s"');
    await page.locator(tid('settings-tasks-in-force', { running: '1m30s' })).waitFor();
    expect(await running()).toEqual({ saved: '1m30s', running: '1m30s', default: '45s' });
    expect(await page.locator(tid('settings-save-bar')).getAttribute('data-changed')).toBe('');

    // Emptied: the key goes and the default is in force again.
    await input.fill('');
    await page.locator(tid('settings-save-bar', { changed: 'tasks' })).waitFor();
    await page.locator(tid('settings-review-open')).click();
    await page.locator(tid('settings-review-section', { section: 'tasks', refused: 'false' })).waitFor();
    await page.locator(tid('settings-save')).click();
    await page.locator(tid('settings-tasks-in-force', { running: '45s' })).waitFor();
    expect(readFileSync(configFile, 'utf8')).not.toContain('task_after');
    expect(await running()).toEqual({ saved: '', running: '45s', default: '45s' });
  });
});
