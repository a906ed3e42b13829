import { describe, expect, it } from 'vitest';
import {
  LIMITS,
  epochMinute,
  initialActivity,
  initialBridge,
  initialBuildLog,
  initialBuilds,
  initialChat,
  initialIDEActivity,
  initialIDESessions,
  initialPlan,
  initialProcesses,
  initialSessions,
  initialTransports,
  reduceActivity,
  reduceBridge,
  reduceBuildLog,
  reduceBuilds,
  reduceChat,
  reduceIDEActivity,
  reduceIDESessions,
  reducePlan,
  reduceProcesses,
  reduceSessions,
  reduceTodos,
  initialTodos,
  reduceTransports,
  type Reducer,
} from './reducers';
import type { ActivityEntry, HubMessage, ProcessInfo, SessionInfo } from './types';

const snap = (channel: string, data: unknown): HubMessage => ({ type: 'snapshot', channel, data, timestamp: '2025-01-01T00:00:00Z' });
const ev = (channel: string, data: unknown, timestamp = '2025-01-01T00:00:00Z'): HubMessage => ({ type: 'event', channel, data, timestamp });

function run<S>(reducer: Reducer<S>, initial: S, msgs: HubMessage[]): S {
  return msgs.reduce(reducer, initial);
}

function session(id: string, calls = 0): SessionInfo {
  return { id, transport: 'unix', clientName: 'claude', clientVersion: '1', peer: 'pid 1', connectedAt: '2025-01-01T00:00:00Z', calls };
}

function proc(id: string, status = 'running'): ProcessInfo {
  return { id, command: 'sh', args: ['-c', 'true'], dir: '/w', status, pid: 42, exitCode: 0, startedAt: '2025-01-01T00:00:00Z', duration: 0, pty: false, outputBytes: 0, droppedBytes: 0 };
}

function call(tool: string, time: string, extra: Partial<ActivityEntry> = {}): ActivityEntry {
  return { time, tool, session: 'unix-1', transport: 'unix', user: '', level: 'INFO', outcome: 'ok', durationMs: 3, args: '', ...extra };
}

describe('every reducer', () => {
  const all: [string, Reducer<any>, unknown][] = [
    ['sessions', reduceSessions, initialSessions],
    ['todos', reduceTodos, initialTodos],
    ['activity', reduceActivity, initialActivity],
    ['transports', reduceTransports, initialTransports],
    ['processes', reduceProcesses, initialProcesses],
    ['ide:bridge', reduceBridge, initialBridge],
    ['ide:sessions', reduceIDESessions, initialIDESessions],
    ['chat:s', reduceChat, initialChat],
    ['plan:s', reducePlan, initialPlan],
    ['ide:builds', reduceBuilds, initialBuilds],
    ['build:b', reduceBuildLog, initialBuildLog],
    ['ide:activity', reduceIDEActivity, initialIDEActivity],
  ];
  it.each(all)('%s ignores subscribed/pong/error and malformed events', (channel, reducer, initial) => {
    let s = initial;
    for (const m of [
      { type: 'subscribed', channel, timestamp: '' },
      { type: 'pong', timestamp: '' },
      { type: 'error', channel, data: 'x', timestamp: '' },
      ev(channel, null),
      ev(channel, 'garbage'),
      ev(channel, { kind: 'nonsense' }),
    ] as HubMessage[]) {
      s = reducer(s, m);
    }
    expect(s).toBe(initial);
  });
});

