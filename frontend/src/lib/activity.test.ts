import { describe, expect, it } from 'vitest';
import { bucketEntries, distinct, emptyFilter, filterActivity, minuteBuckets } from './activity';
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

describe('filterActivity', () => {
  const entries = [
    call('file_read', 't1', { session: 'unix-1' }),
    call('process_start', 't2', { session: 'tcp-2', level: 'SECURITY', args: 'command=make' }),
    call('file_read', 't3', { session: 'tcp-2', outcome: 'error', error: 'path escapes the workspace' }),
    call('file_write', 't4', { session: 'unix-1', level: 'SECURITY' }),
  ];

  it.each([
    [{ tool: '', session: '', level: '' }, ['t4', 't3', 't2', 't1']],
    [{ tool: 'file_read', session: '', level: '' }, ['t3', 't1']],
    [{ tool: '', session: 'tcp-2', level: '' }, ['t3', 't2']],
    [{ tool: '', session: '', level: 'SECURITY' }, ['t4', 't2']],
    [{ tool: 'file_read', session: 'tcp-2', level: 'INFO' }, ['t3']],
    [{ tool: '', session: '', level: '', text: 'ESCAPES' }, ['t3']],
    [{ tool: '', session: '', level: '', text: 'make' }, ['t2']],
    [{ tool: 'nope', session: '', level: '' }, []],
  ])('filter %j gives %j, newest first', (f, want) => {
    expect(filterActivity(entries, f).map((e) => e.time)).toEqual(want);
  });

  it('returns at most limit rows, the newest ones', () => {
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    const many = Array.from({ length: 800 }, (_, i) => call('t', at(i)));
    const rows = filterActivity(many, { tool: '', session: '', level: '' }, 500);
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
    expect(distinct(entries, 'tool')).toEqual(['file_read', 'file_write', 'process_start']);
    expect(distinct(entries, 'session')).toEqual(['tcp-2', 'unix-1']);
  });
});
