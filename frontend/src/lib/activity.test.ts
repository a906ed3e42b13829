import { describe, expect, it } from 'vitest';
import { argPairs, bucketEntries, callerOf, clientKey, decisionOf, distinct, emptyFilter, filterActivity, isFiltered, matchesText, minuteBuckets, nestActivity } from './activity';
import { epochMinute, initialActivity, reduceActivity } from './reducers';
import type { ActivityEntry } from './types';

function call(tool: string, time: string, extra: Partial<ActivityEntry> = {}): ActivityEntry {
  return { time, tool, session: 'unix-1', transport: 'unix', user: '', level: 'INFO', outcome: 'ok', durationMs: 1, args: '', ...extra };
}

const NOW = Date.parse('2025-03-04T12:30:45Z');

describe('minuteBuckets', () => {
  it('returns 30 one-minute buckets ending with the current minute, oldest first', () => {
    const b = minuteBuckets({}, NOW, 30);
    expect(b).toHaveLength(30);
    expect(new Date(b[29].start).toISOString()).toBe('2025-03-04T12:30:00.000Z');
    expect(new Date(b[0].start).toISOString()).toBe('2025-03-04T12:01:00.000Z');
    expect(b.every((x) => x.count === 0)).toBe(true);
  });

  it('puts calls in the minute they happened; older than the window is left out', () => {
    const entries = [
      call('a', '2025-03-04T12:30:00Z'), // current minute, first second
      call('b', '2025-03-04T12:30:44Z'),
      call('c', '2025-03-04T12:29:59.999Z'), // previous minute, last millisecond
      call('d', '2025-03-04T12:01:00Z'), // oldest bucket
      call('e', '2025-03-04T12:00:59Z'), // just outside 30 minutes
      call('f', 'not a time'),
    ];
    const b = bucketEntries(entries, NOW, 30);
    expect(b[29].count).toBe(2);
    expect(b[28].count).toBe(1);
    expect(b[0].count).toBe(1);
    expect(b.reduce((n, x) => n + x.count, 0)).toBe(4);
  });

  it('matches what the activity reducer counts live', () => {
    const times = ['2025-03-04T12:10:01Z', '2025-03-04T12:10:59Z', '2025-03-04T12:25:00Z', '2025-03-04T12:30:30Z'];
    let s = initialActivity;
    for (const t of times) s = reduceActivity(s, { type: 'event', channel: 'activity', data: call('x', t), timestamp: t });
    expect(minuteBuckets(s.perMinute, NOW)).toEqual(bucketEntries(times.map((t) => call('x', t)), NOW));
    expect(s.perMinute[epochMinute('2025-03-04T12:10:00Z')]).toBe(2);
  });
});

describe('decisionOf', () => {
  it.each<[string, Partial<ActivityEntry>, string, string, string]>([
    ['allowed by the default', { decision: 'allow', rule: 'default policy (allow)' }, 'allowed', 'allowed', ''],
    ['allowed by a rule', { decision: 'allow', rule: 'rule 1 (file_read allow)' }, 'allowed', 'allowed', 'rule 1 (file_read allow)'],
    ['approved on the dashboard', { decision: 'ask', rule: 'rule 2 (exec ask)', approval: 'approved', by: 'dashboard' }, 'approved', 'asked → approved', 'on the dashboard'],
    ['approved in the client', { decision: 'ask', approval: 'approved', by: 'client' }, 'approved', 'asked → approved', 'in the client'],
    ['approved from the tray', { decision: 'ask', approval: 'approved', by: 'tray' }, 'approved', 'asked → approved', 'from the tray'],
    ['declined', { decision: 'ask', approval: 'declined', by: 'tray', outcome: 'error' }, 'declined', 'asked → declined', 'from the tray'],
    ['timed out', { decision: 'ask', approval: 'timed out', by: 'timeout', outcome: 'error' }, 'timed out', 'asked → timed out', 'nobody answered in time'],
    ['nobody could answer', { decision: 'ask', approval: 'unanswerable', by: 'nobody', outcome: 'error' }, 'unanswered', 'asked → unanswered', 'nobody could be asked'],
    ['denied by a rule', { decision: 'deny', rule: 'rule 3 (file_write deny)', outcome: 'error' }, 'denied', 'denied', 'rule 3 (file_write deny)'],
    ['refused: quarantined', { decision: 'allow', refused: true, outcome: 'error', error: 'fixture__greet: server "fixture" is quarantined' }, 'refused', 'refused', ''],
    ['refused after an approval', { decision: 'ask', approval: 'approved', by: 'dashboard', refused: true, outcome: 'error' }, 'refused', 'refused', ''],
    ['a person on the dashboard', { actor: 'dashboard', session: '', transport: 'dashboard' }, 'action', 'by you', 'in the dashboard'],
    ['no policy fields', {}, 'none', '', ''],
  ])('%s', (_, extra, kind, label, detail) => {
    const d = decisionOf(call('t', 't1', extra));
    expect([d.kind, d.label, d.detail]).toEqual([kind, label, detail]);
  });

  it('says in the tooltip which rule asked or denied and why the hub refused', () => {
    expect(decisionOf(call('exec', 't', { decision: 'ask', rule: 'rule 2 (exec ask)', approval: 'approved', by: 'dashboard' })).title).toBe('asked by rule 2 (exec ask); approved on the dashboard');
    expect(decisionOf(call('x', 't', { decision: 'deny', rule: 'rule 3' })).title).toBe('denied by rule 3');
    expect(decisionOf(call('x', 't', { refused: true, error: 'x is held' })).title).toBe('not run: the hub refused it: x is held');
  });

  it('gives each kind a tone', () => {
    const tone = (extra: Partial<ActivityEntry>) => decisionOf(call('t', 't', extra)).tone;
    expect(tone({ decision: 'allow' })).toBe('ok');
    expect(tone({ decision: 'ask', approval: 'approved', by: 'client' })).toBe('ok');
    expect(tone({ decision: 'ask' })).toBe('busy');
    expect(tone({ decision: 'ask', approval: 'declined' })).toBe('bad');
    expect(tone({ decision: 'deny' })).toBe('bad');
    expect(tone({ refused: true })).toBe('bad');
  });
});

