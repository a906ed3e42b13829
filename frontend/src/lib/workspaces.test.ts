import { describe, expect, it } from 'vitest';
import type { SessionInfo } from './types';
import { entryKey, identityLabel, rootTone, workspaceAction, workspaceEntries, workspaceSource } from './workspaces';

const base: SessionInfo = { id: 'unix-1', transport: 'unix', clientName: 'c', clientVersion: '1', peer: '', connectedAt: '', calls: 0 };

describe('workspaceSource', () => {
  it('labels where a workspace came from', () => {
    expect(workspaceSource('root')).toBe('MCP root');
    expect(workspaceSource('client')).toBe("the client's project");
    expect(workspaceSource('relay')).toBe('connect directory');
    expect(workspaceSource('hub')).toBe('hub workspace');
    expect(workspaceSource(undefined)).toBe('');
    expect(workspaceSource('later')).toBe('later'); // a newer hub's value is shown, not hidden
  });
});

describe('workspaceAction', () => {
  it('offers Grant where consent is missing and Revoke where the session may work', () => {
    expect(workspaceAction('pending')).toBe('grant');
    expect(workspaceAction('declined')).toBe('grant');
    expect(workspaceAction('granted')).toBe('revoke');
    expect(workspaceAction('approved')).toBe('revoke');
    expect(workspaceAction('invalid')).toBeNull();
    expect(workspaceAction('')).toBeNull();
  });

  it('colours usable green, refused red, waiting amber', () => {
    expect(['granted', 'approved', 'declined', 'invalid', 'pending', 'x'].map(rootTone)).toEqual(['ok', 'ok', 'bad', 'bad', 'busy', 'idle']);
  });
});

describe('workspaceEntries', () => {
  it('lists roots in the client order, then the relay directory, marking the workspace', () => {
    const s: SessionInfo = {
      ...base,
      workspace: '/srv/a',
      workspaceFrom: 'root',
      roots: [
        { uri: 'file:///srv/a', dir: '/srv/a', name: 'a', status: 'pending', detail: '/srv/a is outside your home directory' },
        { uri: 'https://example.com/x', status: 'invalid', detail: 'not a file:// URI' },
        { uri: 'file:///home/u/b', dir: '/home/u/b', status: 'granted', detail: 'a project in your home directory' },
      ],
      relay: { uri: 'file:///srv/a', dir: '/srv/a', status: 'declined', detail: 'revoked on the dashboard' },
    };
    const got = workspaceEntries(s);
    expect(got.map((e) => [e.kind, e.label, e.status, e.current, e.action])).toEqual([
      ['root', '/srv/a', 'pending', true, 'grant'],
      ['root', 'https://example.com/x', 'invalid', false, null],
      ['root', '/home/u/b', 'granted', false, 'revoke'],
      ['relay', '/srv/a', 'declined', false, 'grant'], // same directory, but the workspace came from the root
    ]);
    expect(got[0].detail).toContain('outside your home');
    expect(got[1].dir).toBe('');
    expect(new Set(got.map(entryKey)).size).toBe(4);
  });

  it('marks the relay directory as the workspace when it came from there', () => {
    const s: SessionInfo = {
      ...base,
      workspace: '/home/u/site',
      workspaceFrom: 'relay',
      relay: { uri: 'file:///home/u/site', dir: '/home/u/site', status: 'granted', detail: 'the directory the client started in' },
    };
    expect(workspaceEntries(s)).toEqual([
      { kind: 'relay', dir: '/home/u/site', label: '/home/u/site', name: '', status: 'granted', detail: 'the directory the client started in', current: true, action: 'revoke' },
    ]);
  });

  it('keeps two roots that name one directory (the view keys them by position)', () => {
    const s: SessionInfo = {
      ...base,
      workspace: '/srv/a',
      workspaceFrom: 'root',
      roots: [
        { uri: 'file:///srv/a', dir: '/srv/a', status: 'pending' },
        { uri: 'file:///srv/a/', dir: '/srv/a', status: 'pending' },
      ],
    };
    expect(workspaceEntries(s).map((e) => [e.label, e.current])).toEqual([
      ['/srv/a', true],
      ['/srv/a', true],
    ]);
  });

  it('has nothing to list for a client that works in the hub workspace', () => {
    expect(workspaceEntries({ ...base, workspace: '/w', workspaceFrom: 'hub' })).toEqual([]);
    expect(workspaceEntries(base)).toEqual([]);
  });
});

describe('identityLabel', () => {
  it('names a client token by its client and an OAuth grant as a grant', () => {
    expect(identityLabel('cursor')).toBe('token: cursor');
    expect(identityLabel('grant:gN4j34jNS90h')).toBe('OAuth grant gN4j34jNS90h');
  });
});
