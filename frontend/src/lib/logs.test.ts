import { describe, expect, it } from 'vitest';
import {
  attrText,
  auditQuery,
  auditRows,
  callerLabel,
  emptyAuditFilter,
  entryDetails,
  entryKey,
  filterHubLog,
  globRegExp,
  initialHubLog,
  isFiltered,
  keysOf,
  levelRank,
  levelTone,
  logPane,
  matchesAudit,
  reduceHubLog,
  stampText,
  type AuditFilter,
} from './logs';
import type { ActivityEntry, HubLogRecord, HubMessage } from './types';

function entry(tool: string, over: Partial<ActivityEntry> = {}): ActivityEntry {
  return {
    time: `2026-11-25T09:00:00.${String(tool.length).padStart(3, '0')}000001Z`,
    tool,
    session: 'unix-1',
    client: 'claude-code',
    transport: 'unix',
    user: 'u',
    level: 'INFO',
    outcome: 'ok',
    durationMs: 1.5,
    args: 'path="a.txt"',
    decision: 'allow',
    rule: 'default policy (allow)',
    ...over,
  };
}

const f = (over: Partial<AuditFilter>): AuditFilter => ({ ...emptyAuditFilter, ...over });

describe('audit filter', () => {
  it('builds the API query from the filter, trimmed', () => {
    expect(auditQuery(f({ client: ' cursor ', tool: 'file_', decision: 'deny' }), 'k:1', 50)).toEqual({
      client: 'cursor',
      tool: 'file_',
      decision: 'deny',
      outcome: '',
      limit: 50,
      before: 'k:1',
    });
    expect(isFiltered(emptyAuditFilter)).toBe(false);
    expect(isFiltered(f({ tool: '  ' }))).toBe(false);
    expect(isFiltered(f({ outcome: 'error' }))).toBe(true);
  });

  it.each([
    ['file_*', 'file_write', true],
    ['file_*', 'dir_list', false],
    ['*__greet', 'fixture__greet', true],
    ['file_?ead', 'file_read', true],
    ['file_[rw]*', 'file_write', true],
    ['file_[!rw]*', 'file_write', false],
    ['file_[^rw]*', 'file_delete', true],
    ['a.b', 'axb', false],
  ])('glob %s against %s: %s (like Go path.Match)', (glob, name, want) => {
    expect(globRegExp(glob)?.test(name)).toBe(want);
  });

  it('a malformed glob matches nothing', () => {
    expect(globRegExp('file_[x')).toBeNull();
    expect(matchesAudit(entry('file_x'), f({ tool: 'file_[x' }))).toBe(false);
  });

  it.each<[string, Partial<AuditFilter>, Partial<ActivityEntry>, boolean]>([
    ['no filter', {}, {}, true],
    ['client by name, any case', { client: 'Claude-Code' }, {}, true],
    ['client by session id', { client: 'unix-1' }, {}, true],
    ['another client', { client: 'cursor' }, {}, false],
    ['tool prefix', { tool: 'file_w' }, {}, true],
    ['tool prefix that does not match', { tool: 'dir_' }, {}, false],
    ['decision', { decision: 'deny' }, { decision: 'deny' }, true],
    ['decision that differs', { decision: 'deny' }, {}, false],
    ['no decision recorded', { decision: 'allow' }, { decision: undefined }, false],
    ['outcome', { outcome: 'error' }, { outcome: 'error' }, true],
    ['outcome that differs', { outcome: 'started' }, {}, false],
  ])('matches like the hub: %s', (_name, filter, over, want) => {
    expect(matchesAudit(entry('file_write', over), f(filter))).toBe(want);
  });
});

describe('audit rows', () => {
  const old1 = entry('file_read');
  const old2 = entry('dir_list');
  const loadedFeed = [old2, old1];
  const page = [old1, old2]; // newest written first

  it('lists the page; calls that arrived since, matching the filter, come first, newest first', () => {
    const seen = keysOf(loadedFeed);
    const n1 = entry('exec', { time: '2026-11-25T09:01:00Z' });
    const n2 = entry('file_write', { time: '2026-11-25T09:02:00Z', decision: 'deny', outcome: 'error' });
    const feed = [...loadedFeed, n1, n2];
    const rows = auditRows(page, feed, seen, emptyAuditFilter);
    expect(rows.map((r) => [r.entry.tool, r.live])).toEqual([
      ['file_write', true],
      ['exec', true],
      ['file_read', false],
      ['dir_list', false],
    ]);
    expect(auditRows(page, feed, seen, f({ decision: 'deny' })).map((r) => r.entry.tool)).toEqual(['file_write', 'file_read', 'dir_list']);
  });

  it('an entry both in a page and in the feed is listed once (a reload after it arrived)', () => {
    const n = entry('exec', { time: '2026-11-25T09:01:00Z' });
    const rows = auditRows([n, ...page], [...loadedFeed, { ...n }], keysOf(loadedFeed), emptyAuditFilter);
    expect(rows.map((r) => r.entry.tool)).toEqual(['exec', 'file_read', 'dir_list']);
    expect(rows[0].live).toBe(false);
  });

  it('keys tell apart a call started and finished, and a dashboard action at the same time', () => {
    const started = entry('exec', { callId: 'c1', outcome: 'started' });
    const done = entry('exec', { callId: 'c1', outcome: 'ok' });
    const action = entry('exec', { actor: 'dashboard' });
    expect(new Set([entryKey(started), entryKey(done), entryKey(action)]).size).toBe(3);
  });

  it('shows who called, and the details of an expanded row in reading order', () => {
    expect(callerLabel(entry('x'))).toBe('claude-code');
    expect(callerLabel(entry('x', { client: '' }))).toBe('unix-1');
    expect(callerLabel(entry('x', { actor: 'tray' }))).toBe('tray');
    const d = entryDetails(
      entry('file_write', { decision: 'ask', rule: 'rule 1 (file_write ask)', approval: 'declined', by: 'dashboard', error: 'not run', callId: 'c4' }),
    );
    expect(d.map((x) => `${x.label}: ${x.value}`)).toEqual([
      'arguments: path="a.txt"',
      'error: not run',
      'policy: ask by rule 1 (file_write ask)',
      'approval: declined by dashboard',
      'client: claude-code',
      'session: unix-1',
      'transport: unix',
      'user: u',
      'call: c4',
      'time: 2026-11-25T09:00:00.010000001Z',
    ]);
  });

  it('writes the date for days other than today', () => {
    const now = Date.parse('2026-11-25T12:00:00');
    expect(stampText('2026-11-25T09:00:05', now)).toBe('09:00:05');
    expect(stampText('2026-11-24T09:00:05', now)).toBe('2026-11-24 09:00:05');
    expect(stampText('0001-01-01T00:00:00Z', now)).toBe('');
  });

  it('reads the pane from the route', () => {
    expect(logPane('hub')).toBe('hub');
    expect(logPane('')).toBe('audit');
    expect(logPane('nonsense')).toBe('audit');
  });
});

