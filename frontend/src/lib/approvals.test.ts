import { describe, expect, it } from 'vitest';
import { approvalTitle, initialApprovals, reduceApprovals, type Approval } from './approvals';

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

  it('titles calls and roots', () => {
    expect(approvalTitle(a1)).toBe('run file_delete');
    expect(approvalTitle(a2)).toBe('use /home/u/p as its workspace');
  });
});
