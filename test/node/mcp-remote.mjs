// mcp-remote (npm, pinned in package.json) as an inbound OAuth client of a hub with
// [http] auth = "oauth" (driven by app/dashboard/oauth_mcpremote_test.go, which runs the hub and
// its dashboard in-process). The TypeScript SDK's MCP client talks stdio to mcp-remote, which
// proxies to the hub's /mcp: 401, discovery, dynamic registration, then it opens the
// authorization URL in "the browser": BROWSER names a script that hands the URL over, and this
// file loads it in a headless Chromium (Debian's, through playwright-core). The user's answer
// goes through the dashboard's approvals (DecideApproval, the files toolset only); Chromium
// follows the hub's waiting page to mcp-remote's loopback callback, mcp-remote exchanges the code,
// and the client lists the hub's tools and calls them. Prints TAP.
//
// usage: node mcp-remote.mjs <hub /mcp URL> <dashboard URL> <dashboard token>

import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chromium } from 'playwright-core';

const [hubURL, dashURL, dashToken] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const proxy = path.join(here, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
const chromiumPath = process.env.SWITCHBOARD_E2E_CHROMIUM || '/usr/bin/chromium';

let n = 0;
let failed = 0;
function check(ok, what, detail = '') {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}${ok || !detail ? '' : ` (${detail})`}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(method, route, body) {
  const r = await fetch(dashURL + route, {
    method,
    headers: { Authorization: `Bearer ${dashToken}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status !== 200) throw new Error(`${method} ${route}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

// The user on the hub's dashboard: waits for the client's authorization among the approvals and
// allows it with the files toolset only.
async function userAllows() {
  for (let i = 0; i < 600; i++) {
    const { approvals } = await api('GET', '/api/approvals');
    const a = approvals.find((x) => x.kind === 'client');
    if (a) {
      await api('POST', `/api/approvals/${encodeURIComponent(a.id)}`, { decision: 'allow', scopes: ['files'] });
      return a;
    }
    await sleep(100);
  }
  throw new Error('no client authorization among the approvals');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const tmp = mkdtempSync(path.join(tmpdir(), 'mcp-remote-'));
const opened = path.join(tmp, 'opened-url');
// mcp-remote opens the URL with the `open` package, i.e. xdg-open, which in a session without a
// desktop runs $BROWSER: this one hands the URL to the headless Chromium below.
const browserScript = path.join(tmp, 'browser.sh');
writeFileSync(browserScript, `#!/bin/sh\nprintf '%s\\n' "$1" > '${opened}.part' && mv '${opened}.part' '${opened}'\n`);
chmodSync(browserScript, 0o755);

let stderr = '';
let browser;
let client;
try {
  const port = await freePort();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxy, hubURL, String(port), '--host', '127.0.0.1'],
    // No DISPLAY, no desktop: xdg-open takes its generic path and runs $BROWSER. The tokens
    // mcp-remote keeps go to a directory of this run, not ~/.mcp-auth.
    env: { HOME: tmp, MCP_REMOTE_CONFIG_DIR: path.join(tmp, 'auth'), BROWSER: browserScript },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => { stderr += d; });
  client = new Client({ name: 'stdio-behind-mcp-remote', version: '1' });
  const connected = client.connect(transport, { timeout: 120_000 });
  connected.catch(() => {});

  // The browser step: the URL mcp-remote opened, loaded in headless Chromium, which follows the
  // hub's waiting page (meta refresh) to mcp-remote's loopback callback once the user allows.
  let authURL = '';
  for (let i = 0; i < 600 && !authURL; i++) {
    if (existsSync(opened)) authURL = readFileSync(opened, 'utf8').trim();
    else await sleep(100);
  }
  const u = authURL ? new URL(authURL) : null;
  check(u && u.origin === new URL(hubURL).origin && u.searchParams.get('code_challenge_method') === 'S256' &&
    u.searchParams.get('redirect_uri') === `http://127.0.0.1:${port}/oauth/callback`,
    'mcp-remote registered and opened the hub\'s authorization URL (PKCE S256, loopback redirect) in the browser', authURL || 'nothing opened');
  if (!u) throw new Error('mcp-remote opened no URL');

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  const callback = `http://127.0.0.1:${port}/oauth/callback`;
  const landed = page.waitForURL((x) => x.toString().startsWith(callback), { timeout: 60_000 });
  await page.goto(authURL);
  const shown = await userAllows();
  check(shown.client === 'MCP CLI Proxy' && shown.device === '127.0.0.1', 'the approval names mcp-remote\'s client and its device', JSON.stringify(shown));
  await landed;
  const at = new URL(page.url());
  check(at.searchParams.get('code') && at.searchParams.get('state') === u.searchParams.get('state'),
    'Chromium followed the hub to mcp-remote\'s callback with the code and the state', page.url());

  await connected;
  check(true, 'mcp-remote exchanged the code and the stdio client is connected through it');
  const { tools } = await client.listTools();
  check(tools.some((t) => t.name === 'file_read') && !tools.some((t) => t.name === 'process_start'),
    'tools/list through mcp-remote shows the files tools only', tools.map((t) => t.name).join(','));
  const wr = await client.callTool({ name: 'file_write', arguments: { path: 'mcp-remote.txt', content: 'written through mcp-remote' } });
  check(!wr.isError, 'file_write runs through mcp-remote', JSON.stringify(wr.content));
  const rd = await client.callTool({ name: 'file_read', arguments: { path: 'mcp-remote.txt' } });
  check(!rd.isError && /written through mcp-remote/.test(JSON.stringify(rd.content)), 'file_read returns what was written', JSON.stringify(rd.content));
  const ps = await client.callTool({ name: 'process_start', arguments: { command: 'true' } });
  check(ps.isError && /not granted/.test(ps.content?.[0]?.text ?? ''), 'process_start is refused: not granted', JSON.stringify(ps.content));

  const { grants } = await api('GET', '/api/grants');
  check(grants.length === 1 && grants[0].clientName === 'MCP CLI Proxy' && String(grants[0].scopes) === 'files',
    'Settings lists mcp-remote\'s grant, scoped to files', JSON.stringify(grants));
} catch (e) {
  check(false, 'the flow ran to its end', `${e?.stack ?? String(e)}\n# mcp-remote's stderr:\n${stderr.replace(/^/gm, '# ')}`);
} finally {
  await client?.close().catch(() => {});
  await browser?.close().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`1..${n}`);
console.log(`# pass ${n - failed}`);
console.log(`# fail ${failed}`);
process.exit(failed ? 1 : 0);