describe('callerOf', () => {
  it('shows the client by name and transport, the session id in the tooltip', () => {
    expect(callerOf(call('t', 't', { client: 'claude-code', session: 'unix-7', transport: 'unix' }))).toEqual({
      name: 'claude-code',
      transport: 'unix',
      title: 'session unix-7',
      person: false,
    });
  });
  it('falls back to the session id for a client that gave no name', () => {
    const c = callerOf(call('t', 't', { session: 'tcp-3', transport: 'tcp' }));
    expect([c.name, c.transport, c.title]).toEqual(['tcp-3', 'tcp', 'session tcp-3 (the client gave no name)']);
  });
  it('names the place of a person\'s action', () => {
    const c = callerOf(call('process_stop', 't', { actor: 'tray', session: '', transport: 'tray' }));
    expect([c.name, c.transport, c.person]).toEqual(['tray', '', true]);
    expect(clientKey(call('t', 't', { actor: 'tray' }))).toBe('tray');
  });
});

describe('argPairs', () => {
  const sha = 'ab'.repeat(32);
  it('lists the shown values by name, then the hidden ones with their sha256 shortened', () => {
    const e = call('file_write', 't', {
      values: { path: 'src/a.go', content: `<5 bytes sha256=${sha}>`, api_key: '<redacted>', limit: '3', opts: `<redacted 7 bytes of JSON sha256=${sha}>` },
    });
    expect(argPairs(e)).toEqual([
      { name: 'limit', value: '3', hidden: false },
      { name: 'path', value: 'src/a.go', hidden: false },
      { name: 'api_key', value: '<redacted>', hidden: true },
      { name: 'content', value: '<5 bytes sha256=abababababab…>', hidden: true },
      { name: 'opts', value: '<redacted 7 bytes of JSON sha256=abababababab…>', hidden: true },
    ]);
  });
  it('is empty for an entry without values (the view shows the summary)', () => {
    expect(argPairs(call('file_read', 't', { args: 'path="a"' }))).toEqual([]);
  });
});