describe('reduceSessions', () => {
  it('replaces on snapshot, upserts connected/updated, removes disconnected', () => {
    const s = run(reduceSessions, initialSessions, [
      snap('sessions', { sessions: [session('unix-1'), session('tcp-2')] }),
      ev('sessions', { kind: 'connected', session: session('http-3') }),
      ev('sessions', { kind: 'updated', session: session('unix-1', 5) }),
      ev('sessions', { kind: 'disconnected', session: session('tcp-2') }),
    ]);
    expect(s.sessions.map((x) => [x.id, x.calls])).toEqual([
      ['unix-1', 5],
      ['http-3', 0],
    ]);
  });

  it('a snapshot after a reconnect drops sessions that went away meanwhile', () => {
    const s = run(reduceSessions, initialSessions, [
      snap('sessions', { sessions: [session('a'), session('b')] }),
      snap('sessions', { sessions: [session('b')] }),
    ]);
    expect(s.sessions.map((x) => x.id)).toEqual(['b']);
  });

  it('does not mutate the previous state', () => {
    const before = reduceSessions(initialSessions, snap('sessions', { sessions: [session('a')] }));
    const frozen = JSON.stringify(before);
    reduceSessions(before, ev('sessions', { kind: 'updated', session: session('a', 9) }));
    expect(JSON.stringify(before)).toBe(frozen);
  });
});

describe('reduceActivity', () => {
  it('keeps snapshot entries and appends events, newest last', () => {
    const s = run(reduceActivity, initialActivity, [
      snap('activity', { events: [call('file_read', '2025-01-01T10:00:01Z'), call('dir_list', '2025-01-01T10:00:30Z')] }),
      ev('activity', call('process_start', '2025-01-01T10:01:05Z')),
    ]);
    expect(s.entries.map((e) => e.tool)).toEqual(['file_read', 'dir_list', 'process_start']);
    expect(s.perMinute).toEqual({
      [epochMinute('2025-01-01T10:00:00Z')]: 2,
      [epochMinute('2025-01-01T10:01:00Z')]: 1,
    });
  });

  it('caps entries at the limit but keeps counting calls per minute', () => {
    const n = LIMITS.activity + 250;
    let s = initialActivity;
    for (let i = 0; i < n; i++) s = reduceActivity(s, ev('activity', call(`t${i}`, '2025-01-01T10:00:10Z')));
    expect(s.entries).toHaveLength(LIMITS.activity);
    expect(s.entries[0].tool).toBe('t250');
    expect(s.entries[s.entries.length - 1].tool).toBe(`t${n - 1}`);
    expect(s.perMinute[epochMinute('2025-01-01T10:00:00Z')]).toBe(n);
  });

  it('forgets per-minute counts older than the retention window', () => {
    const s = run(reduceActivity, initialActivity, [
      ev('activity', call('a', '2025-01-01T08:00:00Z')),
      ev('activity', call('b', '2025-01-01T10:00:00Z')),
    ]);
    expect(Object.keys(s.perMinute).map(Number)).toEqual([epochMinute('2025-01-01T10:00:00Z')]);
  });
});

describe('reduceTransports', () => {
  it('takes the full list from snapshots and events alike', () => {
    const s = run(reduceTransports, initialTransports, [
      snap('transports', { transports: [{ name: 'tcp', running: false, addr: '127.0.0.1:9100' }] }),
      ev('transports', { transports: [{ name: 'tcp', running: true, addr: '127.0.0.1:9100' }, { name: 'ws', running: true, addr: '127.0.0.1:5000', url: 'ws://127.0.0.1:5000/ws' }] }),
    ]);
    expect(s.transports.map((t) => [t.name, t.running])).toEqual([
      ['tcp', true],
      ['ws', true],
    ]);
  });
});

describe('reduceProcesses', () => {
  it('upserts started and exited processes by id', () => {
    const s = run(reduceProcesses, initialProcesses, [
      snap('processes', { processes: [proc('p-1')] }),
      ev('processes', { kind: 'started', process: proc('p-2') }),
      ev('processes', { kind: 'exited', process: { ...proc('p-1', 'exited'), exitCode: 3 } }),
    ]);
    expect(s.processes.map((p) => [p.id, p.status, p.exitCode])).toEqual([
      ['p-1', 'exited', 3],
      ['p-2', 'running', 0],
    ]);
  });
});

