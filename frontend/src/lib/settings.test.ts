import { describe, expect, it } from 'vitest';
import {
  argsText,
  autostartMark,
  decisionTone,
  errorsAt,
  isPending,
  mlForm,
  mlInput,
  move,
  newRule,
  overridesFor,
  parseArgs,
  policyForm,
  policyInput,
  ragForm,
  ragKeyForm,
  ragKeyInput,
  ragKeyText,
  removeAt,
  saveErrors,
  savedText,
  securityForm,
  securityInput,
  testArgs,
  tokenTitle,
  tokenWhere,
  toolsetsForm,
  toolsetsInput,
  transportsForm,
  transportsInput,
  unplaced,
  webForm,
  webInput,
} from './settings';
import type { ActivityEntry, Settings } from './types';

function sampleSettings(extra: Partial<Settings> = {}): Settings {
  return {
    path: '/home/u/.config/switchboard/config.toml',
    exists: true,
    transports: [
      { name: 'unix', enabled: true, addr: '/run/user/1000/switchboard/mcp.sock', running: true, runningAddr: '/run/user/1000/switchboard/mcp.sock' },
      { name: 'tcp', enabled: false, addr: '127.0.0.1:9100', running: false, runningAddr: '' },
      { name: 'http', enabled: false, addr: '127.0.0.1:9101', running: false, runningAddr: '' },
    ],
    toolsets: {
      saved: [],
      default: ['files', 'process', 'git'],
      available: [
        { name: 'files', title: 'files', enabled: true, tools: 10 },
        { name: 'process', title: 'processes', enabled: true, tools: 6 },
        { name: 'ide', title: 'the IDE bridge', enabled: false, tools: 8 },
        { name: 'git', title: 'git', enabled: true, tools: 5 },
      ],
    },
    workspace: { saved: '', running: '/home/u/proj' },
    policy: {
      default: '',
      askTimeout: '',
      rules: [
        { tool: 'file_delete', action: 'ask', origin: 1 },
        { tool: 'exec', args: { command: 'rm*', args: '-rf *' }, client: 'cursor', action: 'deny', origin: 2 },
      ],
      roots: ['~/src', '/srv'],
      status: { path: '/home/u/.config/switchboard/config.toml', default: 'allow', askTimeout: '2m0s', rules: 2, rootsAllow: [], loadedAt: '' },
    },
    ml: {
      defaultBackend: 'gpu',
      judgeBackend: '',
      backends: [{ name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', origin: 1 }],
      running: ['ollama'],
      influxUrl: 'http://admin:xxxxx@influx.lab:8086',
      influxDb: '',
    },
    rag: { backend: 'embedded', url: '', embedder: 'offline', model: '', embedderUrl: '', collection: 'hostuk-docs', dir: '', apiKey: { state: 'secret', name: 'lab-qdrant' } },
    autostart: { available: true, enabled: false, entry: '/home/u/.config/autostart/switchboard.desktop' },
    security: {
      tcpRequireToken: false,
      httpAllowedOrigins: ['http://localhost:6274'],
      runningTcpRequireToken: false,
      runningHttpAllowedOrigins: ['http://localhost:6274'],
      tokens: [
        { name: 'client', source: 'file', where: '/home/u/.config/switchboard/token', exists: true, usedBy: ['http', 'tcp'], regenerate: true, reconfigure: 'Reconfigure: …' },
        { name: 'http', source: 'client', where: '/home/u/.config/switchboard/token', exists: false, usedBy: ['http'], regenerate: false, reconfigure: '' },
        { name: 'tcp', source: 'env', where: 'SWITCHBOARD_TCP_TOKEN', exists: false, usedBy: ['tcp'], regenerate: false, reconfigure: '' },
      ],
    },
    web: { allow: ['intranet.example'], timeout: '', envAllow: [] },
    overrides: [],
    flags: [],
    pending: [],
    ...extra,
  };
}

describe('forms from the settings', () => {
  it('fills every section from GET /api/settings', () => {
    const s = sampleSettings();
    expect(transportsForm(s)).toEqual([
      { name: 'unix', enabled: true, addr: '/run/user/1000/switchboard/mcp.sock' },
      { name: 'tcp', enabled: false, addr: '127.0.0.1:9100' },
      { name: 'http', enabled: false, addr: '127.0.0.1:9101' },
    ]);
    // No toolsets key: the default set is what is checked.
    expect(toolsetsForm(s)).toEqual(['files', 'process', 'git']);
    expect(toolsetsForm(sampleSettings({ toolsets: { ...s.toolsets, saved: ['git'] } }))).toEqual(['git']);
    expect(policyForm(s)).toEqual({
      default: 'allow',
      askTimeout: '',
      rules: [
        { tool: 'file_delete', args: '', client: '', action: 'ask', origin: 1 },
        { tool: 'exec', args: 'args=-rf *\ncommand=rm*', client: 'cursor', action: 'deny', origin: 2 },
      ],
      roots: '~/src\n/srv',
    });
    expect(mlForm(s).backends[0]).toEqual({ name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', model: '', apiKeyEnv: '', endpoint: '', origin: 1 });
    expect(ragForm(s).collection).toBe('hostuk-docs');
  });
});

describe('building the API input', () => {
  it('sends the rules in the order shown, with their origins, args parsed, empty parts left out', () => {
    const f = policyForm(sampleSettings());
    f.rules = move(f.rules, 1, -1);
    f.rules.push({ ...newRule(), tool: 'web_fetch', args: ' url = http://10.* \n\n' });
    f.askTimeout = ' 60s ';
    f.roots = '~/src\n\n  /srv/x  \n';
    expect(policyInput(f)).toEqual({
      value: {
        default: 'allow',
        askTimeout: '60s',
        rules: [
          { tool: 'exec', args: { args: '-rf *', command: 'rm*' }, client: 'cursor', action: 'deny', origin: 2 },
          { tool: 'file_delete', action: 'ask', origin: 1 },
          { tool: 'web_fetch', args: { url: 'http://10.*' }, action: 'deny' },
        ],
        roots: ['~/src', '/srv/x'],
      },
    });
  });

  it('names the rule and the line of an args line without a name', () => {
    expect(parseArgs('command=rm\n=x', 3)).toEqual({ error: { field: 'policy.rules[3].args', text: 'policy.rules[3].args: line 2 "=x" is not name=glob, e.g. command=rm*' } });
    const f = policyForm(sampleSettings());
    f.rules[1].args = 'just-a-glob';
    expect(policyInput(f)).toEqual({ error: { field: 'policy.rules[2].args', text: expect.stringContaining('line 1 "just-a-glob"') } });
    expect(argsText({ b: '2', a: '1' })).toBe('a=1\nb=2');
  });

  it('moves and removes within bounds', () => {
    expect(move([1, 2, 3], 0, 1)).toEqual([2, 1, 3]);
    expect(move([1, 2, 3], 2, -2)).toEqual([3, 1, 2]);
    const list = [1, 2];
    expect(move(list, 0, -1)).toBe(list);
    expect(move(list, 1, 1)).toBe(list);
    expect(removeAt([1, 2, 3], 1)).toEqual([1, 3]);
  });

  it('reads the test call arguments as a JSON object', () => {
    expect(testArgs('')).toEqual({ value: undefined });
    expect(testArgs('{"command": "rm", "args": ["-rf", "x"]}')).toEqual({ value: { command: 'rm', args: ['-rf', 'x'] } });
    for (const bad of ['[1]', 'rm -rf', '"x"', 'null']) expect(testArgs(bad)).toMatchObject({ error: { field: 'args' } });
  });

  it('builds transports, toolsets (in the hub order) and backends', () => {
    expect(transportsInput([{ name: 'tcp', enabled: true, addr: ' 127.0.0.1:9200 ' }])).toEqual([{ name: 'tcp', enabled: true, addr: '127.0.0.1:9200' }]);
    expect(toolsetsInput(['git', 'files', 'gone'], ['files', 'process', 'git'])).toEqual(['files', 'git']);
    const f = mlForm(sampleSettings());
    f.backends.push({ name: ' local ', kind: 'ollama', url: 'http://127.0.0.1:11434 ', model: '', apiKeyEnv: '', endpoint: 'generate', origin: 0 });
    expect(mlInput(f)).toEqual({
      defaultBackend: 'gpu',
      judgeBackend: '',
      // The URL as shown (password hidden) goes back as is: the hub keeps the file's.
      influxUrl: 'http://admin:xxxxx@influx.lab:8086',
      influxDb: '',
      backends: [
        { name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', origin: 1 },
        { name: 'local', kind: 'ollama', url: 'http://127.0.0.1:11434', endpoint: 'generate' },
      ],
    });
  });
});

describe('errors from a save', () => {
  it('places each line of the hub error next to the field it names', () => {
    const msg =
      'save policy: HTTP 400: policy.rules[2].tool: pattern "exec[" has an unclosed [\npolicy.rules[3].action: "block" is not an action; use "allow", "ask" or "deny"\nroots.allow[1]: "src" is relative';
    const errs = saveErrors(msg);
    expect(errs.fields.map((e) => e.field)).toEqual(['policy.rules[2].tool', 'policy.rules[3].action', 'roots.allow[1]']);
    expect(errorsAt(errs, 'policy.rules[2]')).toEqual(['policy.rules[2].tool: pattern "exec[" has an unclosed [']);
    expect(errorsAt(errs, 'policy.rules[3].action')[0]).toContain('"block" is not an action');
    expect(errorsAt(errs, 'roots.allow')).toEqual(['roots.allow[1]: "src" is relative']);
    expect(errorsAt(errs, 'policy.rules[1]')).toEqual([]);
    expect(unplaced(errs, ['policy.rules[2]', 'policy.rules[3]'])).toEqual(['roots.allow[1]: "src" is relative']);
  });

  it('keeps what names no field (and the Wails form of the prefix) as a general error', () => {
    const errs = saveErrors('save transports: tcp.addr: listen tcp 127.0.0.1:1: bind: address already in use; nothing saved');
    expect(errs.fields).toEqual([{ field: 'tcp.addr', text: 'tcp.addr: listen tcp 127.0.0.1:1: bind: address already in use; nothing saved' }]);
    const other = saveErrors('save workspace: HTTP 400: config /c/config.toml: does not parse: line 3: bad\nsettings: this hub has no config file');
    expect(other.fields).toEqual([]);
    expect(other.general).toEqual(['config /c/config.toml: does not parse: line 3: bad', 'settings: this hub has no config file']);
    expect(saveErrors('test a call: HTTP 400: args: not a JSON object').fields[0].field).toBe('args');
  });
});

describe('display', () => {
  it('tones, overrides, pending sections and the saved line', () => {
    expect([decisionTone('allow'), decisionTone('ask'), decisionTone('deny'), decisionTone('')]).toEqual(['ok', 'busy', 'bad', 'idle']);
    const s = sampleSettings({ overrides: [{ env: 'MCP_ADDR', key: 'tcp.addr' }, { env: 'SWITCHBOARD_QDRANT_URL', key: 'rag.backend, rag.url' }], pending: ['ml'] });
    expect(overridesFor(s, ['tcp', 'unix', 'http'])).toEqual(['MCP_ADDR overrides tcp.addr']);
    expect(overridesFor(s, ['rag'])).toEqual(['SWITCHBOARD_QDRANT_URL overrides rag.backend, rag.url']);
    expect(overridesFor(s, ['workspace'])).toEqual([]);
    expect(isPending(s, 'ml')).toBe(true);
    expect(isPending(s, 'rag')).toBe(false);
    expect(savedText({ path: '/c.toml', diff: '+x', applies: 'now' })).toBe('Saved to /c.toml and in force now.');
    expect(savedText({ path: '/c.toml', diff: '+x', applies: 'next start' })).toBe('Saved to /c.toml; applies at the next start.');
    expect(savedText({ path: '/c.toml', diff: '', applies: 'now' })).toContain('Nothing to change');
  });
});

describe('security, web, the RAG key, flags', () => {
  it('fills and builds the security and web forms, one entry per line', () => {
    const s = sampleSettings();
    const f = securityForm(s);
    expect(f).toEqual({ tcpRequireToken: false, origins: 'http://localhost:6274' });
    f.tcpRequireToken = true;
    f.origins = ' http://localhost:6274 \n\nhttps://app.example.com\n';
    expect(securityInput(f)).toEqual({ tcpRequireToken: true, httpAllowedOrigins: ['http://localhost:6274', 'https://app.example.com'] });
    const w = webForm(s);
    expect(w).toEqual({ allow: 'intranet.example', timeout: '' });
    w.allow += '\n 10.0.0.0/8 \n';
    w.timeout = ' 90s ';
    expect(webInput(w)).toEqual({ allow: ['intranet.example', '10.0.0.0/8'], timeout: '90s' });
  });

  it('describes tokens by where they are kept, never by value', () => {
    const [client, http, tcp] = sampleSettings().security.tokens;
    expect(tokenTitle(client)).toBe('Client token (HTTP, TCP)');
    expect(tokenWhere(client)).toBe('kept in /home/u/.config/switchboard/token');
    expect(tokenWhere({ ...client, exists: false })).toBe('kept in /home/u/.config/switchboard/token (created on first use)');
    expect(tokenWhere(http)).toBe('uses the client token');
    expect(tokenWhere(tcp)).toBe('set by the environment variable SWITCHBOARD_TCP_TOKEN');
    expect(tokenWhere({ ...http, source: 'config', where: '[http] token in /c.toml' })).toBe('set in [http] token in /c.toml');
    expect(tokenTitle({ ...client, usedBy: [] })).toBe('Client token (no transport now)');
    expect(tokenTitle(tcp)).toBe('TCP token');
  });

  it('changes the RAG key only when asked, and a new key only with a value', () => {
    const s = sampleSettings();
    expect(ragKeyText(s)).toBe('the keyring secret lab-qdrant (${secret:lab-qdrant})');
    expect(ragKeyText(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'env', name: 'QDRANT_API_KEY' } } }))).toBe('the environment variable QDRANT_API_KEY (${QDRANT_API_KEY})');
    expect(ragKeyText(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'literal' } } }))).toContain('not shown');
    expect(ragKeyText(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'none' } } }))).toBe('none');
    const f = ragKeyForm(s);
    expect(f).toEqual({ mode: 'keep', ref: '${secret:lab-qdrant}', name: 'lab-qdrant', value: '' });
    expect(ragKeyForm(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'none' } } })).name).toBe('rag-api-key');
    expect(ragKeyInput(f)).toEqual({ value: null });
    expect(ragKeyInput({ ...f, mode: 'store' })).toEqual({ error: { field: 'rag.api_key', text: 'rag.api_key: paste the key to store in the keyring' } });
    expect(ragKeyInput({ ...f, mode: 'store', name: ' lab ', value: 'k-123' })).toEqual({ value: { action: 'store', name: 'lab', value: 'k-123' } });
    expect(ragKeyInput({ ...f, mode: 'reference', ref: ' ${KEY} ' })).toEqual({ value: { action: 'reference', ref: '${KEY}' } });
    expect(ragKeyInput({ ...f, mode: 'remove' })).toEqual({ value: { action: 'remove' } });
  });

  it('marks keys set by a flag or added to by the environment, next to their section', () => {
    const s = sampleSettings({
      flags: [
        { flag: '--workspace', key: 'workspace', value: '/tmp/x' },
        { flag: '--token', key: 'http.token', value: '' },
      ],
      overrides: [{ env: 'SWITCHBOARD_FETCH_ALLOW', key: 'web.allow', adds: true }],
    });
    expect(overridesFor(s, ['workspace'])).toEqual(['workspace is set by --workspace (/tmp/x) for this run; the saved value applies when Switchboard is started without it']);
    expect(overridesFor(s, ['http.token'])).toEqual(['http.token is set by --token for this run; the saved value applies when Switchboard is started without it']);
    expect(overridesFor(s, ['web'])).toEqual(['SWITCHBOARD_FETCH_ALLOW adds to web.allow']);
    expect(overridesFor(s, ['toolsets'])).toEqual([]);
  });

  it('marks the newest Start at login switch in the activity feed', () => {
    const e = (tool: string, callId: string, outcome = 'ok'): ActivityEntry =>
      ({ time: `2026-01-01T00:00:0${callId.slice(1)}Z`, callId, tool, outcome, actor: 'tray', session: '', transport: 'tray', user: '', level: 'SECURITY', durationMs: 1, args: '' }) as ActivityEntry;
    expect(autostartMark([])).toBe('');
    expect(autostartMark([e('exec', 'c1')])).toBe('');
    const first = autostartMark([e('autostart_set', 'a1'), e('exec', 'c2')]);
    expect(first).toBe('a1@2026-01-01T00:00:01Z');
    // A "started" line is not the switch yet; the outcome is.
    expect(autostartMark([e('autostart_set', 'a1'), e('autostart_set', 'a3', 'started')])).toBe(first);
    expect(autostartMark([e('autostart_set', 'a1'), e('autostart_set', 'a3')])).toBe('a3@2026-01-01T00:00:03Z');
  });
});
