import { describe, expect, it } from 'vitest';
import { clientActions, clientRows, clientStateTone, confirmLabel, connectedCount, diffLines, openRowKey, previewTitle } from './clients';
import type { ClientChange, ClientList } from './types';

const list: ClientList = {
  project: '/home/u/proj',
  clients: [
    {
      name: 'cursor',
      display: 'Cursor',
      format: 'JSON',
      installed: true,
      scopes: [
        { scope: 'user', path: '/home/u/.cursor/mcp.json', exists: true, state: 'connected to this hub', has_token: true },
        { scope: 'project', path: '/home/u/proj/.cursor/mcp.json', exists: false, state: 'not set up' },
      ],
    },
    {
      name: 'windsurf',
      display: 'Windsurf',
      format: 'JSON',
      installed: true,
      scopes: [{ scope: 'user', path: '/home/u/.codeium/windsurf/mcp_config.json', exists: true, state: 'cannot read the config', detail: 'line 3: a comment' }],
    },
    { name: 'codex', display: 'Codex', format: 'TOML', installed: false, scopes: [{ scope: 'user', path: '/home/u/.codex/config.toml', exists: false, state: 'not installed' }] },
  ],
};

describe('clientRows', () => {
  it('has one row per client and scope, the client named on its first row, with the controls of its state', () => {
    const rows = clientRows(list);
    expect(rows.map((r) => [r.key, r.first, r.scope, r.state, r.actions.join('+')])).toEqual([
      ['cursor/user', true, 'user', 'connected to this hub', 'disconnect'],
      ['cursor/project', false, 'project', 'not set up', 'connect'],
      ['windsurf/user', true, 'user', 'cannot read the config', 'connect'],
      ['codex/user', true, 'user', 'not installed', 'connect'],
    ]);
    expect(rows[2].detail).toBe('line 3: a comment');
    expect(rows[1].detail).toBe('');
    expect(rows[3].installed).toBe(false);
    expect(rows.map((r) => r.hasToken)).toEqual([true, false, false, false]);
  });

  it('copes with no list yet and missing scopes', () => {
    expect(clientRows(null)).toEqual([]);
    expect(clientRows({ project: '', clients: [{ name: 'x', display: '', format: '', installed: false, scopes: null as never }] })).toEqual([]);
  });

  it('counts clients connected in any scope', () => {
    expect(connectedCount(list)).toBe(1);
    expect(connectedCount(undefined)).toBe(0);
  });
});

describe('clientActions and clientStateTone', () => {
  it('offers Connect unless connected, Disconnect where there is an entry', () => {
    expect(clientActions('connected to this hub')).toEqual(['disconnect']);
    expect(clientActions('set up differently')).toEqual(['connect', 'disconnect']);
    expect(clientActions('not set up')).toEqual(['connect']);
    expect(clientActions('not installed')).toEqual(['connect']);
    expect(clientActions('cannot read the config')).toEqual(['connect']); // the attempt names the line to fix
  });

  it('colours connected green, unreadable red, another entry amber', () => {
    expect(['connected to this hub', 'cannot read the config', 'set up differently', 'not set up', 'not installed'].map(clientStateTone)).toEqual([
      'ok',
      'bad',
      'busy',
      'idle',
      'idle',
    ]);
  });
});

describe('diffLines', () => {
  it('tells file headers, hunks, added, removed and context lines apart', () => {
    const diff = '--- /h/.cursor/mcp.json\n+++ /h/.cursor/mcp.json\n@@ -1,3 +1,7 @@\n {\n-  "a": 1\n+  "a": 1,\n+  "mcpServers": {}\n }\n\\ No newline at end of file\n';
    expect(diffLines(diff).map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'ctx', 'del', 'add', 'add', 'ctx', 'note']);
    expect(diffLines(diff)[5].text).toBe('+  "a": 1,');
    expect(diffLines('')).toEqual([]);
  });
});

describe('labels', () => {
  it('names the action, client and scope', () => {
    expect(previewTitle({ action: 'connect', display: 'Cursor', client: 'cursor', scope: 'user' })).toBe('Connect Cursor (user scope)');
    expect(previewTitle({ action: 'disconnect', display: '', client: 'zed', scope: 'user' })).toBe('Disconnect zed (user scope)');
    expect(confirmLabel({ action: 'connect', path: '/x' })).toBe('Write and connect');
    expect(confirmLabel({ action: 'disconnect', path: '/x' })).toBe('Write and disconnect');
  });
});

describe('openRowKey', () => {
  const change = (client: string, scope: string) => ({ client, scope }) as ClientChange;
  it('is the preview row, else the result row, else none', () => {
    expect(openRowKey(change('cursor', 'project'), change('zed', 'user'))).toBe('cursor/project');
    expect(openRowKey(null, change('zed', 'user'))).toBe('zed/user');
    expect(openRowKey(null, null)).toBe('');
  });
});
