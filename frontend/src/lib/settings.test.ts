import { describe, expect, it } from 'vitest';
import {
  argsText,
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
  removeAt,
  saveErrors,
  savedText,
  testArgs,
  toolsetsForm,
  toolsetsInput,
  transportsForm,
  transportsInput,
  unplaced,
} from './settings';
import type { Settings } from './types';

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
    ml: { defaultBackend: 'gpu', judgeBackend: '', backends: [{ name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', origin: 1 }], running: ['ollama'] },
    rag: { backend: 'embedded', url: '', embedder: 'offline', model: '', embedderUrl: '', collection: 'hostuk-docs', dir: '' },
    autostart: { available: true, enabled: false, entry: '/home/u/.config/autostart/switchboard.desktop' },
    overrides: [],
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