describe('reduceBridge', () => {
  it('replaces the status on snapshot and event', () => {
    const s = run(reduceBridge, initialBridge, [
      snap('ide:bridge', { connected: false, url: 'ws://x/ws', attempts: 3, lastError: 'refused', nextRetryAt: '2025-01-01T00:00:08Z' }),
      ev('ide:bridge', { connected: true, url: 'ws://x/ws', attempts: 0 }),
    ]);
    expect(s).toEqual({ connected: true, url: 'ws://x/ws', attempts: 0 });
  });
});

describe('reduceIDESessions', () => {
  it('upserts sessions by id and ignores id-less placeholders', () => {
    const mk = (id: string, status: string) => ({ id, name: `n-${id}`, status, createdAt: '2025-01-01T00:00:00Z' });
    const s = run(reduceIDESessions, initialIDESessions, [
      snap('ide:sessions', { sessions: [mk('s1', 'active')] }),
      ev('ide:sessions', { kind: 'session', session: mk('', 'creating') }),
      ev('ide:sessions', { kind: 'session', session: mk('s2', 'active') }),
      ev('ide:sessions', { kind: 'session', session: mk('s1', 'closed') }),
    ]);
    expect(s.sessions.map((x) => [x.id, x.status])).toEqual([
      ['s1', 'closed'],
      ['s2', 'active'],
    ]);
  });
});

describe('reduceChat', () => {
  it('appends deltas to the streamed message, then replaces it with the final message', () => {
    const s = run(reduceChat, initialChat, [
      snap('chat:s1', { sessionId: 's1', messages: [{ id: 'm1', role: 'user', content: 'hi', timestamp: '2025-01-01T00:00:00Z' }] }),
      ev('chat:s1', { kind: 'delta', messageId: 'm2', content: 'Hel' }, '2025-01-01T00:00:01Z'),
      ev('chat:s1', { kind: 'delta', messageId: 'm2', content: 'lo ' }),
      ev('chat:s1', { kind: 'delta', messageId: 'm2', content: 'there' }),
    ]);
    expect(s.sessionId).toBe('s1');
    expect(s.messages).toHaveLength(2);
    expect(s.messages[1]).toMatchObject({ id: 'm2', role: 'assistant', content: 'Hello there', streaming: true, timestamp: '2025-01-01T00:00:01Z' });

    const done = reduceChat(s, ev('chat:s1', { kind: 'message', message: { id: 'm2', role: 'assistant', content: 'Hello there!', timestamp: '2025-01-01T00:00:02Z' } }));
    expect(done.messages).toHaveLength(2);
    expect(done.messages[1]).toMatchObject({ content: 'Hello there!', streaming: false });
  });

  it('a final message without an id completes the streaming assistant message', () => {
    const s = run(reduceChat, initialChat, [
      ev('chat:s1', { kind: 'delta', messageId: 'x', content: 'partial' }),
      ev('chat:s1', { kind: 'message', message: { role: 'assistant', content: 'full answer', timestamp: 't' } }),
    ]);
    expect(s.messages).toHaveLength(1);
    expect(s.messages[0]).toMatchObject({ content: 'full answer', streaming: false });
  });

  it('appends new messages (user echo, then assistant) in order and caps the history', () => {
    let s = initialChat;
    for (let i = 0; i < LIMITS.chatMessages + 5; i++) {
      s = reduceChat(s, ev('chat:s', { kind: 'message', message: { id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: `${i}`, timestamp: 't' } }));
    }
    expect(s.messages).toHaveLength(LIMITS.chatMessages);
    expect(s.messages[0].content).toBe('5');
  });
});

describe('reducePlan', () => {
  it('replaces the plan on each update', () => {
    const s = run(reducePlan, initialPlan, [
      snap('plan:s1', { sessionId: 's1', status: 'running', steps: [{ name: 'read', status: 'done' }, { name: 'edit', status: 'running' }] }),
      ev('plan:s1', { sessionId: 's1', status: 'done', steps: [{ name: 'read', status: 'done' }, { name: 'edit', status: 'done' }] }),
    ]);
    expect(s).toEqual({ sessionId: 's1', status: 'done', steps: [{ name: 'read', status: 'done' }, { name: 'edit', status: 'done' }] });
  });
});

