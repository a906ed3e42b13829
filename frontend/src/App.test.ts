// @vitest-environment jsdom
// The whole dashboard mounted in jsdom, fed by a fake hub socket and a recording control: checks
// that hub data reaches the DOM under the documented data-testids and that controls call the API.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import App from './App.svelte';
import type { Control } from './lib/control';
import type { Bootstrap, Settings } from './lib/types';
import { SocketRecorder, hubMsg, type FakeSocket } from './test/fakeSocket';
import { viewShown } from './test/view';

const BOOT: Bootstrap = { hubUrl: 'ws://127.0.0.1:7001/ws', hubToken: 'hub-tok', version: 'v0.9.0', workspace: '/home/u/proj' };

const SETTINGS: Settings = {
  path: '/home/u/.config/switchboard/config.toml',
  exists: true,
  transports: [
    { name: 'unix', enabled: true, addr: '/run/sb/mcp.sock', running: true, runningAddr: '/run/sb/mcp.sock' },
    { name: 'tcp', enabled: false, addr: '127.0.0.1:9100', running: false, runningAddr: '' },
    { name: 'http', enabled: false, addr: '127.0.0.1:9101', running: false, runningAddr: '' },
  ],
  toolsets: {
    saved: [],
    default: ['files', 'process'],
    available: [
      { name: 'files', title: 'files', enabled: true, tools: 10 },
      { name: 'process', title: 'processes', enabled: true, tools: 6 },
      { name: 'ide', title: 'the IDE bridge', enabled: false, tools: 8 },
    ],
  },
  workspace: { saved: '', running: '/home/u/proj' },
  policy: {
    default: 'allow',
    askTimeout: '',
    rules: [
      { tool: 'file_delete', action: 'ask', origin: 1 },
      { tool: 'git_push', action: 'deny', origin: 2 },
    ],
    roots: [],
    status: { path: '/home/u/.config/switchboard/config.toml', default: 'allow', askTimeout: '2m0s', rules: 2, rootsAllow: [], loadedAt: '' },
  },
  ml: { defaultBackend: '', judgeBackend: '', backends: [], running: ['ollama'], influxUrl: '', influxDb: '' },
  rag: { backend: '', url: '', embedder: '', model: '', embedderUrl: '', collection: '', dir: '', apiKey: { state: 'none' } },
  autostart: { available: true, enabled: false, entry: '/home/u/.config/autostart/switchboard.desktop' },
  security: {
    tcpRequireToken: false,
    httpAllowedOrigins: [],
    runningTcpRequireToken: false,
    runningHttpAllowedOrigins: [],
    tokens: [
      { name: 'client', source: 'file', where: '/home/u/.config/switchboard/token', exists: true, usedBy: ['http', 'tcp'], regenerate: true, reconfigure: 'Reconfigure: Streamable HTTP clients …' },
      { name: 'http', source: 'client', where: '/home/u/.config/switchboard/token', exists: false, usedBy: ['http'], regenerate: false, reconfigure: '' },
      { name: 'tcp', source: 'client', where: '/home/u/.config/switchboard/token', exists: false, usedBy: ['tcp'], regenerate: false, reconfigure: '' },
    ],
  },
  web: { allow: [], timeout: '', envAllow: [] },
  code: { idle: '', idleDefault: '10m0s', idleRunning: '10m0s', servers: [{ language: 'go', command: [], default: 'gopls', running: [], found: '/usr/bin/gopls' }] },
  tasks: { saved: '', running: '45s', default: '45s' },
  overrides: [{ env: 'MCP_ADDR', key: 'tcp.addr' }],
  flags: [{ flag: '--workspace', key: 'workspace', value: '/home/u/proj' }],
  pending: ['rag'],
};

