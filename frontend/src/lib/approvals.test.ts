import { describe, expect, it } from 'vitest';
import { approvalTitle, grantedScopes, initialApprovals, recentWithdrawn, reduceApprovals, scopesText, WithdrawnShownMs, type Approval } from './approvals';

const a1: Approval = { id: 'a1', kind: 'call', tool: 'file_delete', arguments: 'path: x', client: 'c', requestedAt: '', expiresAt: '' };
const a2: Approval = { id: 'a2', kind: 'root', root: '/home/u/p', client: 'c', requestedAt: '', expiresAt: '' };
const ev = (data: unknown) => ({ type: 'event', channel: 'approvals', data, timestamp: '' });

describe('reduceApprovals', () => {
  it('takes the snapshot, adds, resolves and follows policy reloads', () => {
    let s = reduceApprovals(initialApprovals, { type: 'snapshot', channel: 'approvals', data: { approvals: [a1], policy: { path: '/c.toml', default: 'allow', askTimeout: '2m0s', rules: 1, rootsAllow: [], loadedAt: '' } }, timestamp: '' });
    expect(s.approvals.map((a) => a.id)).toEqual(['a1']);
    expect(s.policy?.rules).toBe(1);
    s = reduceApprovals(s, ev({ kind: 'added', approval: a2 }));
    expect(s.approvals.map((a) => a.id)).toEqual(['a1', 'a2']);
    s = reduceApprovals(s, ev({ kind: 'resolved', approval: a1, outcome: { approved: true, by: 'dashboard' } }));
    expect(s.approvals.map((a) => a.id)).toEqual(['a2']);
    const same = reduceApprovals(s, ev({ kind: 'resolved', approval: a1 }));
    expect(same).toBe(s);
    s = reduceApprovals(s, ev({ kind: 'policy', policy: { path: '/c.toml', default: 'deny', askTimeout: '2m0s', rules: 1, rootsAllow: [], loadedAt: '', error: 'policy.default: bad' } }));
    expect(s.policy?.error).toBe('policy.default: bad');
    expect(s.approvals).toHaveLength(1);
  });

  it('remembers questions withdrawn because their client went away, for a while', () => {
    let s = reduceApprovals(initialApprovals, ev({ kind: 'added', approval: { ...a1, session: 'unix-3' } }));
    const at = '2026-11-25T10:00:00Z';
    s = reduceApprovals(s, { type: 'event', channel: 'approvals', timestamp: at,
      data: { kind: 'resolved', approval: { ...a1, session: 'unix-3' }, outcome: { approved: false, by: '', reason: "withdrawn: the client's connection closed", dismissed: true } } });
    expect(s.approvals).toHaveLength(0);
    expect(s.withdrawn.map((w) => [w.approval.session, w.reason])).toEqual([['unix-3', "withdrawn: the client's connection closed"]]);
    const t = Date.parse(at);
    expect(recentWithdrawn(s, t + 1000)).toHaveLength(1);
    expect(recentWithdrawn(s, t + WithdrawnShownMs + 1)).toHaveLength(0);
    // An answered question is not "withdrawn".
    s = reduceApprovals(s, ev({ kind: 'added', approval: a2 }));
    s = reduceApprovals(s, ev({ kind: 'resolved', approval: a2, outcome: { approved: true, by: 'dashboard' } }));
    expect(s.withdrawn).toHaveLength(1);
  });

  it('titles calls and roots', () => {
    expect(approvalTitle(a1)).toBe('run file_delete');
    expect(approvalTitle(a2)).toBe('use /home/u/p as its workspace');
  });
});

describe('client authorizations (OAuth)', () => {
  it('titles a client by its device, renders scopes and computes what Allow grants', () => {
    expect(approvalTitle({ id: 'c', kind: 'client', client: 'x', device: '10.0.0.5', requestedAt: '', expiresAt: '' })).toBe('use this hub from 10.0.0.5');
    expect(scopesText(['files', 'web'])).toBe('files, web');
    expect(scopesText(['files', 'readonly'])).toBe('files (read-only)');
    expect(scopesText([])).toBe('no toolset');
    expect(grantedScopes({ files: true, process: false, web: true }, false)).toEqual(['files', 'web']);
    expect(grantedScopes({ files: true }, true)).toEqual(['files', 'readonly']);
    // Read-only alone grants nothing: the user must leave a toolset ticked.
    expect(grantedScopes({ files: false }, true)).toEqual([]);
  });
});