describe('reduceBuilds and reduceBuildLog', () => {
  const b = (id: string, status: string, duration = '') => ({ id, repo: 'core', branch: 'main', status, duration, startedAt: '2025-01-01T00:00:00Z' });

  it('upserts builds by id', () => {
    const s = run(reduceBuilds, initialBuilds, [
      snap('ide:builds', { builds: [b('b1', 'success', '12s')] }),
      ev('ide:builds', { kind: 'build', build: b('b2', 'running') }),
      ev('ide:builds', { kind: 'build', build: b('b2', 'failed', '3s') }),
    ]);
    expect(s.builds.map((x) => [x.id, x.status, x.duration])).toEqual([
      ['b1', 'success', '12s'],
      ['b2', 'failed', '3s'],
    ]);
  });

  it('follows a build log: snapshot lines, appended lines, status updates, capped', () => {
    let s = run(reduceBuildLog, initialBuildLog, [
      snap('build:b2', { build: b('b2', 'running'), lines: ['$ make', 'cc -c a.c'] }),
      ev('build:b2', { kind: 'log', line: 'cc -c b.c' }),
      ev('build:b2', { kind: 'build', build: b('b2', 'success', '4s') }),
    ]);
    expect(s.lines).toEqual(['$ make', 'cc -c a.c', 'cc -c b.c']);
    expect(s.build?.status).toBe('success');
    for (let i = 0; i < LIMITS.buildLogLines; i++) s = reduceBuildLog(s, ev('build:b2', { kind: 'log', line: `l${i}` }));
    expect(s.lines).toHaveLength(LIMITS.buildLogLines);
    expect(s.dropped).toBe(3);
    expect(s.lines[0]).toBe('l0');
  });
});

describe('reduceIDEActivity', () => {
  it('keeps backend activity, newest last', () => {
    const s = run(reduceIDEActivity, initialIDEActivity, [
      snap('ide:activity', { events: [{ type: 'build_started', message: 'core#1', timestamp: 't1' }] }),
      ev('ide:activity', { kind: 'activity', event: { type: 'build_finished', message: 'core#1 ok', timestamp: 't2' } }),
    ]);
    expect(s.events.map((e) => e.type)).toEqual(['build_started', 'build_finished']);
  });
});

describe('todos', () => {
  const list = (session: string, ...statuses: string[]) => ({
    session,
    updated: '2025-01-01T00:00:00Z',
    items: statuses.map((status, i) => ({ content: `step ${i}`, status })),
  });
  it('takes the snapshot, replaces a list on update and drops it on removal', () => {
    let s = run(reduceTodos, initialTodos, [snap('todos', { lists: [list('unix-1', 'completed', 'in_progress')] })]);
    expect(Object.keys(s.lists)).toEqual(['unix-1']);
    expect(s.lists['unix-1'].items[1].status).toBe('in_progress');
    s = run(reduceTodos, s, [ev('todos', { kind: 'updated', list: list('unix-1', 'completed', 'completed') }), ev('todos', { kind: 'updated', list: list('http-2', 'pending') })]);
    expect(s.lists['unix-1'].items.map((i) => i.status)).toEqual(['completed', 'completed']);
    expect(s.lists['http-2'].items).toHaveLength(1);
    s = run(reduceTodos, s, [ev('todos', { kind: 'removed', list: list('unix-1') })]);
    expect(Object.keys(s.lists)).toEqual(['http-2']);
    const same = reduceTodos(s, ev('todos', { kind: 'removed', list: list('nope') }));
    expect(same).toBe(s);
  });
  it('tolerates a list without items', () => {
    const s = reduceTodos(initialTodos, snap('todos', { lists: [{ session: 'x', updated: '' }] }));
    expect(s.lists.x.items).toEqual([]);
  });
});