describe('filterActivity', () => {
  const entries = [
    call('file_read', 't1', { session: 'unix-1', client: 'claude-code', decision: 'allow', values: { path: 'src/Main.go' } }),
    call('process_start', 't2', { session: 'tcp-2', client: 'cursor', transport: 'tcp', level: 'SECURITY', args: 'command=make', decision: 'ask', approval: 'approved', by: 'dashboard', values: { command: 'make' } }),
    call('file_read', 't3', { session: 'tcp-2', client: 'cursor', transport: 'tcp', outcome: 'error', error: 'path escapes the workspace', decision: 'allow', values: { path: '../etc/passwd' } }),
    call('file_write', 't4', { session: 'unix-1', client: 'claude-code', level: 'SECURITY', decision: 'deny', rule: 'rule 4 (file_write deny)', outcome: 'error', values: { path: 'docs/plan.md', content: '<5 bytes sha256=ab>' } }),
    call('servers__greet', 't5', { session: 'unix-9', decision: 'allow', refused: true, outcome: 'error', error: 'server "fixture" is quarantined' }),
  ];

  it.each([
    [{ tool: '', client: '', level: '' }, ['t5', 't4', 't3', 't2', 't1']],
    [{ tool: 'file_read', client: '', level: '' }, ['t3', 't1']],
    [{ tool: '', client: 'cursor', level: '' }, ['t3', 't2']],
    [{ tool: '', client: 'unix-9', level: '' }, ['t5']], // unnamed: by session id
    [{ tool: '', client: '', level: 'SECURITY' }, ['t4', 't2']],
    [{ tool: 'file_read', client: 'cursor', level: 'INFO' }, ['t3']],
    [{ tool: '', client: '', level: '', text: 'ESCAPES' }, ['t3']], // the error
    [{ tool: '', client: '', level: '', text: 'make' }, ['t2']], // a value
    [{ tool: '', client: '', level: '', text: 'main.GO' }, ['t1']], // a path, any case
    [{ tool: '', client: '', level: '', text: 'docs/plan' }, ['t4']],
    [{ tool: '', client: '', level: '', text: 'Claude' }, ['t4', 't1']], // the client's name
    [{ tool: '', client: '', level: '', text: 'tcp' }, ['t3', 't2']], // the transport
    [{ tool: '', client: '', level: '', text: 'approved' }, ['t2']], // the decision
    [{ tool: '', client: '', level: '', text: 'on the dashboard' }, ['t2']], // who answered
    [{ tool: '', client: '', level: '', text: 'denied' }, ['t4']],
    [{ tool: '', client: '', level: '', text: 'rule 4' }, ['t4']],
    [{ tool: '', client: '', level: '', text: 'refused' }, ['t5']],
    [{ tool: '', client: '', level: '', text: '  WRITE ' }, ['t4']], // the tool, trimmed
    [{ tool: 'nope', client: '', level: '' }, []],
  ])('filter %j gives %j, newest first', (f, want) => {
    expect(filterActivity(entries, f).map((e) => e.time)).toEqual(want);
  });

  it('does not find what the summary hides: the filter sees only what is shown', () => {
    // The hub never sends a hidden value; the filter matches the summary's size and hash form.
    expect(matchesText(entries[3], 'sha256=ab')).toBe(true);
    expect(matchesText(entries[3], 'hunter2')).toBe(false);
  });

  it('isFiltered ignores blank text', () => {
    expect(isFiltered(emptyFilter)).toBe(false);
    expect(isFiltered({ ...emptyFilter, text: '   ' })).toBe(false);
    expect(isFiltered({ ...emptyFilter, client: 'cursor' })).toBe(true);
  });

  it('returns at most limit rows, the newest ones', () => {
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    const many = Array.from({ length: 800 }, (_, i) => call('t', at(i)));
    const rows = filterActivity(many, emptyFilter, 500);
    expect(rows).toHaveLength(500);
    expect(rows[0].time).toBe(at(799));
    expect(rows[499].time).toBe(at(300));
  });

  it('orders rows by when each call arrived, not when it finished', () => {
    // The feed gets a call when it ends: one that waited for approval comes after later calls.
    const feed = [
      call('fast', '2026-11-25T10:00:02Z'),
      call('approved', '2026-11-25T10:00:00Z'),
      call('later', '2026-11-25T10:00:03Z'),
    ];
    expect(filterActivity(feed, emptyFilter).map((e) => e.tool)).toEqual(['later', 'fast', 'approved']);
  });

  it('distinct lists the values for the drop-downs', () => {
    expect(distinct(entries, 'tool')).toEqual(['file_read', 'file_write', 'process_start', 'servers__greet']);
    expect(distinct(entries, 'client')).toEqual(['claude-code', 'cursor', 'unix-9']);
  });
});

describe('nestActivity', () => {
  it("puts a script's inner calls under its run, oldest first, and leaves the rest in place", () => {
    const run = call('script_run', '2025-03-04T12:00:00Z', { callId: 'c7' });
    const a = call('file_read', '2025-03-04T12:00:01Z', { parent: 'c7' });
    const b = call('file_write', '2025-03-04T12:00:02Z', { parent: 'c7', callId: 'c9' });
    const later = call('exec', '2025-03-04T12:01:00Z', { callId: 'c10' });
    const orphan = call('git_status', '2025-03-04T11:00:00Z', { parent: 'c1' });
    const rows = filterActivity([run, a, b, later, orphan], emptyFilter);
    expect(nestActivity(rows).map((r) => [r.e.tool, r.depth])).toEqual([
      ['exec', 0],
      ['script_run', 0],
      ['file_read', 1],
      ['file_write', 1],
      ['git_status', 1],
    ]);
  });
});
