// @vitest-environment node
// The HTTP control is exercised against a real node:http server with the real fetch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpControl, WailsControl, createControl, pageBase, tokenFromUrl, type WailsApp } from './control';

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const raw = await readBody(req);
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      auth: req.headers.authorization,
      contentType: req.headers['content-type'],
      body: raw ? JSON.parse(raw) : undefined,
    });
    if (req.headers.authorization !== 'Bearer tok-1') {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'token: missing or wrong' }));
      return;
    }
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/api/bootstrap') return send(200, { hubUrl: 'ws://127.0.0.1:1/ws', hubToken: 'h', version: 'v1', workspace: '/w' });
    if (req.url === '/api/processes' && req.method === 'POST') return send(200, { id: 'proc-1', command: 'sh', status: 'running' });
    if (req.url === '/api/processes/proc%2F9/stop') return send(404, { error: 'id: no process "proc/9"; call process_list to see known IDs' });
    if (req.url === '/api/sessions/gone/workspace') return send(400, { error: 'session "gone": not connected, or it has neither roots nor a relay directory' });
    if (req.url?.startsWith('/api/sessions/') && req.method === 'POST') {
      const b = JSON.parse(raw) as { dir: string; allow: boolean };
      return send(200, { sessionId: decodeURIComponent(req.url.split('/')[3]), dir: b.dir, allow: b.allow, status: b.allow ? 'approved' : 'declined' });
    }
    if (req.url === '/api/clients' && req.method === 'GET') return send(200, { project: '/w', clients: [{ name: 'cursor', display: 'Cursor', format: 'JSON', installed: true, scopes: [] }] });
    if (req.url === '/api/clients/windsurf') {
      return send(400, { error: "/h/.codeium/windsurf/mcp_config.json: line 3: a comment, which this client's JSON parser does not accept; remove it and run this again" });
    }
    if (req.url?.startsWith('/api/clients/') && req.method === 'POST') {
      const b = JSON.parse(raw) as { scope: string; action: string; dryRun: boolean };
      return send(200, { client: req.url.split('/')[3], scope: b.scope, action: b.action, changed: true, applied: !b.dryRun, diff: '', path: '', display: '', state: '', message: '' });
    }
    if (req.url === '/api/servers' && req.method === 'POST') {
      const b = JSON.parse(raw) as { name: string; command?: string };
      if (!b.command) return send(400, { error: `servers: "${b.name}": command: required for a stdio server (or set url for a remote one)` });
      return send(200, { path: '/c/config.toml', diff: '+[[servers]]\n', servers: [{ name: b.name, state: 'starting', approved: false, tools: [] }] });
    }
    if (req.url?.startsWith('/api/servers')) {
      const name = decodeURIComponent(req.url.split('/')[3] ?? '');
      if (req.url.includes('/log')) return send(200, { name, lines: [{ time: '2026-01-01T00:00:00.000Z', stream: 'hub', text: 'started node' }] });
      if (req.url.endsWith('/approve') || req.url.endsWith('/restart')) return send(200, { name, state: 'running', approved: true, tools: [] });
      if (req.method === 'GET') return send(200, { configPath: '/c/config.toml', servers: [] });
      return send(200, { path: '/c/config.toml', diff: '', servers: [] });
    }
    if (req.url === '/api/settings/policy' && (JSON.parse(raw) as { rules: { tool: string }[] }).rules.some((r) => r.tool === 'exec[')) {
      return send(400, { error: 'policy.rules[1].tool: pattern "exec[" has an unclosed [' });
    }
    if (req.url === '/api/settings/policy/test') return send(200, { decision: 'deny', rule: 'rule 1 (tool="exec" → deny)', ruleIndex: 1 });
    if (req.url?.startsWith('/api/settings')) return send(200, { path: '/c/config.toml', diff: '', applies: 'now', note: '', settings: {} });
    if (req.url?.startsWith('/api/audit')) {
      if (req.url.includes('decision=maybe')) return send(400, { error: 'decision: "maybe" is not a policy decision; use allow, ask or deny (or leave it empty for any)' });
      return send(200, { entries: [{ tool: 'file_write', decision: 'deny' }], next: 'abc:12', file: '/d/logs/audit.log', files: ['/d/logs/audit.log'] });
    }
    if (req.url?.startsWith('/api/hublog')) return send(200, { records: [{ seq: 1, level: 'WARN', msg: 'x', time: '' }], file: '/d/logs/hub.log' });
    if (req.url === '/api/broken') {
      res.writeHead(500);
      res.end('plain failure');
      return;
    }
    return send(200, { ok: true });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe('createControl', () => {
  it('uses the Wails bindings when window.go.desktop.App exists', () => {
    const app = { Bootstrap: async () => ({}) } as unknown as WailsApp;
    const c = createControl({ go: { desktop: { App: app } }, location: { href: 'wails://wails/' } });
    expect(c.kind).toBe('wails');
    expect(c).toBeInstanceOf(WailsControl);
  });

  it.each([
    [{ location: { href: 'http://127.0.0.1:8123/?token=abc' } }],
    [{ go: {}, location: { href: 'http://127.0.0.1:8123/?token=abc' } }],
    [{ go: { desktop: {} }, location: { href: 'http://127.0.0.1:8123/?token=abc' } }],
  ])('falls back to HTTP without complete bindings (%j)', (win) => {
    const c = createControl(win);
    expect(c.kind).toBe('http');
    expect(c).toBeInstanceOf(HttpControl);
  });

  it('reads the token and the API base from the page URL', () => {
    expect(tokenFromUrl('http://127.0.0.1:8123/?token=abc#processes')).toBe('abc');
    expect(tokenFromUrl('http://127.0.0.1:8123/')).toBe('');
    expect(pageBase('http://127.0.0.1:8123/?token=abc#processes')).toBe('http://127.0.0.1:8123/');
    expect(pageBase('http://127.0.0.1:8123/dash/index.html?token=abc')).toBe('http://127.0.0.1:8123/dash/index.html');
  });
});

