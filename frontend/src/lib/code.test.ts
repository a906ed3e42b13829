import { describe, expect, it } from 'vitest';
import { byWorkspace, formatMemory, initialCode, reduceCode, severityCounts, uptime, workspaceName } from './code';

const server = {
  workspace: '/w/app',
  language: 'go',
  command: '/usr/bin/gopls',
  state: 'ready',
  pid: 42,
  startedAt: '2026-01-01T00:00:00Z',
  lastUsed: '2026-01-01T00:01:00Z',
  restarts: 1,
  memoryBytes: 150 * 1024 * 1024,
  openFiles: 3,
  sandbox: 'landlock ABI 6',
};

describe('reduceCode', () => {
  it('replaces the state with each snapshot or event', () => {
    const s1 = reduceCode(initialCode, {
      type: 'snapshot',
      channel: 'code',
      timestamp: '',
      data: {
        servers: [server],
        files: [{ workspace: '/w/app', language: 'go', path: 'a/a.go', diagnostics: [{ path: 'a/a.go', line: 7, column: 2, severity: 'error', message: 'cannot use' }] }],
        runs: [{ action: 'test', command: 'go test -json ./...', success: false, exitCode: 1, failures: [{ path: 'x_test.go', line: 3, test: 'TestX', message: 'boom' }] }],
      },
    });
    expect(s1.servers).toHaveLength(1);
    expect(s1.servers[0].pid).toBe(42);
    expect(s1.files[0].diagnostics[0]).toMatchObject({ line: 7, severity: 'error', message: 'cannot use' });
    expect(s1.runs[0]).toMatchObject({ action: 'test', success: false, exitCode: 1 });
    expect(s1.runs[0].failures[0].test).toBe('TestX');
    const s2 = reduceCode(s1, { type: 'event', channel: 'code', timestamp: '', data: { servers: [], files: [], runs: [] } });
    expect(s2).toEqual({ servers: [], files: [], runs: [] });
  });

  it('drops malformed entries and ignores other messages', () => {
    const s = reduceCode(initialCode, {
      type: 'event',
      channel: 'code',
      timestamp: '',
      data: { servers: [null, { language: 'go' }, server], files: [{ diagnostics: 'x' }], runs: [{ success: true }] },
    });
    expect(s.servers).toHaveLength(1);
    expect(s.files).toHaveLength(0);
    expect(s.runs).toHaveLength(0);
    expect(reduceCode(s, { type: 'error', channel: 'code', timestamp: '', data: {} })).toBe(s);
    expect(reduceCode(s, { type: 'event', channel: 'code', timestamp: '', data: null })).toBe(s);
  });
});

describe('view helpers', () => {
  it('groups servers and files with diagnostics by workspace', () => {
    const groups = byWorkspace({
      servers: [{ ...server, workspace: '/w/b' }, server],
      files: [
        { workspace: '/w/app', language: 'go', path: 'a.go', diagnostics: [{ path: 'a.go', line: 1, column: 1, severity: 'warning', message: 'w' }] },
        { workspace: '/w/app', language: 'go', path: 'clean.go', diagnostics: [] },
      ],
      runs: [],
    });
    expect(groups.map((g) => g.workspace)).toEqual(['/w/app', '/w/b']);
    expect(groups[0].files.map((f) => f.path)).toEqual(['a.go']);
    expect(severityCounts(groups[0].files)).toEqual({ errors: 0, warnings: 1, other: 0 });
  });

  it('formats memory, uptime and names', () => {
    expect(formatMemory(0)).toBe('—');
    expect(formatMemory(512 * 1024)).toBe('512 KiB');
    expect(formatMemory(48.5 * 1024 * 1024)).toBe('48.5 MiB');
    expect(formatMemory(300 * 1024 * 1024)).toBe('300 MiB');
    const start = Date.parse('2026-01-01T00:00:00Z');
    expect(uptime(server, start + 5_000)).toBe('5s');
    expect(uptime(server, start + 125_000)).toBe('2m 5s');
    expect(uptime(server, start + 3_725_000)).toBe('1h 2m');
    expect(uptime({ ...server, state: 'ended' }, start + 5_000)).toBe('—');
    expect(workspaceName('/home/me/project/')).toBe('project');
  });
});
