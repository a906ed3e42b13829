import { describe, expect, it } from 'vitest';
import { isPending, lines, move, overridesFor, removeAt, savedText } from './common';
import { sampleSettings } from '../../test/settings';

describe('list editing', () => {
  it('moves and removes within bounds', () => {
    expect(move([1, 2, 3], 0, 1)).toEqual([2, 1, 3]);
    expect(move([1, 2, 3], 2, -2)).toEqual([3, 1, 2]);
    const list = [1, 2];
    expect(move(list, 0, -1)).toBe(list);
    expect(move(list, 1, 1)).toBe(list);
    expect(removeAt([1, 2, 3], 1)).toEqual([1, 3]);
  });

  it('reads a textarea one trimmed entry per line, blank lines skipped', () => {
    expect(lines(' a \n\n b\n  \n')).toEqual(['a', 'b']);
    expect(lines('')).toEqual([]);
  });
});

describe('display', () => {
  it('overrides, pending sections and the saved line', () => {
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
});
