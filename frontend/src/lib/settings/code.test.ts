import { describe, expect, it } from 'vitest';
import { sampleSettings } from '../../test/settings';
import { codeChanged, codeForm, codeInput, idleError, splitCommand } from './code';

const s = sampleSettings({
  code: {
    idle: '',
    idleDefault: '10m0s',
    idleRunning: '10m0s',
    servers: [
      { language: 'go', command: ['/opt/gopls/bin/gopls', '-remote=auto'], default: 'gopls', running: [], found: '/opt/gopls/bin/gopls -remote=auto' },
      { language: 'python', command: [], default: 'pyright-langserver --stdio', running: [], found: '', error: 'not found' },
    ],
  },
});

describe('settings/code', () => {
  it('fills the form from the file and saves every language, empty meaning the default', () => {
    const f = codeForm(s);
    expect(f).toEqual({ idle: '', servers: { go: '/opt/gopls/bin/gopls -remote=auto', python: '' } });
    f.idle = ' 5m ';
    f.servers.python = '  basedpyright-langserver   --stdio ';
    expect(codeInput(f)).toEqual({ idle: '5m', servers: { go: ['/opt/gopls/bin/gopls', '-remote=auto'], python: ['basedpyright-langserver', '--stdio'] } });
  });

  it('splits a command line at blanks', () => {
    expect(splitCommand('')).toEqual([]);
    expect(splitCommand('  gopls\t-rpc.trace  ')).toEqual(['gopls', '-rpc.trace']);
  });

  it('tells a change from the saved settings, blanks aside', () => {
    const f = codeForm(s);
    expect(codeChanged(f, s)).toBe(false);
    f.servers.go = ' /opt/gopls/bin/gopls   -remote=auto ';
    expect(codeChanged(f, s)).toBe(false);
    f.servers.python = 'pylsp';
    expect(codeChanged(f, s)).toBe(true);
    expect(codeChanged({ ...codeForm(s), idle: '1h' }, s)).toBe(true);
  });

  it('catches an idle time that is no duration, naming the key', () => {
    for (const ok of ['', '0', '0s', '10m', '1h30m', '1.5h', '90s']) expect(idleError(ok)).toBe('');
    for (const bad of ['soon', '10', '-5m', '10 m', '5min']) expect(idleError(bad)).toContain('code.idle:');
  });
});
