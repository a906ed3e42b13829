import { describe, expect, it } from 'vitest';
import { move } from './common';
import { argsText, decisionTone, newRule, parseArgs, policyFields, policyForm, policyInput, testArgs, testInput, toolNameOptions } from './policy';
import { sampleSettings } from '../../test/settings';

describe('policy', () => {
  it('fills the form from GET /api/settings', () => {
    expect(policyForm(sampleSettings())).toEqual({
      default: 'allow',
      askTimeout: '',
      rules: [
        { tool: 'file_delete', args: '', client: '', action: 'ask', origin: 1 },
        { tool: 'exec', args: 'args=-rf *\ncommand=rm*', client: 'cursor', action: 'deny', origin: 2 },
      ],
      roots: '~/src\n/srv',
    });
  });

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

  it('has an input for the default, the timeout, the roots and each rule', () => {
    expect(policyFields(policyForm(sampleSettings()))).toEqual(['policy.default', 'policy.ask_timeout', 'roots.allow', 'policy.rules[1]', 'policy.rules[2]']);
  });

  it('tones decisions', () => {
    expect([decisionTone('allow'), decisionTone('ask'), decisionTone('deny'), decisionTone('')]).toEqual(['ok', 'busy', 'bad', 'idle']);
  });
});

describe('a test call', () => {
  it('reads the arguments as a JSON object', () => {
    expect(testArgs('')).toEqual({ value: undefined });
    expect(testArgs('{"command": "rm", "args": ["-rf", "x"]}')).toEqual({ value: { command: 'rm', args: ['-rf', 'x'] } });
    for (const bad of ['[1]', 'rm -rf', '"x"', 'null']) expect(testArgs(bad)).toMatchObject({ error: { field: 'args' } });
  });

  it('is decided against the rules as edited; a rule that does not parse is named first, then the arguments', () => {
    const f = policyForm(sampleSettings());
    expect(testInput(f, { tool: ' exec ', args: '{"command": "rm"}', client: ' cursor ' })).toEqual({
      value: { policy: (policyInput(f) as { value: unknown }).value, tool: 'exec', args: { command: 'rm' }, client: 'cursor' },
    });
    expect(testInput(f, { tool: 'exec', args: '', client: '' })).toMatchObject({ value: { args: undefined } });
    expect(testInput(f, { tool: 'exec', args: 'rm', client: '' })).toMatchObject({ error: { field: 'args' } });
    f.rules[0].args = 'nonsense';
    expect(testInput(f, { tool: 'exec', args: 'rm', client: '' })).toMatchObject({ error: { field: 'policy.rules[1].args' } });
  });
});

describe('toolNameOptions', () => {
  it('offers every toolset tool, the servers tools as clients see them and a glob per server, sorted, once each', () => {
    const toolsets = [{ tools: ['file_read', 'exec'] }, { tools: [] }, { tools: ['fixture__greet', 'exec'] }];
    const servers = [
      { name: 'fixture', tools: [{ exposed: 'fixture__greet' }, { exposed: 'fixture__sleep' }] },
      { name: 'waiting', tools: null },
    ];
    expect(toolNameOptions(toolsets, servers)).toEqual(['exec', 'file_read', 'fixture__*', 'fixture__greet', 'fixture__sleep', 'waiting__*']);
  });
  it('is empty with nothing known', () => {
    expect(toolNameOptions([], [])).toEqual([]);
  });
});