describe('HttpControl against a real server', () => {
  it('sends the page token as a Bearer header and decodes the JSON reply', async () => {
    seen.length = 0;
    const c = createControl({ location: { href: `${base}?token=tok-1#overview` } });
    const b = await c.bootstrap();
    expect(b).toEqual({ hubUrl: 'ws://127.0.0.1:1/ws', hubToken: 'h', version: 'v1', workspace: '/w' });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/bootstrap', auth: 'Bearer tok-1' });
  });

  it('maps every action to the documented method, path and body', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    await c.transports();
    await c.setTransport('tcp', true);
    await c.startProcess('sh', ['-c', 'echo hi']);
    await c.killProcess('proc-1');
    await c.sendInput('proc-1', 'y\n');
    await c.createIDESession('refactor');
    await c.sendChat('s-1', 'hello');
    await c.clientConfig();
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/api/transports', undefined],
      ['POST', '/api/transports/tcp', { enabled: true }],
      ['POST', '/api/processes', { command: 'sh', args: ['-c', 'echo hi'] }],
      ['POST', '/api/processes/proc-1/kill', undefined],
      ['POST', '/api/processes/proc-1/input', { input: 'y\n' }],
      ['POST', '/api/ide/sessions', { name: 'refactor' }],
      ['POST', '/api/ide/chat', { sessionId: 's-1', message: 'hello' }],
      ['GET', '/api/clientconfig', undefined],
    ]);
    expect(seen.filter((s) => s.body !== undefined).every((s) => s.contentType === 'application/json')).toBe(true);
    expect(seen.every((s) => s.auth === 'Bearer tok-1')).toBe(true);
  });

  it('maps the Knowledge view actions to /api/rag', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    await c.ragCollections();
    await c.ragQuery('docs', 'socket path', 3);
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/api/rag/collections', undefined],
      ['POST', '/api/rag/query', { collection: 'docs', question: 'socket path', topK: 3 }],
    ]);
  });

  it('grants and revokes a session workspace with POST /api/sessions/{id}/workspace', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    expect(await c.grantWorkspace('unix/3', '/srv/x', true)).toEqual({ sessionId: 'unix/3', dir: '/srv/x', allow: true, status: 'approved' });
    expect((await c.grantWorkspace('unix-3', '/srv/x', false)).status).toBe('declined');
    expect(seen.map((s) => [s.method, s.url, s.body, s.contentType])).toEqual([
      ['POST', '/api/sessions/unix%2F3/workspace', { dir: '/srv/x', allow: true }, 'application/json'],
      ['POST', '/api/sessions/unix-3/workspace', { dir: '/srv/x', allow: false }, 'application/json'],
    ]);
    await expect(c.grantWorkspace('gone', '/srv/x', true)).rejects.toThrow('grant /srv/x: HTTP 400: session "gone": not connected');
  });

  it('lists, previews (dryRun) and applies client edits with /api/clients', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    expect((await c.listClients()).clients[0].name).toBe('cursor');
    expect((await c.previewClient('cursor', 'user', 'connect', 'search')).changed).toBe(true);
    expect((await c.applyClient('gemini-cli', 'project', 'disconnect', '')).applied).toBe(true);
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/api/clients', undefined],
      ['POST', '/api/clients/cursor', { scope: 'user', action: 'connect', toolsMode: 'search', dryRun: true }],
      ['POST', '/api/clients/gemini-cli', { scope: 'project', action: 'disconnect', toolsMode: '', dryRun: false }],
    ]);
    await expect(c.previewClient('windsurf', 'user', 'connect', '')).rejects.toThrow(
      'preview connect windsurf (user): HTTP 400: /h/.codeium/windsurf/mcp_config.json: line 3: a comment',
    );
  });

  it('maps the Servers view actions to /api/servers (DELETE to remove, no tools to approve a whole server)', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    expect((await c.listServers()).configPath).toBe('/c/config.toml');
    expect((await c.serverLogs('my server', 50)).lines[0].text).toBe('started node');
    expect((await c.approveServer('fixture', [])).approved).toBe(true);
    await c.approveServer('fixture', ['greet']);
    expect((await c.restartServer('fixture')).state).toBe('running');
    await c.setServerEnabled('fixture', false);
    expect((await c.addServer({ name: 'fixture', command: 'node', args: ['f.mjs'], env: { A: '1' } })).servers[0].name).toBe('fixture');
    await c.removeServer('fixture');
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/api/servers', undefined],
      ['GET', '/api/servers/my%20server/log?lines=50', undefined],
      ['POST', '/api/servers/fixture/approve', { tools: [] }],
      ['POST', '/api/servers/fixture/approve', { tools: ['greet'] }],
      ['POST', '/api/servers/fixture/restart', undefined],
      ['POST', '/api/servers/fixture/enabled', { enabled: false }],
      ['POST', '/api/servers', { name: 'fixture', command: 'node', args: ['f.mjs'], env: { A: '1' } }],
      ['DELETE', '/api/servers/fixture', undefined],
    ]);
    await expect(c.addServer({ name: 'x' })).rejects.toThrow('add server x: HTTP 400: servers: "x": command: required for a stdio server');
  });

  it('maps the Settings view actions to /api/settings', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    const policy = { default: 'allow', askTimeout: '', rules: [{ tool: 'exec', action: 'deny', origin: 2 }], roots: [] };
    expect((await c.settings()).path).toBe('/c/config.toml');
    await c.saveTransports([{ name: 'tcp', enabled: true, addr: '127.0.0.1:9200' }]);
    await c.saveToolsets(['files']);
    await c.saveWorkspace('/w2');
    await c.savePolicy(policy);
    expect((await c.testPolicy({ policy, tool: 'exec', args: { command: 'rm' } })).decision).toBe('deny');
    await c.saveML({ defaultBackend: '', judgeBackend: '', backends: [] });
    await c.saveRAG({ backend: 'embedded', url: '', embedder: 'offline', model: '', embedderUrl: '', collection: '', dir: '' });
    await c.setAutostart(true);
    await c.saveSecurity({ tcpRequireToken: true, httpAllowedOrigins: ['http://localhost:6274'] });
    await c.regenerateToken('client');
    await c.saveWeb({ allow: ['intranet.example'], timeout: '30s' });
    await c.setRAGAPIKey({ action: 'reference', ref: '${QDRANT_API_KEY}' });
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/api/settings'],
      ['POST', '/api/settings/transports'],
      ['POST', '/api/settings/toolsets'],
      ['POST', '/api/settings/workspace'],
      ['POST', '/api/settings/policy'],
      ['POST', '/api/settings/policy/test'],
      ['POST', '/api/settings/ml'],
      ['POST', '/api/settings/rag'],
      ['POST', '/api/settings/autostart'],
      ['POST', '/api/settings/security'],
      ['POST', '/api/settings/token'],
      ['POST', '/api/settings/web'],
      ['POST', '/api/settings/rag/apikey'],
    ]);
    expect(seen.slice(9).map((s) => s.body)).toEqual([
      { tcpRequireToken: true, httpAllowedOrigins: ['http://localhost:6274'] },
      { token: 'client' },
      { allow: ['intranet.example'], timeout: '30s' },
      { action: 'reference', ref: '${QDRANT_API_KEY}' },
    ]);
    expect(seen.slice(1, 4).map((s) => s.body)).toEqual([{ transports: [{ name: 'tcp', enabled: true, addr: '127.0.0.1:9200' }] }, { toolsets: ['files'] }, { workspace: '/w2' }]);
    expect(seen[5].body).toEqual({ policy, tool: 'exec', args: { command: 'rm' } });
    expect(seen[8].body).toEqual({ enabled: true });
    await expect(c.savePolicy({ ...policy, rules: [{ tool: 'exec[', action: 'deny' }] })).rejects.toThrow('save policy: HTTP 400: policy.rules[1].tool: pattern');
  });

  it('reads the logs with GET /api/audit (only the filters set) and /api/hublog', async () => {
    seen.length = 0;
    const c = new HttpControl(base, 'tok-1');
    const page = await c.audit({ client: 'claude code', tool: 'file_*', decision: 'deny', outcome: '', limit: 50, before: '' });
    expect(page.next).toBe('abc:12');
    await c.audit({ client: '', tool: '', decision: '', outcome: 'error', limit: 0, before: 'abc:12' });
    expect((await c.hubLog('warn', 200)).file).toBe('/d/logs/hub.log');
    await c.hubLog('', 0);
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/api/audit?client=claude+code&tool=file_*&decision=deny&limit=50'],
      ['GET', '/api/audit?outcome=error&before=abc%3A12'],
      ['GET', '/api/hublog?level=warn&limit=200'],
      ['GET', '/api/hublog'],
    ]);
    await expect(c.audit({ client: '', tool: '', decision: 'maybe' as 'deny', outcome: '', limit: 0, before: '' })).rejects.toThrow(
      'read the audit log: HTTP 400: decision: "maybe" is not a policy decision',
    );
  });

  it('turns an error reply into an Error naming the action and the server message', async () => {
    const c = new HttpControl(base, 'tok-1');
    await expect(c.stopProcess('proc/9')).rejects.toThrow('stop proc/9: HTTP 404: id: no process "proc/9"; call process_list to see known IDs');
  });

  it('explains a 401 (missing or wrong token)', async () => {
    const c = new HttpControl(base, '');
    const err = await c.bootstrap().then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toContain('HTTP 401: token: missing or wrong');
    expect(err?.message).toContain('?token=');
    expect(seen[seen.length - 1].auth).toBeUndefined();
  });

  it('keeps a non-JSON error body as the message', async () => {
    const c = new HttpControl(base, 'tok-1');
    // Reach an arbitrary path through the private request helper via a subclass.
    class Probe extends HttpControl {
      broken() {
        return (this as unknown as { request: (a: string, m: string, p: string) => Promise<unknown> }).request('probe', 'GET', 'api/broken');
      }
    }
    await expect(new Probe(base, 'tok-1').broken()).rejects.toThrow('probe: HTTP 500: plain failure');
    expect(c.kind).toBe('http');
  });

  it('reports a refused connection with the action', async () => {
    const c = new HttpControl('http://127.0.0.1:1/', 'tok-1');
    await expect(c.transports()).rejects.toThrow(/^list transports: /);
  });
});

