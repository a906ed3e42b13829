// The TypeScript SDK's OAuth client against a hub with [http] auth = "oauth" (driven by
// app/dashboard/oauth_node_test.go, which runs the hub and its dashboard in-process):
// discovery from the 401, dynamic registration, the authorization (a "browser" that follows the
// hub's waiting page while the user's answer goes through the dashboard's DecideApproval with the
// files toolset only), the code exchange with PKCE, tools, the SDK's own refresh on a 401, then
// RevokeGrant and a 401 at the next request. Prints TAP.
//
// usage: node oauth-client.mjs <hub /mcp URL> <dashboard URL> <dashboard token>

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [hubURL, dashURL, dashToken] = process.argv.slice(2);
let n = 0;
let failed = 0;
function check(ok, what, detail = '') {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}${ok || !detail ? '' : ` (${detail})`}`);
}

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
let shown = null;
async function userAllows() {
  for (let i = 0; i < 200; i++) {
    const { approvals } = await api('GET', '/api/approvals');
    const a = approvals.find((x) => x.kind === 'client');
    if (a) {
      shown = a;
      await api('POST', `/api/approvals/${encodeURIComponent(a.id)}`, { decision: 'allow', scopes: ['files'] });
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no client authorization among the approvals');
}

// A browser: loads the authorization URL, reloads the hub's waiting page (its meta refresh)
// until the hub redirects to the client's redirect URI, and returns that URL.
async function browse(url) {
  let next = url.toString();
  for (let i = 0; i < 100; i++) {
    const r = await fetch(next, { redirect: 'manual' });
    if (r.status === 302) return new URL(r.headers.get('location'));
    const page = await r.text();
    const m = page.match(/url=([^"]+)"/);
    if (r.status !== 200 || !m) throw new Error(`authorize page: ${r.status} ${page.slice(0, 200)}`);
    next = new URL(m[1].replaceAll('&amp;', '&'), next).toString();
  }
  throw new Error('the authorize page never redirected');
}

const redirectUrl = 'http://127.0.0.1:41999/callback';
class Provider {
  constructor() {
    this.info = undefined;
    this.toks = undefined;
    this.verifier = '';
    this.landed = null;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return { client_name: 'TS SDK client', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'ts-state'; }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.toks; }
  saveTokens(t) { this.toks = t; }
  async redirectToAuthorization(url) {
    this.authURL = url;
    const [landed] = await Promise.all([browse(url), userAllows()]);
    this.landed = landed;
  }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

const provider = new Provider();
try {
  // First connection: 401 → discovery → registration → authorization → UnauthorizedError.
  let transport = new StreamableHTTPClientTransport(new URL(hubURL), { authProvider: provider });
  let client = new Client({ name: 'ts-oauth', version: '1' });
  let needAuth = false;
  try {
    await client.connect(transport);
  } catch (e) {
    needAuth = e instanceof UnauthorizedError;
    if (!needAuth) throw e;
  }
  check(needAuth && provider.info?.client_id, 'registered dynamically and sent to authorize', JSON.stringify(provider.info));
  check(provider.authURL?.searchParams.get('code_challenge_method') === 'S256' && provider.authURL?.searchParams.get('resource') === hubURL,
    'the authorization request carries PKCE S256 and the resource indicator', provider.authURL?.toString());
  check(shown?.client === 'TS SDK client' && shown?.device === '127.0.0.1', 'the approval names the client and its device', JSON.stringify(shown));
  const code = provider.landed?.searchParams.get('code');
  check(code && provider.landed.searchParams.get('state') === 'ts-state', 'the browser lands on the redirect URI with the code and state', provider.landed?.toString());
  await transport.finishAuth(code);
  check(provider.toks?.access_token && provider.toks?.refresh_token && provider.toks?.scope === 'files', 'the code exchanged for tokens scoped to files', JSON.stringify({ scope: provider.toks?.scope }));

  transport = new StreamableHTTPClientTransport(new URL(hubURL), { authProvider: provider });
  client = new Client({ name: 'ts-oauth', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const sets = new Set(tools.map((t) => t._meta?.['switchboard/toolset']).filter(Boolean));
  check(tools.some((t) => t.name === 'file_read') && !tools.some((t) => t.name === 'process_start'), 'tools/list shows files tools only', [...sets].join(','));
  const wr = await client.callTool({ name: 'file_write', arguments: { path: 'ts-oauth.txt', content: 'from the TS SDK' } });
  check(!wr.isError, 'file_write runs', JSON.stringify(wr.content));
  const ps = await client.callTool({ name: 'process_start', arguments: { command: 'true' } });
  check(ps.isError && /not granted/.test(ps.content?.[0]?.text ?? ''), 'process_start is refused: not granted', JSON.stringify(ps.content));
  await client.close();

  // The access token goes bad (as when it expires): the SDK refreshes on the 401, rotating.
  const before = provider.toks.refresh_token;
  provider.toks = { ...provider.toks, access_token: 'expired-or-unknown' };
  transport = new StreamableHTTPClientTransport(new URL(hubURL), { authProvider: provider });
  client = new Client({ name: 'ts-oauth', version: '1' });
  await client.connect(transport);
  const again = await client.listTools();
  check(again.tools.length > 0 && provider.toks.refresh_token !== before && provider.toks.access_token !== 'expired-or-unknown',
    'a 401 makes the SDK refresh: new access and refresh tokens');
  await client.close();

  // RevokeGrant on the dashboard: the next request is refused.
  const { grants } = await api('GET', '/api/grants');
  check(grants.length === 1 && grants[0].clientName === 'TS SDK client', 'Settings lists the grant', JSON.stringify(grants));
  await api('POST', `/api/grants/${encodeURIComponent(grants[0].id)}/revoke`);
  const r = await fetch(hubURL, {
    method: 'POST',
    headers: { Authorization: `Bearer ${provider.toks.access_token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  check(r.status === 401 && /resource_metadata=/.test(r.headers.get('www-authenticate') ?? ''), 'after RevokeGrant the token gets 401 with resource_metadata', String(r.status));
  const refreshed = await fetch(new URL('/oauth/token', hubURL), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: provider.toks.refresh_token, client_id: provider.info.client_id }),
  });
  check(refreshed.status === 400, 'and its refresh token is refused', String(refreshed.status));
} catch (e) {
  check(false, 'the flow ran to its end', e?.stack ?? String(e));
}
console.log(`1..${n}`);
console.log(`# pass ${n - failed}`);
console.log(`# fail ${failed}`);
process.exit(failed ? 1 : 0);