describe('hub log', () => {
  const rec = (seq: number, level: string, msg: string, attrs: { key: string; value: string }[] = []): HubLogRecord => ({
    seq,
    time: '2026-11-25T09:00:00Z',
    level,
    msg,
    attrs,
  });
  const msg = (type: string, data: unknown): HubMessage => ({ type, channel: 'hublog', data, timestamp: '' }) as HubMessage;

  it('takes the snapshot, then events past it; repeats and junk are ignored', () => {
    let s = reduceHubLog(initialHubLog, msg('snapshot', { records: [rec(1, 'INFO', 'hub started'), rec(2, 'INFO', 'listening')], file: '/d/logs/hub.log' }));
    expect(s.file).toBe('/d/logs/hub.log');
    expect(s.lastSeq).toBe(2);
    const same = s;
    s = reduceHubLog(s, msg('event', rec(2, 'INFO', 'listening')));
    expect(s).toBe(same);
    s = reduceHubLog(s, msg('event', { nope: true }));
    expect(s).toBe(same);
    s = reduceHubLog(s, msg('event', rec(3, 'WARN', 'servers: graph exited; restarting')));
    expect(s.records.map((r) => r.seq)).toEqual([1, 2, 3]);
    // A reconnect's snapshot replaces what was kept.
    s = reduceHubLog(s, msg('snapshot', { records: [rec(3, 'WARN', 'x'), rec(4, 'INFO', 'y')], file: '/d/logs/hub.log' }));
    expect(s.records.map((r) => r.seq)).toEqual([3, 4]);
    expect(s.lastSeq).toBe(4);
  });

  it('keeps the newest 1000', () => {
    let s = reduceHubLog(initialHubLog, msg('snapshot', { records: [], file: '' }));
    for (let i = 1; i <= 1005; i++) s = reduceHubLog(s, msg('event', rec(i, 'INFO', `m${i}`)));
    expect(s.records).toHaveLength(1000);
    expect(s.records[0].seq).toBe(6);
  });

  it('orders and colours slog levels', () => {
    expect(levelRank('DEBUG')).toBe(-4);
    expect(levelRank('INFO+2')).toBe(2);
    expect(levelRank('WARN')).toBe(4);
    expect(levelRank('error')).toBe(8);
    expect(levelTone('ERROR')).toBe('bad');
    expect(levelTone('WARN')).toBe('busy');
    expect(levelTone('INFO')).toBe('idle');
  });

  it('filters by level and text, newest first; attributes read like slog text', () => {
    const records = [
      rec(1, 'INFO', 'hub started', [{ key: 'version', value: 'v1' }]),
      rec(2, 'WARN', 'servers: graph exited; restarting', [
        { key: 'server', value: 'graph' },
        { key: 'err', value: 'start: exit status 3' },
      ]),
      rec(3, 'ERROR', 'transport stopped'),
      rec(4, 'INFO', 'servers: graph is running', [{ key: 'info', value: '' }]),
    ];
    expect(filterHubLog(records, 'INFO', '').map((r) => r.seq)).toEqual([4, 3, 2, 1]);
    expect(filterHubLog(records, 'WARN', '').map((r) => r.seq)).toEqual([3, 2]);
    expect(filterHubLog(records, 'INFO', 'GRAPH').map((r) => r.seq)).toEqual([4, 2]);
    expect(filterHubLog(records, 'INFO', 'exit status').map((r) => r.seq)).toEqual([2]);
    expect(filterHubLog(records, 'INFO', '', 2).map((r) => r.seq)).toEqual([4, 3]);
    expect(attrText(records[1])).toBe('server=graph err="start: exit status 3"');
    expect(attrText(records[3])).toBe('info=""');
  });
});