function fakeControl(overrides: Partial<Control> = {}) {
  const calls: unknown[][] = [];
  const rec =
    (name: string, result: unknown = {}) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return result as never;
    };
  const control: Control = {
    kind: 'http',
    bootstrap: rec('bootstrap', BOOT),
    transports: rec('transports', { transports: [] }),
    setTransport: rec('setTransport'),
    toolsets: rec('toolsets', { toolsets: [] }),
    setToolset: rec('setToolset', { toolsets: [] }),
    startProcess: rec('startProcess', { id: 'proc-7' }),
    stopProcess: rec('stopProcess'),
    killProcess: rec('killProcess'),
    cancelTask: rec('cancelTask'),
    sendInput: rec('sendInput'),
    createIDESession: rec('createIDESession', { session: { id: 's-new', name: 'n', status: 'active', createdAt: '' } }),
    sendChat: rec('sendChat'),
    clientConfig: rec('clientConfig', { unix: { mcpServers: { switchboard: { command: 'switchboard', args: ['connect'] } } } }),
    approvals: rec('approvals', { approvals: [], policy: null }),
    decideApproval: rec('decideApproval', { id: 'a1', decision: 'allow' }),
    grantWorkspace: rec('grantWorkspace', { sessionId: 'stdio-1', dir: '/x', allow: true, status: 'approved' }),
    ragCollections: rec('ragCollections', { collections: [] }),
    ragQuery: rec('ragQuery', { results: [], query: '', collection: '', context: '' }),
    listClients: rec('listClients', { clients: [], project: '/home/u/proj' }),
    previewClient: rec('previewClient', {}),
    applyClient: rec('applyClient', {}),
    listServers: rec('listServers', { servers: [], configPath: '/home/u/.config/switchboard/config.toml' }),
    serverLogs: rec('serverLogs', { name: '', lines: [] }),
    approveServer: rec('approveServer', {}),
    approveServerCommand: rec('approveServerCommand', {}),
    restartServer: rec('restartServer', {}),
    loginServer: rec('loginServer', { name: '', url: '', opened: false }),
    logoutServer: rec('logoutServer', {}),
    setServerEnabled: rec('setServerEnabled', { path: '', diff: '', servers: [] }),
    addServer: rec('addServer', { path: '', diff: '', servers: [] }),
    removeServer: rec('removeServer', { path: '', diff: '', servers: [] }),
    settings: rec('settings', SETTINGS),
    // Each section given previews as a one-line diff (the hub's checks are in the save mocks).
    previewSettings: async (input) => {
      calls.push(['previewSettings', input]);
      return { path: SETTINGS.path, sections: Object.keys(input).map((section) => ({ section, diff: `+${section}\n`, applies: 'now' })) };
    },
    saveTransports: rec('saveTransports', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    saveToolsets: rec('saveToolsets', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    saveWorkspace: rec('saveWorkspace', { path: '', diff: '', applies: 'next start', note: '', settings: SETTINGS }),
    savePolicy: rec('savePolicy', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    testPolicy: rec('testPolicy', { decision: 'allow', rule: 'default policy (allow)', ruleIndex: 0 }),
    saveML: rec('saveML', { path: '', diff: '', applies: 'next start', note: '', settings: SETTINGS }),
    saveRAG: rec('saveRAG', { path: '', diff: '', applies: 'next start', note: '', settings: SETTINGS }),
    setAutostart: rec('setAutostart', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    saveSecurity: rec('saveSecurity', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    regenerateToken: rec('regenerateToken', { token: 'client', path: '/home/u/.config/switchboard/token', diff: '', reconfigure: 'Reconfigure: …', settings: SETTINGS }),
    saveWeb: rec('saveWeb', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    saveCode: rec('saveCode', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    clientTokens: rec('clientTokens', { tokens: [{ client: 'cursor', created: '2026-11-28T10:00:00Z', lastUsed: '2026-11-28T11:00:00Z' }] }),
    issueClientToken: rec('issueClientToken', { client: 'codex', token: 'sbc_new', replaced: false }),
    revokeClientToken: rec('revokeClientToken', { tokens: [] }),
    saveTasks: rec('saveTasks', { path: '', diff: '', applies: 'now', note: '', settings: SETTINGS }),
    setRAGAPIKey: rec('setRAGAPIKey', { path: '', diff: '', applies: 'next start', note: '', settings: SETTINGS }),
    grants: rec('grants', { enabled: false, grants: [], tls: false }),
    revokeGrant: rec('revokeGrant', { enabled: false, grants: [], tls: false }),
    audit: rec('audit', { entries: [], file: '/d/logs/audit.log', files: [] }),
    hubLog: rec('hubLog', { records: [], file: '/d/logs/hub.log' }),
    project: rec('project', { dir: '/home/u/proj', name: 'proj', source: 'cwd' }),
    setProject: rec('setProject', { project: { dir: '/home/u/proj', name: 'proj', source: 'chosen' }, note: '' }),
    pickProject: rec('pickProject', { project: { dir: '/home/u/proj', name: 'proj', source: 'chosen' }, note: '' }),
    ...overrides,
  };
  return { control, calls };
}

let app: ReturnType<typeof mount> | null = null;

afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  window.location.hash = '';
});

async function start(overrides: Partial<Control> = {}) {
  const rec = new SocketRecorder();
  const { control, calls } = fakeControl(overrides);
  app = mount(App, {
    target: document.body,
    props: {
      control,
      dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn(), backoff: { initialMs: 5, maxMs: 5 } },
    },
  });
  await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
  const sock = rec.last;
  sock.serverOpen();
  flushSync();
  return { rec, sock, calls };
}

const $ = (id: string) => document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
const $$ = (id: string) => [...document.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

function send(sock: FakeSocket, type: string, channel: string, data: unknown) {
  sock.serverSend(hubMsg(type, channel, data, new Date().toISOString()));
  flushSync();
}

/** Opens a tab and waits for its view (loaded on demand the first time). */
async function openTab(t: string) {
  click(`tab-${t}`);
  await viewShown(t);
}

function click(id: string) {
  const el = $(id);
  if (!el) throw new Error(`no element with data-testid=${id}`);
  el.click();
  flushSync();
}

/** The Settings view's Save: Review changes…, then Save once the review shows (disabled when it found a refusal). */
async function saveSettings() {
  click('settings-review-open');
  await vi.waitFor(() => expect($('settings-review')).not.toBeNull());
  click('settings-save');
}

describe('App', () => {
  it('boots, connects to the hub URL with its token and subscribes to the shared channels', async () => {
    const { sock } = await start();
    expect(sock.url).toBe('ws://127.0.0.1:7001/ws?token=hub-tok');
    expect(sock.frames().map((f) => f.channel)).toEqual([
      'sessions',
      'activity',
      'transports',
      'toolsets',
      'processes',
      'ide:bridge',
      'ide:sessions',
      'ide:builds',
      'ide:activity',
      'approvals',
      'servers',
      'project', // the header's project folder and the first-run prompt
      'tasks', // the Activity view's Tasks list
      'ml', // the overview's inference backends card
    ]);
    expect($('hub-status')?.dataset.status).toBe('open');
    expect($('app-version')?.textContent).toBe('v0.9.0');
    expect($('tab-overview')?.getAttribute('aria-selected')).toBe('true');
  });

  it('shows the inference backends of the ml channel with reachability and the default', async () => {
    const { sock } = await start();
    expect($('ml-backends-empty')?.textContent).toContain('Checking backends');
    send(sock, 'snapshot', 'ml', {
      backends: [
        { name: 'ollama', available: true, kind: 'ollama', url: 'http://localhost:11434' },
        { name: 'gpu', available: false, kind: 'openai', url: 'http://gpu:8000/v1', model: 'qwen', error: 'connection refused' },
      ],
      default: 'ollama',
    });
    const rows = document.querySelectorAll<HTMLElement>('[data-testid="ml-backend-row"]');
    expect([...rows].map((r) => [r.dataset.name, r.dataset.available])).toEqual([
      ['ollama', 'true'],
      ['gpu', 'false'],
    ]);
    expect($('ml-backend-gpu-status')?.dataset.status).toBe('unreachable');
    expect(rows[1].textContent).toContain('connection refused');
    expect(rows[0].querySelector('[data-testid="ml-backend-default"]')).not.toBeNull();
    expect($('ml-backends-help')).toBeNull();
    send(sock, 'event', 'ml', { backends: [{ name: 'ollama', available: false, kind: 'ollama', url: 'u' }], default: 'ollama' });
    expect($('ml-backend-ollama-status')?.dataset.status).toBe('unreachable');
    expect($('ml-backends-help')).not.toBeNull();
    // The local Ollama nobody set up (assumed) is calm: "not set up" with the how-to, no red error.
    send(sock, 'event', 'ml', { backends: [{ name: 'ollama', available: false, assumed: true, kind: 'ollama', url: 'u', error: 'connection refused' }], default: 'ollama' });
    const badge = $('ml-backend-ollama-status');
    expect(badge?.dataset.status).toBe('not set up');
    expect(badge?.className).toContain('tone-idle');
    expect($('ml-backend-ollama-error')).toBeNull();
    expect($('ml-backends-help')).not.toBeNull();
  });

  it('shows transports and toggles one through the control API; the hub transport cannot be switched off', async () => {
    const { sock, calls } = await start();
    send(sock, 'snapshot', 'transports', {
      transports: [
        { name: 'tcp', running: false, addr: '127.0.0.1:9100' },
        { name: 'ws', running: true, addr: '127.0.0.1:7001', url: 'ws://127.0.0.1:7001/ws' },
      ],
    });
    expect($('transport-tcp-addr')?.textContent).toBe('127.0.0.1:9100');
    expect($('transport-ws-url')?.textContent).toBe('ws://127.0.0.1:7001/ws');
    const tcp = $('transport-tcp-toggle') as HTMLInputElement;
    expect(tcp.checked).toBe(false);
    expect(($('transport-ws-toggle') as HTMLInputElement).disabled).toBe(true);
    tcp.click();
    await vi.waitFor(() => expect(calls).toContainEqual(['setTransport', 'tcp', true]));
    send(sock, 'event', 'transports', { transports: [{ name: 'tcp', running: true, addr: '127.0.0.1:9100' }] });
    expect(($('transport-tcp-toggle') as HTMLInputElement).checked).toBe(true);
    expect($('transport-tcp-status')?.dataset.status).toBe('running');
  });

  it('lists toolsets and switches one through the control API; a set without tools cannot be switched', async () => {
    const { sock, calls } = await start({
      setToolset: async (name: string, enabled: boolean) => {
        calls.push(['setToolset', name, enabled]);
        return {
          toolsets: [
            { name: 'process', title: 'processes', enabled: false, tools: ['exec', 'process_start'] },
            { name: 'rag', title: 'rag', enabled: true, tools: [] },
          ],
        };
      },
    });
    send(sock, 'snapshot', 'toolsets', {
      toolsets: [
        { name: 'process', title: 'processes', enabled: true, tools: ['exec', 'process_start'] },
        { name: 'rag', title: 'rag', enabled: true, tools: [] },
      ],
    });
    expect($('toolset-count')?.textContent).toContain('2 tools served');
    expect($('toolset-rag-tools')?.textContent).toContain('none in this build');
    expect(($('toolset-rag-toggle') as HTMLInputElement).disabled).toBe(true);
    const proc = $('toolset-process-toggle') as HTMLInputElement;
    expect(proc.checked).toBe(true);
    proc.click();
    await vi.waitFor(() => expect(calls).toContainEqual(['setToolset', 'process', false]));
    await vi.waitFor(() => expect($('toolset-count')?.textContent).toContain('0 tools served'));
    expect(($('toolset-process-toggle') as HTMLInputElement).checked).toBe(false);
  });

  it('a failed toggle flips back and shows the error', async () => {
    const { sock } = await start({
      setTransport: async () => {
        throw new Error('enable tcp: HTTP 500: address already in use');
      },
    });
    send(sock, 'snapshot', 'transports', { transports: [{ name: 'tcp', running: false, addr: '127.0.0.1:9100' }] });
    const tcp = $('transport-tcp-toggle') as HTMLInputElement;
    tcp.click();
    await vi.waitFor(() => expect($('control-error')?.textContent).toContain('address already in use'));
    expect(tcp.checked).toBe(false);
  });

  it('renders bridge status, sessions and the calls-per-minute chart from hub data', async () => {
    const { sock } = await start();
    expect($('sessions-empty')?.textContent).toContain('switchboard connect');
    send(sock, 'snapshot', 'ide:bridge', { connected: false, url: 'ws://localhost:9876/ws', attempts: 4, lastError: 'connection refused', nextRetryAt: new Date(Date.now() + 8000).toISOString() });
    expect($('bridge-status')?.dataset.connected).toBe('false');
    expect($('bridge-url')?.textContent).toBe('ws://localhost:9876/ws');
    expect($('bridge-attempts')?.textContent).toBe('4');
    expect($('bridge-last-error')?.textContent).toBe('connection refused');
    expect($('bridge-next-retry')?.textContent).toMatch(/^in /);
    expect($('bridge-help')?.textContent).toContain('SWITCHBOARD_IDE_URL');
    send(sock, 'event', 'ide:bridge', { connected: true, url: 'ws://localhost:9876/ws', attempts: 0 });
    expect($('bridge-status')?.dataset.connected).toBe('true');
    expect($('bridge-help')).toBeNull();

    send(sock, 'snapshot', 'sessions', {
      sessions: [{ id: 'unix-1', transport: 'unix', clientName: 'claude-code', clientVersion: '2.0', peer: 'pid 99', connectedAt: new Date().toISOString(), calls: 0 }],
    });
    expect($('session-count')?.textContent).toBe('1');

    const now = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      send(sock, 'event', 'activity', { time: now, tool: 'file_read', session: 'unix-1', transport: 'unix', level: 'INFO', outcome: 'ok', durationMs: 2, args: `path=a${i}` });
    }
    expect($('calls-per-minute')?.textContent).toBe('3');
    expect($('calls-last-30')?.textContent).toBe('3');
    const bars = $$('calls-chart-bar');
    expect(bars).toHaveLength(30);
    expect(bars[29].dataset.count).toBe('3');
    expect($$('recent-activity-row')).toHaveLength(3);
  });

  it('loads the client configuration on demand', async () => {
    const { calls } = await start();
    click('client-config-toggle');
    await vi.waitFor(() => expect($('client-config-unix')?.textContent).toContain('"connect"'));
    expect(calls.filter((c) => c[0] === 'clientConfig')).toHaveLength(1);
  });

  it('hides the HTTP bearer token on screen; copy gives the real one, and it shows on request', async () => {
    const http = { mcpServers: { switchboard: { type: 'http', url: 'http://127.0.0.1:8765/mcp', headers: { Authorization: 'Bearer s3cret-tok' } } } };
    const stdio = { mcpServers: { switchboard: { command: 'switchboard', args: ['serve', '--stdio'] } } };
    await start({ clientConfig: async () => ({ stdio, http }) });
    click('client-config-toggle');
    await vi.waitFor(() => expect($('client-config-http')?.textContent).toContain('Bearer ••••'));
    expect($('client-config-http')?.textContent).not.toContain('s3cret-tok');
    expect($('client-config-reveal-stdio')).toBeNull();
    const writeText = vi.fn(async (_: string) => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    try {
      click('client-config-copy-http');
      await vi.waitFor(() => expect(writeText).toHaveBeenCalled());
      expect(JSON.parse(writeText.mock.calls[0][0])).toEqual(http);
    } finally {
      Reflect.deleteProperty(navigator, 'clipboard');
    }
    click('client-config-reveal-http');
    await vi.waitFor(() => expect($('client-config-http')?.textContent).toContain('Bearer s3cret-tok'));
    click('client-config-reveal-http');
    await vi.waitFor(() => expect($('client-config-http')?.textContent).not.toContain('s3cret-tok'));
  });

  it('activity: each call by client and transport, its decision and argument values; filters by tool, client, level and text', async () => {
    const { sock } = await start();
    await openTab('activity');
    expect($('activity-empty')).not.toBeNull();
    const t = new Date().toISOString(); // one time: the rows come newest-finished first
    send(sock, 'snapshot', 'activity', {
      events: [
        { time: t, tool: 'file_read', session: 'unix-1', client: 'claude-code', transport: 'unix', level: 'INFO', outcome: 'ok', durationMs: 1, args: 'path="src/Main.go"', decision: 'allow', rule: 'default policy (allow)', values: { path: 'src/Main.go' } },
        { time: t, tool: 'process_start', session: 'tcp-2', client: 'cursor', transport: 'tcp', level: 'SECURITY', outcome: 'ok', durationMs: 9, args: 'command="make"', decision: 'ask', rule: 'rule 2 (process_start ask)', approval: 'approved', by: 'dashboard', values: { command: 'make' } },
        { time: t, tool: 'file_read', session: 'tcp-2', client: 'cursor', transport: 'tcp', level: 'INFO', outcome: 'error', durationMs: 1, args: '', error: 'escapes', decision: 'deny', rule: 'rule 1 (file_read deny)' },
      ],
    });
    expect($$('activity-row')).toHaveLength(3);
    const first = $$('activity-row')[2];
    expect(first.querySelector('[data-testid="activity-client"]')?.textContent?.replace(/\s+/g, ' ').trim()).toBe('claude-code · unix');
    expect(first.querySelector('[data-testid="activity-client"]')?.getAttribute('title')).toBe('session unix-1');
    expect($$('activity-row').map((r) => r.dataset.decision)).toEqual(['denied', 'approved', 'allowed']);
    expect($$('activity-row')[1].querySelector('[data-testid="activity-decision"]')?.textContent).toContain('asked → approved');
    expect($$('activity-row')[1].querySelector('[data-testid="activity-decision"]')?.textContent).toContain('on the dashboard');
    expect($$('activity-row')[0].querySelector('[data-testid="activity-decision"]')?.textContent).toContain('rule 1 (file_read deny)');
    expect(first.querySelector('[data-testid="activity-args"]')?.textContent).toContain('src/Main.go');
    expect(first.querySelector('[data-testid="activity-args"]')?.textContent).not.toContain('"'); // the value, not its JSON
    const setSelect = (id: string, v: string) => {
      const el = $(id) as HTMLSelectElement;
      el.value = v;
      el.dispatchEvent(new Event('change'));
      flushSync();
    };
    const setText = (v: string) => {
      const el = $('activity-filter-text') as HTMLInputElement;
      el.value = v;
      el.dispatchEvent(new Event('input'));
      flushSync();
    };
    setSelect('activity-filter-level', 'SECURITY');
    expect($$('activity-row').map((r) => r.dataset.tool)).toEqual(['process_start']);
    setSelect('activity-filter-level', '');
    setSelect('activity-filter-client', 'cursor');
    setSelect('activity-filter-tool', 'file_read');
    expect($$('activity-row').map((r) => r.dataset.outcome)).toEqual(['error']);
    expect($('activity-count')?.textContent).toBe('1 of 3');
    click('activity-filter-clear');
    expect($$('activity-row')).toHaveLength(3);
    setText('main.go');
    expect($$('activity-row').map((r) => r.dataset.client)).toEqual(['claude-code']);
    setText('DENIED');
    expect($$('activity-row').map((r) => r.dataset.decision)).toEqual(['denied']);
    setText('no such thing');
    expect($('activity-no-match')).not.toBeNull();
  });

  it('logs: the audit trail from the control API, filtered by the hub, live rows on top, details; the hub log live with a level filter', async () => {
    const at = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
    const denied = { time: at(2), tool: 'file_write', session: 'unix-2', client: 'cursor', transport: 'unix', user: 'u', level: 'SECURITY', outcome: 'error', durationMs: 0.4, args: 'path="secret/a"', error: 'file_write: denied by rule 1', decision: 'deny', rule: 'rule 1 (file_write deny)' };
    const read = { time: at(1), tool: 'file_read', session: 'unix-1', client: 'claude-code', transport: 'unix', user: 'u', level: 'INFO', outcome: 'ok', durationMs: 2, args: 'path="a"', decision: 'allow', rule: 'default policy (allow)' };
    const queries: unknown[] = [];
    const { sock } = await start({
      audit: async (q) => {
        queries.push(q);
        if (q.decision === 'ask') return { entries: [], file: '/d/logs/audit.log', files: ['/d/logs/audit.log', '/d/logs/audit-2026.log'] };
        if (q.decision === 'deny') return { entries: [denied], file: '/d/logs/audit.log', files: ['/d/logs/audit.log'] };
        if (q.before === 'k:1') return { entries: [read], file: '/d/logs/audit.log', files: ['/d/logs/audit.log', '/d/logs/audit-2026.log'] };
        return { entries: [denied], next: 'k:1', file: '/d/logs/audit.log', files: ['/d/logs/audit.log', '/d/logs/audit-2026.log'] };
      },
    });
    await openTab('logs');
    expect(window.location.hash).toBe('#logs');
    expect($('audit-loading')).not.toBeNull(); // waits for the feed's snapshot: what it holds is not new
    send(sock, 'snapshot', 'activity', { events: [read, denied] });
    await vi.waitFor(() => expect($$('audit-row')).toHaveLength(1));
    expect(queries).toEqual([{ client: '', tool: '', decision: '', outcome: '', limit: 100, before: '' }]);
    expect($$('audit-row')[0].dataset).toMatchObject({ tool: 'file_write', decision: 'deny', client: 'cursor', live: 'false' });
    expect($('audit-files')?.textContent).toContain('/d/logs/audit.log and 1 rotated file');

    // Older entries: the next page is appended.
    click('audit-more');
    await vi.waitFor(() => expect($$('audit-row').map((r) => r.dataset.tool)).toEqual(['file_write', 'file_read']));
    expect($('audit-end')).not.toBeNull();

    // A call arriving on the activity channel is listed on top, marked live.
    const fresh = { ...read, time: at(30), tool: 'exec', args: 'command="make"' };
    send(sock, 'event', 'activity', fresh);
    expect($$('audit-row').map((r) => `${r.dataset.tool}:${r.dataset.live}`)).toEqual(['exec:true', 'file_write:false', 'file_read:false']);

    // Details of a row: arguments, policy and rule, error.
    $$('audit-row')[1].click();
    flushSync();
    const details = Object.fromEntries($$('audit-detail').map((d) => [d.dataset.key, d.textContent]));
    expect(details).toMatchObject({ arguments: 'path="secret/a"', policy: 'deny by rule 1 (file_write deny)', error: 'file_write: denied by rule 1', client: 'cursor' });

    // The decision filter goes to the hub; live rows follow the same filter.
    const sel = $('audit-filter-decision') as HTMLSelectElement;
    sel.value = 'deny';
    sel.dispatchEvent(new Event('change'));
    flushSync();
    await vi.waitFor(() => expect(queries).toHaveLength(3));
    expect(queries[2]).toMatchObject({ decision: 'deny', before: '' });
    await vi.waitFor(() => expect($$('audit-row').map((r) => r.dataset.tool)).toEqual(['file_write']));
    send(sock, 'event', 'activity', { ...read, time: at(40), tool: 'dir_list' });
    expect($$('audit-row').map((r) => r.dataset.tool)).toEqual(['file_write']);
    send(sock, 'event', 'activity', { ...denied, time: at(41), tool: 'file_delete' });
    expect($$('audit-row').map((r) => r.dataset.tool)).toEqual(['file_delete', 'file_write']);

    // Typing a client asks the hub after a pause, not at every key.
    const input = $('audit-filter-client') as HTMLInputElement;
    input.value = 'cursor';
    input.dispatchEvent(new Event('input'));
    flushSync();
    expect(queries).toHaveLength(3);
    await vi.waitFor(() => expect(queries).toHaveLength(4), { timeout: 2000 });
    expect(queries[3]).toMatchObject({ client: 'cursor', decision: 'deny' });

    // Nothing matches: the empty state says which files were read.
    sel.value = 'ask';
    sel.dispatchEvent(new Event('change'));
    flushSync();
    await vi.waitFor(() => expect($('audit-empty')?.textContent).toContain('matches the filters'));
    expect($('audit-empty')?.textContent).toContain('/d/logs/audit.log or its 1 rotated file');

    // The Hub pane subscribes to the hub log and follows it.
    click('logs-tab-hub');
    expect(window.location.hash).toBe('#logs/hub');
    expect(sock.frames().some((f) => f.type === 'subscribe' && f.channel === 'hublog')).toBe(true);
    send(sock, 'snapshot', 'hublog', {
      records: [
        { seq: 1, time: at(0), level: 'INFO', msg: 'hub started', attrs: [{ key: 'version', value: 'v0.9.0' }] },
        { seq: 2, time: at(1), level: 'INFO', msg: 'listening', attrs: [{ key: 'transport', value: 'unix' }] },
      ],
      file: '/d/logs/hub.log',
    });
    expect($$('hublog-row').map((r) => r.dataset.seq)).toEqual(['2', '1']);
    expect($('hublog-file')?.textContent).toBe('/d/logs/hub.log');
    send(sock, 'event', 'hublog', { seq: 3, time: at(5), level: 'WARN', msg: 'servers: graph exited; restarting', attrs: [{ key: 'err', value: 'exit status 3' }] });
    expect($$('hublog-row').map((r) => r.dataset.level)).toEqual(['WARN', 'INFO', 'INFO']);
    expect($('hublog-attrs')?.textContent).toBe('err="exit status 3"');
    const level = $('hublog-level') as HTMLSelectElement;
    level.value = 'WARN';
    level.dispatchEvent(new Event('change'));
    flushSync();
    expect($$('hublog-row').map((r) => r.dataset.seq)).toEqual(['3']);
    level.value = 'ERROR';
    level.dispatchEvent(new Event('change'));
    flushSync();
    expect($('hublog-empty')?.textContent).toContain('No record matches');

    // Leaving the view unsubscribes from the hub log.
    await openTab('overview');
    expect(sock.frames().some((f) => f.type === 'unsubscribe' && f.channel === 'hublog')).toBe(true);
  });

  it('IDE sessions: chat history with live deltas, plan steps, sending and creating', async () => {
    const { sock, calls } = await start();
    await openTab('sessions');
    expect($('ide-sessions-empty')?.textContent).toContain('[ide] url');
    expect($('ide-sessions-empty')?.textContent).not.toContain('go run');
    send(sock, 'snapshot', 'ide:sessions', { sessions: [{ id: 's1', name: 'refactor', status: 'active', createdAt: new Date().toISOString() }] });
    expect($$('ide-session-row')).toHaveLength(1);
    // The newest session is selected: its chat and plan channels are subscribed.
    expect(sock.frames().map((f) => f.channel)).toEqual(expect.arrayContaining(['chat:s1', 'plan:s1']));
    send(sock, 'snapshot', 'chat:s1', { sessionId: 's1', messages: [{ id: 'm1', role: 'user', content: 'rename foo', timestamp: new Date().toISOString() }] });
    send(sock, 'event', 'chat:s1', { kind: 'delta', messageId: 'm2', content: 'Working' });
    send(sock, 'event', 'chat:s1', { kind: 'delta', messageId: 'm2', content: ' on it' });
    let msgs = $$('chat-message');
    expect(msgs.map((m) => m.dataset.role)).toEqual(['user', 'assistant']);
    expect(msgs[1].dataset.streaming).toBe('true');
    expect(msgs[1].textContent).toContain('Working on it');
    send(sock, 'event', 'chat:s1', { kind: 'message', message: { id: 'm2', role: 'assistant', content: 'Done.', timestamp: new Date().toISOString() } });
    msgs = $$('chat-message');
    expect(msgs[1].dataset.streaming).toBe('false');
    expect(msgs[1].textContent).toContain('Done.');

    send(sock, 'snapshot', 'plan:s1', { sessionId: 's1', status: 'running', steps: [{ name: 'find usages', status: 'done' }, { name: 'edit', status: 'running' }] });
    expect($('plan-status')?.dataset.status).toBe('running');
    expect($$('plan-step').map((s) => s.dataset.status)).toEqual(['done', 'running']);

    const input = $('chat-input') as HTMLTextAreaElement;
    input.value = 'also update the docs';
    input.dispatchEvent(new Event('input'));
    flushSync();
    click('chat-send');
    await vi.waitFor(() => expect(calls).toContainEqual(['sendChat', 's1', 'also update the docs']));
    await vi.waitFor(() => expect((($('chat-input') as HTMLTextAreaElement).value)).toBe(''));

    const name = $('ide-session-create-name') as HTMLInputElement;
    name.value = 'tests';
    name.dispatchEvent(new Event('input'));
    flushSync();
    click('ide-session-create');
    await vi.waitFor(() => expect(calls).toContainEqual(['createIDESession', 'tests']));
  });

  it('MCP session rows come from the sessions channel', async () => {
    const { sock } = await start();
    await openTab('sessions');
    const s = (id: string, calls: number) => ({ id, transport: 'tcp', clientName: 'cursor', clientVersion: '1', peer: '127.0.0.1:5555', connectedAt: new Date().toISOString(), calls });
    send(sock, 'snapshot', 'sessions', { sessions: [s('tcp-1', 0)] });
    send(sock, 'event', 'sessions', { kind: 'connected', session: s('tcp-2', 0) });
    send(sock, 'event', 'sessions', { kind: 'updated', session: s('tcp-1', 7) });
    const rows = $$('session-row');
    expect(rows.map((r) => r.dataset.sessionId)).toEqual(['tcp-1', 'tcp-2']);
    expect(rows[0].querySelector('[data-testid="session-calls"]')?.textContent).toBe('7');
    send(sock, 'event', 'sessions', { kind: 'disconnected', session: s('tcp-1', 7) });
    expect($$('session-row')).toHaveLength(1);
  });

  it('builds: selecting one follows its log live and unsubscribes when another is chosen', async () => {
    const { sock } = await start();
    await openTab('builds');
    expect($('builds-empty')).not.toBeNull();
    const b = (id: string, status: string, startedAt: string) => ({ id, repo: 'core', branch: 'main', status, duration: '', startedAt });
    send(sock, 'snapshot', 'ide:builds', { builds: [b('b1', 'success', '2025-01-01T00:00:00Z'), b('b2', 'running', '2025-01-01T00:01:00Z')] });
    expect($$('build-row').map((r) => r.dataset.buildId)).toEqual(['b2', 'b1']); // newest first
    ($$('build-row')[0] as HTMLElement).click();
    flushSync();
    expect(sock.frames()).toContainEqual({ type: 'subscribe', channel: 'build:b2' });
    expect(window.location.hash).toBe('#builds/b2'); // linkable selection
    send(sock, 'snapshot', 'build:b2', { build: b('b2', 'running', '2025-01-01T00:01:00Z'), lines: ['$ go build ./...'] });
    send(sock, 'event', 'build:b2', { kind: 'log', line: 'ok  pkg 0.1s' });
    expect($('build-log')?.textContent).toBe('$ go build ./...\nok  pkg 0.1s');
    send(sock, 'event', 'ide:builds', { kind: 'build', build: { ...b('b2', 'failed', '2025-01-01T00:01:00Z'), duration: '3s' } });
    expect($$('build-row')[0].dataset.status).toBe('failed');
    expect($$('build-duration')[0].textContent).toBe('3s');
    ($$('build-row')[1] as HTMLElement).click();
    flushSync();
    expect(sock.frames()).toContainEqual({ type: 'unsubscribe', channel: 'build:b2' });
    expect(sock.frames()).toContainEqual({ type: 'subscribe', channel: 'build:b1' });
  });

  it('a tab remembers what was open in it: back from another tab, the same build is selected', async () => {
    const { sock } = await start();
    await openTab('builds');
    const b = (id: string) => ({ id, repo: 'core', branch: 'main', status: 'running', duration: '', startedAt: '2025-01-01T00:00:00Z' });
    send(sock, 'snapshot', 'ide:builds', { builds: [b('b7')] });
    ($$('build-row')[0] as HTMLElement).click();
    flushSync();
    expect(window.location.hash).toBe('#builds/b7');
    await openTab('activity');
    expect(window.location.hash).toBe('#activity');
    await openTab('builds');
    expect(window.location.hash).toBe('#builds/b7');
    expect($('build-detail')?.dataset.buildId).toBe('b7');
  });

  it('reconnects after the hub drops and resubscribes, including the open detail channels', async () => {
    const { sock, rec } = await start();
    await openTab('builds');
    send(sock, 'snapshot', 'ide:builds', { builds: [{ id: 'b1', repo: 'r', branch: 'main', status: 'running', duration: '', startedAt: '2025-01-01T00:00:00Z' }] });
    ($$('build-row')[0] as HTMLElement).click();
    flushSync();
    sock.serverClose();
    flushSync();
    expect($('hub-status')?.dataset.status).toBe('closed');
    await vi.waitFor(() => expect(rec.sockets).toHaveLength(2));
    const again = rec.last;
    again.serverOpen();
    flushSync();
    expect($('hub-status')?.dataset.status).toBe('open');
    expect(again.frames().map((f) => f.channel)).toEqual(expect.arrayContaining(['sessions', 'ide:builds', 'build:b1']));
    // The snapshot after the reconnect is the new truth.
    send(again, 'snapshot', 'ide:builds', { builds: [] });
    expect($('builds-empty')).not.toBeNull();
  });

  it('shows how to get in when bootstrap fails, and retries', async () => {
    let fail = true;
    const rec = new SocketRecorder();
    const { control } = fakeControl({
      bootstrap: async () => {
        if (fail) throw new Error('bootstrap: HTTP 401: token: missing or wrong');
        return BOOT;
      },
    });
    app = mount(App, { target: document.body, props: { control, dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn() } } });
    await vi.waitFor(() => expect($('boot-error')?.textContent).toContain('HTTP 401'));
    expect($('boot-error')?.textContent).toContain('?token=');
    fail = false;
    click('boot-retry');
    await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
    await tick();
    expect($('boot-error')).toBeNull();
  });
  it('approvals: a client on another machine asks to use the hub; Allow grants the toolsets left ticked, read-only when chosen', async () => {
    const { sock, calls } = await start();
    const soon = new Date(Date.now() + 60_000).toISOString();
    const ask = (id: string) => ({ id, kind: 'client', client: 'Claude Code', device: '192.168.1.20', scopes: ['files', 'process', 'web'],
      redirect: 'http://127.0.0.1:33418', requestedAt: new Date().toISOString(), expiresAt: soon });
    send(sock, 'snapshot', 'approvals', { approvals: [ask('c1'), ask('c2')], policy: { path: '/c.toml', default: 'allow', askTimeout: '2m0s', rules: 0, rootsAllow: [], loadedAt: '' } });
    const first = $$('approval')[0];
    expect(first.textContent).toContain('Claude Code on 192.168.1.20 wants to use this hub');
    expect(first.textContent).toContain('http://127.0.0.1:33418');
    const sets = [...first.querySelectorAll('[data-testid="approval-toolset"]')] as HTMLInputElement[];
    expect(sets.map((i) => [i.dataset.toolset, i.checked])).toEqual([['files', true], ['process', true], ['web', true]]);
    // Untick process, tick read-only, allow: files and web, read-only.
    sets[1].click();
    (first.querySelector('[data-testid="approval-readonly"]') as HTMLInputElement).click();
    flushSync();
    (first.querySelector('[data-testid="approval-allow"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['decideApproval', 'c1', 'allow', ['files', 'web', 'readonly']]));
    // Nothing ticked: Allow is off (a grant needs a toolset); Deny sends no scopes.
    const second = $$('approval')[1];
    for (const i of second.querySelectorAll('[data-testid="approval-toolset"]')) (i as HTMLInputElement).click();
    flushSync();
    expect((second.querySelector('[data-testid="approval-allow"]') as HTMLButtonElement).disabled).toBe(true);
    (second.querySelector('[data-testid="approval-deny"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['decideApproval', 'c2', 'deny', []]));
  });
  it('settings: Other machines lists the grants (client, device, toolsets, last use) and the certificate; Revoke ends one', async () => {
    const grant = { id: 'g1', clientId: 'sbc_1', clientName: 'Claude Code', device: '192.168.1.20', scopes: ['files', 'readonly'],
      createdAt: '2026-11-01T10:00:00Z', lastUsed: new Date(Date.now() - 5_000).toISOString() };
    const { calls } = await start({
      grants: async () => ({ enabled: true, grants: [grant], fingerprint: 'AB:CD:EF', tls: true, selfSigned: true, certFile: '/d/tls/cert.pem' }),
      revokeGrant: async (id: string) => {
        calls.push(['revokeGrant', id]);
        return { enabled: true, grants: [], fingerprint: 'AB:CD:EF', tls: true, selfSigned: true };
      },
    });
    await openTab('settings');
    await vi.waitFor(() => expect($$('grant')).toHaveLength(1));
    const row = $('grant')!;
    expect(row.textContent).toContain('Claude Code');
    expect(row.textContent).toContain('192.168.1.20');
    expect($('grant-id')?.textContent).toBe('g1'); // as the Sessions view names its client
    expect($('grant-scopes')?.textContent).toBe('files (read-only)');
    expect(row.textContent).toMatch(/\ds ago/);
    expect($('grants-fingerprint')?.textContent).toContain('AB:CD:EF');
    expect($('grants-fingerprint')?.textContent).toMatch(/made its own certificate\s+\(served now\)/);
    expect($('grants-pin')?.textContent).toContain('tls_fingerprint = "sha256:AB:CD:EF');
    click('grant-revoke');
    await vi.waitFor(() => expect(calls).toContainEqual(['revokeGrant', 'g1']));
    await vi.waitFor(() => expect($('grants-empty')).not.toBeNull());
    expect($$('grant')).toHaveLength(0);
  });
  it('settings: Other machines says how to turn OAuth on when it is off', async () => {
    await start();
    await openTab('settings');
    await vi.waitFor(() => expect($('grants-off')?.textContent).toContain('[http] auth = "oauth"'));
  });
  it('approvals: a panel with a count above every view; Allow answers through the control API', async () => {
    const { sock, calls } = await start();
    const soon = new Date(Date.now() + 60_000).toISOString();
    send(sock, 'snapshot', 'approvals', {
      approvals: [{ id: 'a1', kind: 'call', tool: 'file_delete', arguments: 'path: notes.txt', client: 'claude-code', workspace: '/home/u/proj', rule: 'rule 1', requestedAt: new Date().toISOString(), expiresAt: soon }],
      policy: { path: '/c.toml', default: 'allow', askTimeout: '2m0s', rules: 1, rootsAllow: [], loadedAt: '' },
    });
    expect($('approvals-count')?.textContent).toBe('1');
    expect($('approvals-waiting')?.textContent?.trim()).toBe('1 waiting');
    expect($('approval-args')?.textContent).toBe('path: notes.txt');
    expect($('approval')?.textContent).toContain('claude-code wants to run file_delete');
    for (const t of ['sessions', 'processes', 'activity']) {
      await openTab(t);
      expect($('approvals-panel')).not.toBeNull();
    }
    send(sock, 'event', 'approvals', { kind: 'added', approval: { id: 'a2', kind: 'root', root: '/srv/other', client: 'cursor', requestedAt: '', expiresAt: soon } });
    expect($('approvals-count')?.textContent).toBe('2');
    expect($$('approval')[1].textContent).toContain('cursor wants to use /srv/other as its workspace');
    ($$('approval-allow')[0] as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['decideApproval', 'a1', 'allow', []]));
    ($$('approval-deny')[1] as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['decideApproval', 'a2', 'deny', []]));
    send(sock, 'event', 'approvals', { kind: 'resolved', approval: { id: 'a1' }, outcome: { approved: true, by: 'dashboard' } });
    send(sock, 'event', 'approvals', { kind: 'resolved', approval: { id: 'a2' }, outcome: { approved: false, by: 'dashboard' } });
    expect($('approvals-panel')).toBeNull();
    expect($('approvals-waiting')).toBeNull();
    send(sock, 'event', 'approvals', { kind: 'policy', policy: { path: '/c.toml', default: 'allow', askTimeout: '2m0s', rules: 1, rootsAllow: [], loadedAt: '', error: 'policy.rules[1].action: "nope" is not an action' } });
    expect($('policy-error')?.textContent).toContain('policy.rules[1].action');
  });

  it('sessions show each client\'s workspace, roots and relay directory, with Grant and Revoke', async () => {
    const { sock, calls } = await start();
    await openTab('sessions');
    send(sock, 'snapshot', 'sessions', {
      sessions: [
        { id: 'stdio-1', transport: 'stdio', clientName: 'node-client', clientVersion: '1', peer: '', connectedAt: '', calls: 0,
          workspace: '/w/a', workspaceFrom: 'root',
          roots: [{ uri: 'file:///w/a', dir: '/w/a', status: 'granted', detail: 'inside [roots] allow /w' }, { uri: 'file:///x', dir: '/x', status: 'declined', detail: 'declined by dashboard' }] },
        { id: 'unix-2', transport: 'unix', clientName: 'codex', clientVersion: '1', peer: '', connectedAt: '', calls: 0,
          workspace: '/home/u/proj', workspaceFrom: 'hub',
          relay: { uri: 'file:///home/u', dir: '/home/u', status: 'pending', detail: 'your home directory itself' } },
      ],
    });
    const ws = $$('session-workspace');
    expect(ws.map((w) => w.dataset.from)).toEqual(['root', 'hub']);
    expect(ws[0].querySelector('[data-testid="session-workspace-dir"]')?.textContent).toBe('/w/a');
    expect(ws[0].querySelector('[data-testid="session-workspace-from"]')?.textContent).toBe('MCP root');
    expect(ws[1].querySelector('[data-testid="session-workspace-from"]')?.textContent).toBe('hub workspace');
    const roots = $$('session-root');
    expect(roots.map((r) => r.dataset.status)).toEqual(['granted', 'declined']);
    expect(roots[0].textContent).toContain('/w/a');
    expect(roots[0].textContent).toContain('workspace');
    expect(roots[0].textContent).toContain('inside [roots] allow /w');
    expect(roots[0].querySelector('[data-testid="workspace-revoke"]')).not.toBeNull();
    expect(roots[1].querySelector('[data-testid="workspace-grant"]')).not.toBeNull();
    const relay = $$('session-relay');
    expect(relay).toHaveLength(1);
    expect(relay[0].textContent).toContain('your home directory itself');

    (roots[1].querySelector('[data-testid="workspace-grant"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['grantWorkspace', 'stdio-1', '/x', true]));
    (roots[0].querySelector('[data-testid="workspace-revoke"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['grantWorkspace', 'stdio-1', '/w/a', false]));
    (relay[0].querySelector('[data-testid="workspace-grant"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['grantWorkspace', 'unix-2', '/home/u', true]));

    // The new status arrives on the sessions channel.
    send(sock, 'event', 'sessions', { kind: 'updated', session: { id: 'unix-2', transport: 'unix', clientName: 'codex', clientVersion: '1', peer: '', connectedAt: '', calls: 0,
      workspace: '/home/u', workspaceFrom: 'relay', relay: { uri: 'file:///home/u', dir: '/home/u', status: 'approved', detail: 'granted on the dashboard' } } });
    const after = $$('session-relay')[0];
    expect(after.dataset.status).toBe('approved');
    expect(after.querySelector('[data-testid="workspace-revoke"]')).not.toBeNull();
    expect($$('session-workspace')[1].querySelector('[data-testid="session-workspace-from"]')?.textContent).toBe('connect directory');
  });

  it('a failed grant shows its error as a notice', async () => {
    const { sock } = await start({ grantWorkspace: async () => { throw new Error('grant /x: HTTP 400: dir: /x is not a root or the relay directory of session stdio-1'); } });
    await openTab('sessions');
    send(sock, 'snapshot', 'sessions', {
      sessions: [{ id: 'stdio-1', transport: 'stdio', clientName: 'c', clientVersion: '1', peer: '', connectedAt: '', calls: 0,
        workspace: '/x', workspaceFrom: 'root', roots: [{ uri: 'file:///x', dir: '/x', status: 'pending', detail: '/x is outside your home directory' }] }],
    });
    ($('workspace-grant') as HTMLButtonElement).click();
    await vi.waitFor(() => expect($('control-error')?.textContent).toContain('dir: /x is not a root'));
  });

  it('clients: lists each client per scope; Connect previews the diff and writes only after confirming', async () => {
    let connected = false;
    const listFor = () => ({
      project: '/home/u/proj',
      clients: [
        {
          name: 'cursor', display: 'Cursor', format: 'JSON', installed: true,
          scopes: [
            { scope: 'user', path: '/home/u/.cursor/mcp.json', exists: true, state: connected ? 'connected to this hub' : 'not set up' },
            { scope: 'project', path: '/home/u/proj/.cursor/mcp.json', exists: false, state: 'not set up' },
          ],
        },
        { name: 'codex', display: 'Codex', format: 'TOML', installed: false, scopes: [{ scope: 'user', path: '/home/u/.codex/config.toml', exists: false, state: 'not installed' }] },
      ],
    });
    const diff = '--- /home/u/.cursor/mcp.json\n+++ /home/u/.cursor/mcp.json\n@@ -1,2 +1,7 @@\n {\n+  "mcpServers": {\n+    "switchboard": {}\n+  }\n }\n';
    const calls: unknown[][] = [];
    await start({
      listClients: async () => {
        calls.push(['listClients']);
        return listFor();
      },
      previewClient: async (name, scope, action) => {
        calls.push(['previewClient', name, scope, action]);
        return { client: name, display: 'Cursor', scope, action, path: '/home/u/.cursor/mcp.json', diff, changed: true, applied: false, state: 'not set up', message: 'Write /home/u/.cursor/mcp.json?' };
      },
      applyClient: async (name, scope, action) => {
        calls.push(['applyClient', name, scope, action]);
        connected = true;
        const backup = '/home/u/.cursor/mcp.json.switchboard-backup-20260101-120000';
        return { client: name, display: 'Cursor', scope, action, path: '/home/u/.cursor/mcp.json', diff, changed: true, applied: true, backup, state: 'connected to this hub', message: `Wrote /home/u/.cursor/mcp.json (the previous version is in ${backup}).` };
      },
    });
    await openTab('clients');
    await vi.waitFor(() => expect($$('client-row')).toHaveLength(3));
    const row = (client: string, scope: string) => document.querySelector(`[data-testid="client-row"][data-client="${client}"][data-scope="${scope}"]`) as HTMLElement;
    expect(row('cursor', 'user').querySelector('[data-testid="client-path"]')?.textContent).toBe('/home/u/.cursor/mcp.json');
    expect(row('cursor', 'user').querySelector('[data-testid="client-state"]')?.textContent).toBe('not set up');
    expect(row('cursor', 'user').querySelector('[data-testid="client-installed"]')?.textContent).toBe('installed');
    expect(row('codex', 'user').querySelector('[data-testid="client-installed"]')?.textContent).toBe('not found');
    expect(row('codex', 'user').dataset.state).toBe('not installed');
    expect($('clients-project')?.textContent).toBe('/home/u/proj');

    (row('cursor', 'user').querySelector('[data-testid="client-connect"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect($('client-preview')).not.toBeNull());
    expect($('client-diff')?.textContent).toContain('+    "switchboard": {}');
    expect($('client-diff')?.querySelectorAll('.add')).toHaveLength(3);
    expect(calls.filter((c) => c[0] === 'applyClient')).toEqual([]); // nothing written before confirming

    // Cancel closes the preview without writing.
    click('client-cancel');
    expect($('client-preview')).toBeNull();
    (row('cursor', 'user').querySelector('[data-testid="client-connect"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect($('client-confirm')).not.toBeNull());
    click('client-confirm');
    await vi.waitFor(() => expect($('client-backup')?.textContent).toBe('/home/u/.cursor/mcp.json.switchboard-backup-20260101-120000'));
    expect($('client-result-state')?.textContent).toBe('connected to this hub');
    expect($('client-preview')).toBeNull();
    await vi.waitFor(() => expect(row('cursor', 'user').dataset.state).toBe('connected to this hub'));
    expect(row('cursor', 'user').querySelector('[data-testid="client-connect"]')).toBeNull();
    expect(row('cursor', 'user').querySelector('[data-testid="client-disconnect"]')).not.toBeNull();
    expect(calls).toEqual([
      ['listClients'],
      ['previewClient', 'cursor', 'user', 'connect'],
      ['previewClient', 'cursor', 'user', 'connect'],
      ['applyClient', 'cursor', 'user', 'connect'],
      ['listClients'],
    ]);
    expect($('clients-connected')?.textContent).toBe('1 connected');
  });

  it("clients: the tray's #clients (a hash set on the running page) opens the view, which copies the entry for any other client", async () => {
    const { calls } = await start();
    expect($('clients')).toBeNull();
    window.location.hash = '#clients'; // what the desktop's "Connect clients…" tray item does
    await vi.waitFor(() => expect($('clients')).not.toBeNull());
    await vi.waitFor(() => expect($('client-config-unix')?.textContent).toContain('"connect"'));
    expect(calls.filter((c) => c[0] === 'clientConfig')).toHaveLength(1);
    const writeText = vi.fn(async (_: string) => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    try {
      click('client-config-copy-unix');
      await vi.waitFor(() => expect($('client-config-copy-unix')?.textContent).toBe('copied'));
      expect(JSON.parse(writeText.mock.calls[0][0])).toEqual({ mcpServers: { switchboard: { command: 'switchboard', args: ['connect'] } } });
    } finally {
      Reflect.deleteProperty(navigator, 'clipboard');
    }
  });

  it('clients: a file that does not parse shows its line as a notice, and no preview', async () => {
    await start({
      listClients: async () => ({
        project: '/w',
        clients: [{ name: 'windsurf', display: 'Windsurf', format: 'JSON', installed: true, scopes: [{ scope: 'user', path: '/h/w.json', exists: true, state: 'cannot read the config', detail: '/h/w.json: line 3: a comment' }] }],
      }),
      previewClient: async () => {
        throw new Error("preview connect windsurf (user): HTTP 400: /h/w.json: line 3: a comment, which this client's JSON parser does not accept; remove it and run this again");
      },
    });
    await openTab('clients');
    await vi.waitFor(() => expect($('client-state')?.textContent).toBe('cannot read the config'));
    expect($('client-detail')?.textContent).toContain('line 3: a comment');
    click('client-connect');
    await vi.waitFor(() => expect($('control-error')?.textContent).toContain('line 3: a comment, which this client'));
    expect($('client-preview')).toBeNull();
  });
  it('servers: live from the hub; quarantined approval lists the tools and flags; a held tool shows its diff; enable, remove, log', async () => {
    const tools = (state: string, desc = 'Greets someone by name.') => [
      { name: 'greet', exposed: 'fixture__greet', state, description: desc, read_only: true, flags: [] as string[] },
      { name: 'write-note', exposed: 'fixture__write-note', state: state === 'changed' ? 'approved' : state, description: 'Pretends to write a note.', read_only: false,
        flags: ['instruction tag: <IMPORTANT> (description:12)'] },
    ];
    const base = {
      name: 'fixture', transport: 'stdio', command: 'node /srv/upstream-fixture.mjs', enabled: true, start: 'eager', state: 'running',
      pid: 4321, since: new Date(Date.now() - 5000).toISOString(), restarts: 1, server_info: 'upstream-fixture 1.0.0',
      last_error: 'exit status 3', last_error_at: '2026-01-01T10:00:00Z',
      resources: 2, resource_templates: 0, prompts: 1, held: 0, flagged: 1, in_flight: 0, calls: 7,
      command_approved: true, command_hash: 'h1', env: [], sandbox: { mode: 'confined', detail: 'Landlock ABI 6', read: [], write: [] },
    };
    const quarantined = { ...base, approved: false, tools: tools('quarantined') };
    const approved = { ...base, approved: true, tools: tools('approved') };
    const diff = '--- pinned\n+++ offered\n@@ -1,3 +1,3 @@\n {\n-  "description": "Greets someone by name.",\n+  "description": "Greets warmly.",\n';
    const changed = { ...base, approved: true, held: 1, tools: [{ ...tools('changed', 'Greets warmly.')[0], diff }, tools('approved')[1]] };
    const calls: unknown[][] = [];
    let logPolls = 0;
    const { sock } = await start({
      listServers: async () => {
        calls.push(['listServers']);
        return { configPath: '/home/u/.config/switchboard/config.toml', servers: [] };
      },
      approveServer: async (name, t) => {
        calls.push(['approveServer', name, t]);
        return (t.length ? approved : approved) as never;
      },
      setServerEnabled: async (name, enabled) => {
        calls.push(['setServerEnabled', name, enabled]);
        return { path: '/c', diff: '', servers: [{ ...approved, enabled, state: enabled ? 'running' : 'disabled' }] } as never;
      },
      removeServer: async (name) => {
        calls.push(['removeServer', name]);
        return { path: '/home/u/.config/switchboard/config.toml', diff: '-[[servers]]\n-name = "fixture"\n', servers: [] };
      },
      serverLogs: async (name) => {
        logPolls++;
        return { name, lines: [{ time: '2026-01-01T10:00:00.000Z', stream: 'hub', text: 'started node /srv/upstream-fixture.mjs (pid 4321)' }, { time: '2026-01-01T10:00:00.100Z', stream: 'stderr', text: 'fixture starting (mode=normal, pid 4321)' }] };
      },
    });
    await openTab('servers');
    await vi.waitFor(() => expect($('servers-empty')?.textContent).toContain('switchboard servers import'));
    expect($('servers-config-path')?.textContent).toBe('/home/u/.config/switchboard/config.toml');

    send(sock, 'snapshot', 'servers', { servers: [quarantined] });
    const row = () => document.querySelector('[data-testid="server-row"][data-name="fixture"]') as HTMLElement;
    expect(row().dataset.approved).toBe('false');
    const inRow = (id: string) => row().querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
    expect(inRow('server-state')?.textContent).toBe('running');
    expect(inRow('server-approval')?.textContent).toBe('quarantined');
    expect(inRow('server-uptime')?.textContent).toMatch(/^\d+s$/);
    expect(inRow('server-restarts')?.textContent).toBe('1');
    expect(inRow('server-pid')?.textContent).toBe('4321');
    expect(inRow('server-command')?.textContent).toBe('node /srv/upstream-fixture.mjs');
    expect(inRow('server-tools-count')?.textContent).toBe('2 tools');
    expect(inRow('server-resources')?.textContent).toBe('2 resources');
    expect(inRow('server-prompts')?.textContent).toBe('1 prompt');
    expect(inRow('server-info')?.textContent).toBe('upstream-fixture 1.0.0');
    expect(inRow('server-last-error')?.textContent).toContain('exit status 3');
    expect([...row().querySelectorAll<HTMLElement>('[data-testid="server-tool-exposed"]')].map((e) => e.textContent)).toEqual(['fixture__greet', 'fixture__write-note']);
    expect(row().querySelectorAll('[data-testid="server-tool-readonly"]')).toHaveLength(1);
    expect($('server-tool-flag')?.textContent).toContain('instruction tag: <IMPORTANT>');
    expect($('tab-servers')?.textContent).toContain('1'); // one running

    // Approve: the panel lists what it pins, flags as warnings; nothing happens before confirming.
    click('server-approve');
    expect($$('server-approve-tool').map((e) => [e.dataset.tool, e.dataset.flagged])).toEqual([
      ['greet', 'false'],
      ['write-note', 'true'],
    ]);
    expect($('server-approve-warning')?.textContent).toContain('1 tool looks like it carries hidden instructions');
    expect($('server-approve-flag')?.textContent).toContain('<IMPORTANT>');
    expect($('server-approve-confirm')?.textContent).toBe('Approve and pin 2 tools');
    expect(calls.filter((c) => c[0] === 'approveServer')).toEqual([]);
    click('server-approve-confirm');
    await vi.waitFor(() => expect(row().dataset.approved).toBe('true'));
    expect($('server-approve-panel')).toBeNull();
    expect(inRow('server-approve')).toBeNull();

    // A changed tool is held with its diff; Approve pins just that tool.
    send(sock, 'event', 'servers', { servers: [changed] });
    expect(row().dataset.held).toBe('1');
    expect(inRow('server-held')?.textContent).toBe('1 held');
    expect(inRow('server-held')?.classList.contains('held-count')).toBe(true);
    const diffEl = $('server-tool-diff')!;
    expect(diffEl.textContent).toContain('+  "description": "Greets warmly.",');
    expect(diffEl.querySelectorAll('.add')).toHaveLength(1);
    expect(diffEl.querySelectorAll('.del')).toHaveLength(1);
    click('server-tool-approve');
    await vi.waitFor(() => expect(row().dataset.held).toBe('0'));

    // The overview's line links to the tab.
    send(sock, 'event', 'servers', { servers: [{ ...approved, name: 'other', approved: false }, approved] });
    click('tab-overview');
    await viewShown('overview');
    expect($('overview-servers-summary')?.textContent).toBe('2 running, 1 waiting for approval');
    expect($('overview-servers-link')?.getAttribute('href')).toBe('#servers');
    send(sock, 'event', 'servers', { servers: [approved] });
    await openTab('servers');

    // Log: loaded at once, then polled while open.
    click('server-log-toggle');
    await vi.waitFor(() => expect($$('server-log-line').map((e) => e.dataset.stream)).toEqual(['hub', 'stderr']));
    expect($('server-log')?.textContent).toContain('fixture starting');
    const polls = logPolls;
    click('server-log-toggle');
    expect($('server-log')).toBeNull();

    click('server-disable');
    await vi.waitFor(() => expect(row().dataset.state).toBe('disabled'));
    expect(inRow('server-enable')).not.toBeNull();

    // Remove asks first; the config file's diff is shown after.
    click('server-remove');
    expect($('server-remove-panel')?.textContent).toContain('Remove fixture?');
    expect(calls.filter((c) => c[0] === 'removeServer')).toEqual([]);
    click('server-remove-confirm');
    await vi.waitFor(() => expect($('servers-empty')).not.toBeNull());
    expect($('server-change-diff')?.querySelectorAll('.del')).toHaveLength(2);
    expect(calls.filter((c) => c[0] !== 'listServers')).toEqual([
      ['approveServer', 'fixture', []],
      ['approveServer', 'fixture', ['greet']],
      ['setServerEnabled', 'fixture', false],
      ['removeServer', 'fixture'],
    ]);
    expect(logPolls).toBe(polls); // no polling once the log is closed
  });

  it('servers: a command not approved comes first with what would run; one panel approves the command, then the tools; a changed command is refused and shown', async () => {
    const sandbox = { mode: 'confined', detail: 'confined with Landlock when it starts', read: [], write: [] };
    const base = {
      transport: 'stdio', enabled: true, start: 'eager', restarts: 0, resources: 0, resource_templates: 0, prompts: 0,
      held: 0, flagged: 0, in_flight: 0, calls: 0, env: [] as string[], sandbox,
    };
    const calm = { ...base, name: 'calm', command: 'node calm.mjs', state: 'running', command_approved: true, command_hash: 'hc', approved: true, pid: 11, tools: [] };
    const bare = { ...base, name: 'bare', command: 'npx bare-server', state: 'running', command_approved: true, command_hash: 'hb', approved: true,
      sandbox: { mode: 'off', detail: 'sandbox = "off" in the config: the server can reach everything you can', read: [], write: [] }, tools: [] };
    const remote = { ...base, name: 'gh', transport: 'http', command: 'https://api.example.com/mcp', state: 'running', command_approved: true, command_hash: 'hr',
      approved: true, env: ['header Authorization'], sandbox: { mode: 'remote', detail: 'a remote server: nothing runs on this machine', read: [], write: [] }, tools: [] };
    const unapproved = { ...base, name: 'hand', command: 'node /srv/hand.mjs --x', cwd: '/srv', env: ['API_KEY', 'MEMORY_FILE_PATH'], state: 'unapproved',
      command_approved: false, command_hash: 'h1', approved: false, tools: [] };
    const edited = { ...unapproved, command: 'node /srv/hand.mjs --evil', command_hash: 'h2' };
    const starting = { ...edited, state: 'starting', command_approved: true, pid: 99 };
    const tool = { name: 'greet', exposed: 'hand__greet', state: 'quarantined', description: 'Greets.', read_only: true, flags: [] as string[] };
    const running = { ...starting, state: 'running', tools: [tool] };
    const calls: unknown[][] = [];
    let pinned = false;
    const { sock } = await start({
      listServers: async () => {
        calls.push(['listServers']);
        return { configPath: '/c/config.toml', servers: [] };
      },
      approveServerCommand: async (name, hash) => {
        calls.push(['approveServerCommand', name, hash]);
        if (hash !== 'h2') throw new Error(`approve the command of ${name}: HTTP 400: server "${name}": its command changed since it was shown (now: node /srv/hand.mjs --evil); review it again before approving`);
        return { ...starting, approved: pinned } as never;
      },
      approveServer: async (name, t) => {
        calls.push(['approveServer', name, t]);
        pinned = true;
        return { ...running, approved: true, tools: [{ ...tool, state: 'approved' }] } as never;
      },
    });
    await openTab('servers');
    expect($('servers-intro')?.textContent).toContain('two approvals');
    send(sock, 'snapshot', 'servers', { servers: [calm, bare, remote, unapproved] });
    const rows = () => $$('server-row');
    // What needs the user first, then the config order.
    expect(rows().map((r) => r.dataset.name)).toEqual(['hand', 'calm', 'bare', 'gh']);
    const row = () => document.querySelector('[data-testid="server-row"][data-name="hand"]') as HTMLElement;
    const inRow = (id: string) => row().querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
    expect(row().classList.contains('attention')).toBe(true);
    expect(row().dataset.commandApproved).toBe('false');
    expect(inRow('server-approval')?.textContent).toBe('command not approved');
    expect(inRow('server-approval')?.dataset.approved).toBe('false');
    expect(inRow('server-command-state')?.dataset.approved).toBe('false');
    expect(inRow('server-command')?.textContent).toBe('node /srv/hand.mjs --x');
    expect(inRow('server-cwd')?.textContent).toBe('/srv');
    expect(inRow('server-env')?.textContent).toBe('API_KEY, MEMORY_FILE_PATH');
    expect(inRow('server-sandbox')?.dataset.mode).toBe('confined');
    expect(inRow('server-sandbox')?.title).toBe('confined with Landlock when it starts');
    expect(inRow('server-pid')).toBeNull();
    expect(inRow('server-no-tools')?.textContent).toContain('approve its command');
    // Sandbox: off warns with the reason; remote shows nothing alarming.
    const rowOf = (n: string) => document.querySelector(`[data-testid="server-row"][data-name="${n}"]`) as HTMLElement;
    expect(rowOf('bare').querySelector<HTMLElement>('[data-testid="server-sandbox-warning"]')?.title).toContain('everything you can');
    expect(rowOf('bare').querySelector('[data-testid="server-sandbox-warning"]')?.textContent).toBe('not sandboxed');
    expect(rowOf('gh').querySelector('[data-testid="server-sandbox-warning"]')).toBeNull();
    expect(rowOf('gh').querySelector('[data-testid="server-headers"]')?.textContent).toBe('Authorization');
    expect(rowOf('calm').querySelector('[data-testid="server-sandbox-warning"]')).toBeNull();
    expect(rowOf('calm').classList.contains('attention')).toBe(false);

    // Approve…: the command first, with everything about what runs.
    (inRow('server-approve') as HTMLElement).click();
    flushSync();
    const panel = () => $('server-approve-panel')!;
    expect(panel().dataset.step).toBe('command');
    expect($('server-approve-command-line')?.textContent).toBe('node /srv/hand.mjs --x');
    expect($('server-approve-cwd')?.textContent).toBe('/srv');
    expect($('server-approve-env')?.textContent).toContain('API_KEY, MEMORY_FILE_PATH');
    expect($('server-approve-sandbox')?.dataset.mode).toBe('confined');
    expect($('server-approve-command')?.textContent).toBe('Approve command and start');
    expect($('server-approve-confirm')).toBeNull();
    expect(calls.filter((c) => c[0] === 'approveServerCommand')).toEqual([]);

    // The config changed meanwhile: refused, the error and the new command shown; nothing else moves.
    click('server-approve-command');
    await vi.waitFor(() => expect($('server-approve-command-error')?.textContent).toContain('its command changed since it was shown'));
    expect($('server-approve-command-changed')).not.toBeNull();
    expect($('control-error')).toBeNull();
    send(sock, 'event', 'servers', { servers: [calm, bare, remote, edited] });
    expect(panel().dataset.step).toBe('command');
    expect($('server-approve-command-line')?.textContent).toBe('node /srv/hand.mjs --evil');

    // Approved as now shown: the same panel waits for its tools, then offers to pin them.
    click('server-approve-command');
    await vi.waitFor(() => expect(panel().dataset.step).toBe('tools'));
    expect($('server-approve-starting')).not.toBeNull();
    expect(($('server-approve-confirm') as HTMLButtonElement).disabled).toBe(true);
    expect(inRow('server-approval')?.textContent).toBe('quarantined');
    // Down before listing its tools (a secret it cannot resolve): said why, nothing to pin yet.
    send(sock, 'event', 'servers', { servers: [calm, bare, remote, { ...starting, state: 'backoff', last_error: 'env: API_KEY: ${secret:key}: no keyring' }] });
    expect($('server-approve-down')?.textContent).toContain('no keyring');
    expect(($('server-approve-confirm') as HTMLButtonElement).disabled).toBe(true);
    send(sock, 'event', 'servers', { servers: [calm, bare, remote, running] });
    expect($('server-approve-down')).toBeNull();
    expect($$('server-approve-tool').map((e) => e.dataset.tool)).toEqual(['greet']);
    expect(($('server-approve-confirm') as HTMLButtonElement).disabled).toBe(false);
    expect($('server-approve-confirm')?.textContent).toBe('Approve and pin 1 tool');
    click('server-approve-confirm');
    await vi.waitFor(() => expect(row().dataset.approved).toBe('true'));
    expect($('server-approve-panel')).toBeNull();
    expect(calls.filter((c) => c[0] !== 'listServers')).toEqual([
      ['approveServerCommand', 'hand', 'h1'],
      ['approveServerCommand', 'hand', 'h2'],
      ['approveServer', 'hand', []],
    ]);
    expect(rows().map((r) => r.dataset.name)).toEqual(['calm', 'bare', 'gh', 'hand']); // nothing waits now

    // Tools pinned before, command edited since: the panel approves the command and is done.
    send(sock, 'event', 'servers', { servers: [{ ...running, approved: true, state: 'unapproved', command_approved: false, command_hash: 'h2', tools: [] }] });
    expect(inRow('server-approval')?.textContent).toBe('command not approved');
    (inRow('server-approve') as HTMLElement).click();
    flushSync();
    expect($$('server-approve-steps')[0].textContent).not.toContain('Tools');
    click('server-approve-command');
    await vi.waitFor(() => expect($('server-approve-panel')).toBeNull());
    expect(row().dataset.commandApproved).toBe('true');
  });

  it('servers: the add form sends the spec and shows the hub’s error next to the field it names', async () => {
    const added: unknown[] = [];
    await start({
      addServer: async (spec) => {
        added.push(spec);
        if (!spec.command) throw new Error(`add server ${spec.name}: HTTP 400: servers: "${spec.name}": command: required for a stdio server (or set url for a remote one)`);
        return { path: '/c/config.toml', diff: '+[[servers]]\n+name = "fixture"\n', servers: [] };
      },
    });
    await openTab('servers');
    click('servers-add-toggle');
    const type = (id: string, v: string) => {
      const el = $(id) as HTMLInputElement | HTMLTextAreaElement;
      el.value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      flushSync();
    };
    expect($('server-form-note')?.textContent).toContain('Adding approves the command shown here');
    type('server-form-name', 'fixture');
    click('server-form-submit');
    await vi.waitFor(() => expect($('server-form-error')?.dataset.field).toBe('command'));
    expect($('server-form-error')?.textContent).toBe('servers: "fixture": command: required for a stdio server (or set url for a remote one)');
    // Next to the command input.
    expect($('server-form-error')?.previousElementSibling?.querySelector('[data-testid="server-form-command"]')).not.toBeNull();
    // A malformed env line is caught before sending.
    type('server-form-command', 'node');
    type('server-form-env', 'oops');
    click('server-form-submit');
    await vi.waitFor(() => expect($('server-form-error')?.dataset.field).toBe('env'));
    expect(added).toHaveLength(1);
    type('server-form-args', '/srv/fixture.mjs\n--verbose');
    type('server-form-env', 'FIXTURE_DESC_FILE=/tmp/desc.txt');
    click('server-form-submit');
    await vi.waitFor(() => expect($('server-change')).not.toBeNull());
    expect(added[1]).toEqual({ name: 'fixture', command: 'node', args: ['/srv/fixture.mjs', '--verbose'], env: { FIXTURE_DESC_FILE: '/tmp/desc.txt' } });
    expect($('server-add-form')).toBeNull();
    expect($('server-change-path')?.textContent).toBe('/c/config.toml');
  });

  it('settings: sections from the file, rules reordered and tested, per-field errors, saved with the diff', async () => {
    const calls: unknown[][] = [];
    const changed = (applies: string, diff: string) => ({ path: SETTINGS.path, diff, applies, note: applies === 'now' ? 'In force now.' : 'restart', settings: SETTINGS });
    let policyTries = 0;
    const { calls: controlCalls } = await start({
      saveTransports: async (t) => {
        calls.push(['saveTransports', t]);
        return changed('now', '--- a\n+++ b\n@@ -1 +1 @@\n-enabled = false\n+enabled = true\n');
      },
      saveToolsets: async (t) => {
        calls.push(['saveToolsets', t]);
        return changed('now', '+toolsets = ["files"]\n');
      },
      savePolicy: async (p) => {
        calls.push(['savePolicy', p]);
        if (policyTries++ === 0) throw new Error('save policy: HTTP 400: policy.rules[3].tool: pattern "exec[" has an unclosed [\nroots.allow[1]: "src" is relative');
        return changed('now', '+[[policy.rules]]\n');
      },
      testPolicy: async (t) => {
        calls.push(['testPolicy', t]);
        return { decision: 'deny', rule: 'rule 1 (tool="exec" args.command="rm*" → deny)', ruleIndex: 1 };
      },
      saveRAG: async (r) => {
        calls.push(['saveRAG', r]);
        return changed('now', '+backend = "qdrant"\n');
      },
    });
    window.location.hash = '';
    await import('./views/Settings.svelte'); // compiled before the tab waits for it (the first transform can take over a second)
    await openTab('settings');
    await vi.waitFor(() => expect($('settings-path')?.textContent).toBe(SETTINGS.path));
    const inSection = (sec: string, id: string) => document.querySelector(`[data-testid="settings-section"][data-section="${sec}"] [data-testid="${id}"]`) as HTMLElement;
    const type = (el: HTMLElement, v: string) => {
      (el as HTMLInputElement).value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      flushSync();
    };
    expect($('settings-override')?.dataset.env).toBe('MCP_ADDR');
    expect($('settings-pending')?.dataset.section).toBe('rag');
    expect($$('settings-transport').map((e) => [e.dataset.name, e.dataset.running])).toEqual([
      ['unix', 'true'],
      ['tcp', 'false'],
      ['http', 'false'],
    ]);
    expect($$('settings-toolset-check').map((e) => (e as HTMLInputElement).checked)).toEqual([true, true, false]); // the default set

    // Transports: TCP on, a new port; saved with the diff shown.
    const tcp = document.querySelector('[data-testid="settings-transport"][data-name="tcp"]') as HTMLElement;
    (tcp.querySelector('[data-testid="settings-transport-enabled"]') as HTMLInputElement).click();
    type(tcp.querySelector('[data-testid="settings-transport-addr"]') as HTMLElement, '127.0.0.1:9200');
    // The review first: the diff each changed section would write, nothing saved yet, the focus on it.
    expect($('settings-save-bar')?.dataset.changed).toBe('transports');
    click('settings-review-open');
    await vi.waitFor(() => expect($$('settings-review-section').map((e) => e.dataset.section)).toEqual(['transports']));
    expect($('settings-review-diff')?.textContent).toContain('+transports');
    expect(document.activeElement).toBe($('settings-review'));
    expect(calls.filter((c) => c[0] === 'saveTransports')).toHaveLength(0);
    expect(controlCalls.filter((c) => c[0] === 'previewSettings').at(-1)?.[1]).toEqual({
      transports: [
        { name: 'unix', enabled: true, addr: '/run/sb/mcp.sock' },
        { name: 'tcp', enabled: true, addr: '127.0.0.1:9200' },
        { name: 'http', enabled: false, addr: '127.0.0.1:9101' },
      ],
    });
    // An edit puts the review away: it no longer shows what would be written.
    type(tcp.querySelector('[data-testid="settings-transport-addr"]') as HTMLElement, '127.0.0.1:9201');
    expect($('settings-review')).toBeNull();
    // Typed back as reviewed, the review shows again.
    type(tcp.querySelector('[data-testid="settings-transport-addr"]') as HTMLElement, '127.0.0.1:9200');
    expect($('settings-review')).not.toBeNull();
    click('settings-save');
    await vi.waitFor(() => expect(inSection('transports', 'settings-saved')?.dataset.applies).toBe('now'));
    expect(inSection('transports', 'settings-saved-text').textContent).toBe(`Saved to ${SETTINGS.path} and in force now.`);
    expect(inSection('transports', 'settings-diff').querySelectorAll('.add')).toHaveLength(1);
    expect(calls[0]).toEqual([
      'saveTransports',
      [
        { name: 'unix', enabled: true, addr: '/run/sb/mcp.sock' },
        { name: 'tcp', enabled: true, addr: '127.0.0.1:9200' },
        { name: 'http', enabled: false, addr: '127.0.0.1:9101' },
      ],
    ]);

    // Toolsets: process off.
    (document.querySelector('[data-testid="settings-toolset"][data-name="process"] input') as HTMLInputElement).click();
    flushSync();
    await saveSettings();
    await vi.waitFor(() => expect(inSection('toolsets', 'settings-saved')).not.toBeNull());
    expect(calls.at(-1)).toEqual(['saveToolsets', ['files']]);

    // Policy: add a rule, move it to the top, test a call against the edited rules.
    click('settings-rule-add');
    const rules = () => $$('settings-rule');
    expect(rules()).toHaveLength(3);
    type(rules()[2].querySelector('[data-testid="settings-rule-tool"]') as HTMLElement, 'exec');
    type(rules()[2].querySelector('[data-testid="settings-rule-args"]') as HTMLElement, 'command=rm*');
    (rules()[2].querySelector('[data-testid="settings-rule-up"]') as HTMLElement).click();
    flushSync();
    (rules()[1].querySelector('[data-testid="settings-rule-up"]') as HTMLElement).click();
    flushSync();
    expect(rules().map((r) => [r.dataset.tool, r.dataset.origin])).toEqual([
      ['exec', '0'],
      ['file_delete', '1'],
      ['git_push', '2'],
    ]);
    type($('settings-test-tool')!, 'exec');
    type($('settings-test-args')!, '{"command": "rm"');
    click('settings-test-run');
    expect($('settings-field-error')?.dataset.field).toBe('args');
    type($('settings-test-args')!, '{"command": "rm", "args": ["-rf", "x"]}');
    click('settings-test-run');
    await vi.waitFor(() => expect($('settings-test-result')?.dataset.decision).toBe('deny'));
    expect($('settings-test-result')?.dataset.ruleIndex).toBe('1');
    expect(calls.at(-1)).toEqual([
      'testPolicy',
      {
        policy: {
          default: 'allow',
          askTimeout: '',
          rules: [
            { tool: 'exec', args: { command: 'rm*' }, action: 'deny' },
            { tool: 'file_delete', action: 'ask', origin: 1 },
            { tool: 'git_push', action: 'deny', origin: 2 },
          ],
          roots: [],
        },
        tool: 'exec',
        args: { command: 'rm', args: ['-rf', 'x'] },
        client: '',
      },
    ]);

    // A refused save: each error next to what it names; nothing reported as saved.
    await saveSettings();
    await vi.waitFor(() => expect($$('settings-field-error').map((e) => e.dataset.field)).toEqual(['policy.rules[3]', 'roots.allow']));
    expect(rules()[2].querySelector('[data-testid="settings-field-error"]')?.textContent).toContain('"exec[" has an unclosed [');
    expect(inSection('policy', 'settings-saved')).toBeNull();
    await saveSettings();
    await vi.waitFor(() => expect(inSection('policy', 'settings-saved')).not.toBeNull());
    expect($$('settings-field-error')).toHaveLength(0);

    // RAG: in force at once, and says so.
    expect(document.querySelector('[data-testid="settings-section"][data-section="rag"] .head')?.textContent).toContain('applies now');
    type($('settings-rag-url')!, 'localhost:6334');
    await saveSettings();
    await vi.waitFor(() => expect(inSection('rag', 'settings-saved')?.dataset.applies).toBe('now'));
    expect(inSection('rag', 'settings-saved-text').textContent).toContain('in force now');
    expect((calls.at(-1) as [string, { url: string }])[1].url).toBe('localhost:6334');
    expect($('settings-servers-link')?.getAttribute('href')).toBe('#servers');
  });

  it('settings: transport security, tokens, web fetch, InfluxDB, the RAG key, flags, and Start at login switched elsewhere', async () => {
    const calls: unknown[][] = [];
    const changed = (applies: string) => ({ path: SETTINGS.path, diff: '+x\n', applies, note: '', settings: SETTINGS });
    let securityTries = 0;
    let reads = 0;
    const { sock } = await start({
      settings: async () => {
        calls.push(['settings']);
        // Read again after the tray switched Start at login on: the entry exists now.
        return reads++ === 0 ? SETTINGS : { ...SETTINGS, autostart: { ...SETTINGS.autostart, enabled: true } };
      },
      saveSecurity: async (v) => {
        calls.push(['saveSecurity', v]);
        if (securityTries++ === 0) throw new Error('save security: HTTP 400: http.allowed_origins[1]: "*": wildcards are not allowed: any web page you visit could drive your tools; list each origin');
        return changed('now');
      },
      regenerateToken: async (name) => {
        calls.push(['regenerateToken', name]);
        return { token: name, path: '/home/u/.config/switchboard/token', diff: '', reconfigure: 'Reconfigure: Streamable HTTP clients …', settings: SETTINGS };
      },
      saveWeb: async (v) => {
        calls.push(['saveWeb', v]);
        return changed('now');
      },
      saveML: async (v) => {
        calls.push(['saveML', v]);
        return changed('next start');
      },
      setRAGAPIKey: async (v) => {
        calls.push(['setRAGAPIKey', v]);
        return changed('now');
      },
    });
    window.location.hash = '';
    await import('./views/Settings.svelte');
    await openTab('settings');
    await vi.waitFor(() => expect($('settings-path')?.textContent).toBe(SETTINGS.path));
    const section = (sec: string) => document.querySelector(`[data-testid="settings-section"][data-section="${sec}"]`) as HTMLElement;
    const inSection = (sec: string, id: string) => section(sec).querySelector(`[data-testid="${id}"]`) as HTMLElement;
    const type = (el: HTMLElement, v: string) => {
      (el as HTMLInputElement).value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      flushSync();
    };

    // A flag of this run: in the intro and next to the workspace field.
    expect($('settings-flag')?.dataset.flag).toBe('--workspace');
    expect(section('workspace').textContent).toContain('workspace is set by --workspace (/home/u/proj) for this run; the saved value applies when Switchboard is started without it');

    // Security: a wildcard refused next to the origins; then saved.
    (inSection('security', 'settings-security-require-token') as HTMLInputElement).click();
    type(inSection('security', 'settings-security-origins'), '*');
    await saveSettings();
    await vi.waitFor(() => expect(section('security').querySelector('[data-testid="settings-field-error"]')?.getAttribute('data-field')).toBe('http.allowed_origins'));
    type(inSection('security', 'settings-security-origins'), 'http://localhost:6274\n');
    await saveSettings();
    await vi.waitFor(() => expect(inSection('security', 'settings-saved')?.dataset.applies).toBe('now'));
    expect(calls.filter((c) => c[0] === 'saveSecurity').at(-1)).toEqual(['saveSecurity', { tcpRequireToken: true, httpAllowedOrigins: ['http://localhost:6274'] }]);

    // Tokens: where each is kept; only a stored one can be regenerated, after saying who needs it.
    expect($$('settings-token').map((r) => [r.dataset.token, r.querySelector('[data-testid="settings-token-where"]')?.textContent])).toEqual([
      ['client', 'kept in /home/u/.config/switchboard/token'],
      ['http', 'uses the client token'],
      ['tcp', 'uses the client token'],
    ]);
    expect($$('settings-token-regenerate')).toHaveLength(1);
    click('settings-token-regenerate');
    expect($('settings-token-confirm-text')?.textContent).toContain('Reconfigure: Streamable HTTP clients');
    click('settings-token-confirm');
    await vi.waitFor(() => expect($('settings-token-done')?.dataset.token).toBe('client'));
    expect($('settings-token-reconfigure')?.textContent).toContain('Reconfigure');
    expect(calls.filter((c) => c[0] === 'regenerateToken')).toEqual([['regenerateToken', 'client']]);

    // Web fetch: one entry per line, the timeout trimmed.
    type($('settings-web-allow')!, 'intranet.example\n 10.0.0.0/8 \n');
    type($('settings-web-timeout')!, ' 90s ');
    await saveSettings();
    await vi.waitFor(() => expect(inSection('web', 'settings-saved')).not.toBeNull());
    expect(calls.filter((c) => c[0] === 'saveWeb')).toEqual([['saveWeb', { allow: ['intranet.example', '10.0.0.0/8'], timeout: '90s' }]]);

    // ml_status's InfluxDB.
    type($('settings-ml-influx-url')!, 'http://127.0.0.1:8086');
    type($('settings-ml-influx-db')!, 'training');
    await saveSettings();
    await vi.waitFor(() => expect(inSection('ml', 'settings-saved')).not.toBeNull());
    expect(calls.filter((c) => c[0] === 'saveML').at(-1)).toMatchObject(['saveML', { influxUrl: 'http://127.0.0.1:8086', influxDb: 'training' }]);

    // The RAG key: a new one goes to the hub once (for the keyring), and leaves the page after.
    expect($('settings-rag-key-state')?.textContent).toBe('none');
    const mode = $('settings-rag-key-mode') as HTMLSelectElement;
    mode.value = 'store';
    mode.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    await saveSettings();
    expect(section('rag').querySelector('[data-field="rag.api_key"]')?.textContent).toContain('paste the key');
    expect(calls.filter((c) => c[0] === 'setRAGAPIKey')).toHaveLength(0);
    type($('settings-rag-key-value')!, 'k-123');
    await saveSettings();
    await vi.waitFor(() => expect(calls.filter((c) => c[0] === 'setRAGAPIKey')).toEqual([['setRAGAPIKey', { action: 'store', name: 'rag-api-key', value: 'k-123' }]]));
    await vi.waitFor(() => expect($('settings-rag-key-value')).toBeNull());
    expect(document.body.innerHTML).not.toContain('k-123');

    // Start at login switched in the tray: its audited action arrives on the activity channel and
    // the view reads the entry's state again, without a reload.
    expect($('settings-autostart-state')?.dataset.enabled).toBe('false');
    const reading = calls.filter((c) => c[0] === 'settings').length;
    send(sock, 'event', 'activity', { time: new Date().toISOString(), callId: 'a42', actor: 'tray', tool: 'autostart_set', session: '', transport: 'tray', user: '', level: 'SECURITY', outcome: 'ok', durationMs: 1, args: '{"enabled":true}' });
    await vi.waitFor(() => expect($('settings-autostart-state')?.dataset.enabled).toBe('true'));
    expect(calls.filter((c) => c[0] === 'settings')).toHaveLength(reading + 1);
    // Another tool call on the feed reads nothing again.
    send(sock, 'event', 'activity', { time: new Date().toISOString(), callId: 'c43', tool: 'exec', session: 's', transport: 'unix', user: '', level: 'SECURITY', outcome: 'ok', durationMs: 1, args: '' });
    await tick();
    expect(calls.filter((c) => c[0] === 'settings')).toHaveLength(reading + 1);
    expect((inSection('autostart', 'settings-autostart-toggle') as HTMLInputElement).checked).toBe(true);
  });
});

describe('project folder', () => {
  const typeInto = (id: string, v: string) => {
    const el = $(id) as HTMLInputElement;
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
  };
  const submit = () => {
    ($('project-save') as HTMLButtonElement).click();
    flushSync();
  };

  it('asks for a folder on first run: checks the typed path, shows the hub refusal, and goes once one is chosen', async () => {
    let refuse = true;
    const { sock, calls } = await start({
      setProject: async (dir: string) => {
        calls.push(['setProject', dir]);
        if (refuse) throw new Error('choose the project folder: HTTP 400: project folder: /home/u is your home directory, not a project');
        return { project: { dir: '/home/u/src/app', name: 'app', source: 'chosen' }, note: 'restarted in it: fs' };
      },
    });
    expect($('project-prompt')).toBeNull(); // not before the hub said there is none
    send(sock, 'snapshot', 'project', { dir: '', name: '', source: 'none' });
    expect($('project-prompt')?.textContent).toContain('Choose a project folder');
    expect($('project-button')?.textContent).toContain('none');
    expect($('project-pick')).toBeNull(); // no native picker in a browser

    typeInto('project-input', 'src/app');
    submit();
    expect($('project-error')?.textContent).toContain('"src/app" is relative');
    typeInto('project-input', '~');
    submit();
    expect($('project-error')?.textContent).toContain('Not your whole home directory');
    expect(calls.filter((c) => c[0] === 'setProject')).toEqual([]);

    typeInto('project-input', '/home/u');
    expect($('project-error')).toBeNull(); // typing clears the last error
    submit();
    await vi.waitFor(() => expect($('project-error')?.textContent).toBe('project folder: /home/u is your home directory, not a project'));
    expect($('project-prompt')).not.toBeNull();

    refuse = false;
    typeInto('project-input', '~/src/app');
    submit();
    await vi.waitFor(() => expect($('project-prompt')).toBeNull());
    expect(calls.filter((c) => c[0] === 'setProject')).toEqual([
      ['setProject', '/home/u'],
      ['setProject', '~/src/app'],
    ]);
    expect($('project-button')?.dataset.dir).toBe('/home/u/src/app');
    expect($('project-button')?.textContent).toContain('app');
    expect($('project-saved')?.textContent).toContain('restarted in it: fs');
  });

  it('in the desktop window the native picker chooses; a dismissed picker changes nothing', async () => {
    let answer = { project: { dir: '', name: '', source: 'none' as const }, note: '' };
    const { sock, calls } = await start({
      kind: 'wails',
      pickProject: async () => {
        calls.push(['pickProject']);
        return answer as never;
      },
    });
    send(sock, 'snapshot', 'project', { dir: '', name: '', source: 'none' });
    ($('project-pick') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls.filter((c) => c[0] === 'pickProject')).toHaveLength(1));
    await tick();
    expect($('project-prompt')).not.toBeNull();
    expect($('project-saved')).toBeNull();

    answer = { project: { dir: '/srv/app', name: 'app', source: 'chosen' } as never, note: '' };
    ($('project-pick') as HTMLButtonElement).click();
    await vi.waitFor(() => expect($('project-prompt')).toBeNull());
    expect($('project-button')?.dataset.dir).toBe('/srv/app');
  });

  it('the header shows the folder, follows changes made elsewhere (the tray) and opens the chooser', async () => {
    const { sock } = await start();
    send(sock, 'snapshot', 'project', { dir: '/home/u/proj', name: 'proj', source: 'last' });
    expect($('project-prompt')).toBeNull();
    expect($('project-button')?.textContent).toContain('proj');
    send(sock, 'event', 'project', { dir: '/home/u/other', name: 'other', source: 'chosen' });
    expect($('project-button')?.dataset.dir).toBe('/home/u/other');
    click('project-button');
    expect($('project-current')?.textContent).toBe('/home/u/other');
    expect($('project-chooser')?.textContent).toContain('chosen here');
    click('project-close');
    expect($('project-chooser')).toBeNull();
  });
});