describe('WailsControl', () => {
  it('calls the bound methods with the same arguments and returns their result', async () => {
    const calls: unknown[][] = [];
    const rec =
      (name: string, result: unknown = {}) =>
      async (...args: unknown[]) => {
        calls.push([name, ...args]);
        return result;
      };
    const app: WailsApp = {
      Bootstrap: rec('Bootstrap', { hubUrl: 'ws://x/ws', hubToken: 't', version: 'v', workspace: '/w' }),
      Transports: rec('Transports', { transports: [] }),
      SetTransport: rec('SetTransport'),
      StartProcess: rec('StartProcess', { id: 'proc-2' }),
      StopProcess: rec('StopProcess'),
      KillProcess: rec('KillProcess'),
      SendInput: rec('SendInput'),
      CreateIDESession: rec('CreateIDESession'),
      SendChat: rec('SendChat'),
      ClientConfig: rec('ClientConfig', { unix: {} }),
      RAGCollections: rec('RAGCollections', { collections: [] }),
      RAGQuery: rec('RAGQuery', { results: [] }),
      GrantWorkspace: rec('GrantWorkspace', { sessionId: 'unix-1', dir: '/srv/x', allow: true, status: 'approved' }),
    } as WailsApp;
    const c = createControl({ go: { desktop: { App: app } }, location: { href: 'wails://wails/' } });
    expect((await c.bootstrap()).hubUrl).toBe('ws://x/ws');
    await c.transports();
    await c.setTransport('http', false);
    expect((await c.startProcess('make', ['-j2'])).id).toBe('proc-2');
    await c.stopProcess('proc-2');
    await c.killProcess('proc-2');
    await c.sendInput('proc-2', 'q');
    await c.createIDESession('n');
    await c.sendChat('s', 'm');
    await c.clientConfig();
    expect((await c.grantWorkspace('unix-1', '/srv/x', true)).status).toBe('approved');
    await c.grantWorkspace('unix-1', '/srv/x', false);
    expect(calls).toEqual([
      ['Bootstrap'],
      ['Transports'],
      ['SetTransport', 'http', false],
      ['StartProcess', 'make', ['-j2']],
      ['StopProcess', 'proc-2'],
      ['KillProcess', 'proc-2'],
      ['SendInput', 'proc-2', 'q'],
      ['CreateIDESession', 'n'],
      ['SendChat', 's', 'm'],
      ['ClientConfig'],
      ['GrantWorkspace', 'unix-1', '/srv/x', true],
      ['GrantWorkspace', 'unix-1', '/srv/x', false],
    ]);
  });

  it('passes the Settings view actions to the bound methods', async () => {
    const calls: unknown[][] = [];
    const rec =
      (name: string, result: unknown = {}) =>
      async (...args: unknown[]) => {
        calls.push([name, ...args]);
        return result;
      };
    const names = ['Settings', 'SaveTransports', 'SaveToolsets', 'SaveWorkspace', 'SavePolicy', 'TestPolicy', 'SaveML', 'SaveRAG', 'SetAutostart', 'SaveSecurity', 'RegenerateToken', 'SaveWeb', 'SetRAGAPIKey'];
    const app = Object.fromEntries([['Bootstrap', rec('Bootstrap')], ...names.map((n) => [n, rec(n)])]) as unknown as WailsApp;
    const c = new WailsControl(app);
    const policy = { default: '', askTimeout: '', rules: [], roots: [] };
    const rag = { backend: '', url: '', embedder: '', model: '', embedderUrl: '', collection: '', dir: '' };
    await c.settings();
    await c.saveTransports([{ name: 'unix', enabled: true, addr: '' }]);
    await c.saveToolsets(['git']);
    await c.saveWorkspace('');
    await c.savePolicy(policy);
    await c.testPolicy({ policy, tool: 'x' });
    await c.saveML({ defaultBackend: '', judgeBackend: '', backends: [] });
    await c.saveRAG(rag);
    await c.setAutostart(false);
    await c.saveSecurity({ tcpRequireToken: false, httpAllowedOrigins: [] });
    await c.regenerateToken('http');
    await c.saveWeb({ allow: [], timeout: '' });
    await c.setRAGAPIKey({ action: 'remove' });
    expect(calls.map((c) => c[0])).toEqual(names);
    expect(calls.slice(10)).toEqual([
      ['RegenerateToken', 'http'],
      ['SaveWeb', { allow: [], timeout: '' }],
      ['SetRAGAPIKey', { action: 'remove' }],
    ]);
    expect(calls[1]).toEqual(['SaveTransports', [{ name: 'unix', enabled: true, addr: '' }]]);
    expect(calls[8]).toEqual(['SetAutostart', false]);
  });

  it('turns a string rejection from Go into an Error with the action', async () => {
    const app = {
      Bootstrap: async () => ({}),
      StopProcess: async () => {
        throw 'id: no process "p-9"; call process_list to see known IDs';
      },
    } as unknown as WailsApp;
    const c = new WailsControl(app);
    await expect(c.stopProcess('p-9')).rejects.toThrow('stop p-9: id: no process "p-9"; call process_list to see known IDs');
  });

  it('passes client edits to the bound methods and names the client when one fails', async () => {
    const calls: unknown[][] = [];
    const app = {
      Bootstrap: async () => ({}),
      ListClients: async () => {
        calls.push(['ListClients']);
        return { clients: [], project: '/w' };
      },
      PreviewClient: async (...a: unknown[]) => {
        calls.push(['PreviewClient', ...a]);
        return { changed: true };
      },
      ApplyClient: async (...a: unknown[]) => {
        calls.push(['ApplyClient', ...a]);
        throw '/h/.cursor/mcp.json does not parse: invalid character';
      },
    } as unknown as WailsApp;
    const c = new WailsControl(app);
    expect((await c.listClients()).project).toBe('/w');
    expect((await c.previewClient('cursor', 'project', 'connect', 'script')).changed).toBe(true);
    await expect(c.applyClient('cursor', 'user', 'connect', '')).rejects.toThrow('connect cursor (user): /h/.cursor/mcp.json does not parse');
    expect(calls).toEqual([
      ['ListClients'],
      ['PreviewClient', 'cursor', 'project', 'connect', 'script'],
      ['ApplyClient', 'cursor', 'user', 'connect', ''],
    ]);
  });

  it('passes the log queries to the bound methods', async () => {
    const calls: unknown[][] = [];
    const app = {
      Bootstrap: async () => ({}),
      Audit: async (...a: unknown[]) => {
        calls.push(['Audit', ...a]);
        return { entries: [], file: '/d/logs/audit.log', files: [] };
      },
      HubLog: async (...a: unknown[]) => {
        calls.push(['HubLog', ...a]);
        throw 'level: "loud" is not a level; use debug, info, warn or error';
      },
    } as unknown as WailsApp;
    const c = new WailsControl(app);
    const q = { client: 'cursor', tool: '', decision: 'deny' as const, outcome: '' as const, limit: 0, before: '' };
    expect((await c.audit(q)).file).toBe('/d/logs/audit.log');
    await expect(c.hubLog('loud', 10)).rejects.toThrow('read the hub log: level: "loud" is not a level');
    expect(calls).toEqual([
      ['Audit', q],
      ['HubLog', 'loud', 10],
    ]);
  });

  it('names the directory when a grant fails', async () => {
    const app = {
      Bootstrap: async () => ({}),
      GrantWorkspace: async () => {
        throw 'dir: /x is not a root or the relay directory of session unix-1';
      },
    } as unknown as WailsApp;
    await expect(new WailsControl(app).grantWorkspace('unix-1', '/x', true)).rejects.toThrow('grant /x: dir: /x is not a root or the relay directory of session unix-1');
  });
});
