import { describe, expect, it } from 'vitest';
import { HubClient, hubSocketUrl, reconnectDelay, type Timers } from './hub';
import type { HubMessage } from './types';
import { SocketRecorder, hubMsg } from '../test/fakeSocket';

/** ManualTimers records scheduled callbacks so a test can see each delay and fire it. */
class ManualTimers implements Timers {
  pending: { id: number; fn: () => void; ms: number }[] = [];
  delays: number[] = [];
  private next = 1;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.push({ id, fn, ms });
    this.delays.push(ms);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }
  /** fire runs the oldest pending timer. */
  fire(): void {
    const t = this.pending.shift();
    if (!t) throw new Error('no timer pending');
    t.fn();
  }
}

function setup(backoff = { initialMs: 100, maxMs: 1000, factor: 2 }) {
  const rec = new SocketRecorder();
  const timers = new ManualTimers();
  const errors: string[] = [];
  const hub = new HubClient({
    url: 'ws://127.0.0.1:4567/ws',
    token: 'sekret',
    createSocket: rec.create,
    timers,
    backoff,
    onError: (m) => errors.push(m),
  });
  return { hub, rec, timers, errors };
}

describe('reconnectDelay', () => {
  it.each([
    [0, 500],
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [5, 10000],
    [12, 10000],
  ])('attempt %i waits %i ms with the defaults', (attempt, want) => {
    expect(reconnectDelay(attempt)).toBe(want);
  });
});

describe('hubSocketUrl', () => {
  it('adds the token as a query parameter, escaped', () => {
    expect(hubSocketUrl('ws://127.0.0.1:1/ws', 'a b&c')).toBe('ws://127.0.0.1:1/ws?token=a+b%26c');
  });
  it('leaves the URL alone without a token', () => {
    expect(hubSocketUrl('ws://127.0.0.1:1/ws', '')).toBe('ws://127.0.0.1:1/ws');
  });
});

describe('HubClient', () => {
  it('connects with the token and subscribes once the socket opens', () => {
    const { hub, rec } = setup();
    hub.subscribe('sessions', () => {});
    hub.subscribe('activity', () => {});
    hub.connect();
    expect(rec.sockets).toHaveLength(1);
    expect(rec.last.url).toBe('ws://127.0.0.1:4567/ws?token=sekret');
    expect(hub.status).toBe('connecting');
    expect(rec.last.sent).toHaveLength(0); // nothing may be sent before open
    rec.last.serverOpen();
    expect(hub.status).toBe('open');
    expect(rec.last.frames()).toEqual([
      { type: 'subscribe', channel: 'sessions' },
      { type: 'subscribe', channel: 'activity' },
    ]);
  });

  it('routes snapshot and event messages to the listeners of their channel only', () => {
    const { hub, rec } = setup();
    const got: Record<string, HubMessage[]> = { a: [], b: [] };
    hub.subscribe('a', (m) => got.a.push(m));
    hub.subscribe('b', (m) => got.b.push(m));
    hub.connect();
    rec.last.serverOpen();
    rec.last.serverSend({ type: 'subscribed', channel: 'a', timestamp: 't' });
    rec.last.serverSend(hubMsg('snapshot', 'a', { n: 1 }));
    rec.last.serverSend(hubMsg('event', 'a', { n: 2 }));
    rec.last.serverSend(hubMsg('event', 'b', { n: 3 }));
    rec.last.serverSend(hubMsg('event', 'nobody', { n: 4 }));
    expect(got.a.map((m) => [m.type, (m.data as { n?: number } | undefined)?.n])).toEqual([
      ['subscribed', undefined],
      ['snapshot', 1],
      ['event', 2],
    ]);
    expect(got.b.map((m) => (m.data as { n: number }).n)).toEqual([3]);
  });

  it('sends subscribe at once when already open, and unsubscribe when the last listener leaves', () => {
    const { hub, rec } = setup();
    hub.connect();
    rec.last.serverOpen();
    const off1 = hub.subscribe('process:p-1', () => {});
    const off2 = hub.subscribe('process:p-1', () => {});
    expect(rec.last.frames()).toEqual([{ type: 'subscribe', channel: 'process:p-1' }]);
    off1();
    off1(); // idempotent
    expect(rec.last.frames()).toHaveLength(1);
    off2();
    expect(rec.last.frames()).toEqual([
      { type: 'subscribe', channel: 'process:p-1' },
      { type: 'unsubscribe', channel: 'process:p-1' },
    ]);
    expect(hub.channels()).toEqual([]);
  });

  it('reconnects with growing, capped delays while the hub is unreachable', () => {
    const { hub, rec, timers } = setup({ initialMs: 100, maxMs: 1000, factor: 2 });
    hub.connect();
    for (let i = 0; i < 6; i++) {
      rec.last.serverClose(true); // handshake refused: error then close
      expect(hub.status).toBe('closed');
      expect(timers.pending).toHaveLength(1);
      timers.fire();
    }
    expect(timers.delays).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(rec.sockets).toHaveLength(7);
    expect(hub.failedAttempts).toBe(6);
  });

  it('resets the backoff after a successful connection', () => {
    const { hub, rec, timers } = setup({ initialMs: 100, maxMs: 1000, factor: 2 });
    hub.connect();
    rec.last.serverClose();
    timers.fire();
    rec.last.serverClose();
    timers.fire();
    expect(timers.delays).toEqual([100, 200]);
    rec.last.serverOpen();
    expect(hub.failedAttempts).toBe(0);
    rec.last.serverClose();
    expect(timers.delays).toEqual([100, 200, 100]);
  });

  it('resubscribes every live channel after a reconnect, and not the ones dropped meanwhile', () => {
    const { hub, rec, timers } = setup();
    const snapshots: string[] = [];
    hub.subscribe('sessions', (m) => m.type === 'snapshot' && snapshots.push('sessions'));
    const offBuild = hub.subscribe('build:b-1', () => {});
    hub.connect();
    const first = rec.last;
    first.serverOpen();
    first.serverSend(hubMsg('snapshot', 'sessions', { sessions: [] }));

    first.serverClose();
    offBuild(); // unsubscribed while disconnected: nothing to send now
    hub.subscribe('process:p-2', () => {});
    expect(first.frames()).toHaveLength(2);
    timers.fire();
    const second = rec.last;
    expect(second).not.toBe(first);
    second.serverOpen();
    expect(second.frames()).toEqual([
      { type: 'subscribe', channel: 'sessions' },
      { type: 'subscribe', channel: 'process:p-2' },
    ]);
    second.serverSend(hubMsg('snapshot', 'sessions', { sessions: [] }));
    expect(snapshots).toEqual(['sessions', 'sessions']);
  });

  it('ignores messages from a socket it has replaced', () => {
    const { hub, rec, timers } = setup();
    const got: HubMessage[] = [];
    hub.subscribe('x', (m) => got.push(m));
    hub.connect();
    const old = rec.last;
    old.serverOpen();
    old.serverClose();
    timers.fire();
    old.serverSend(hubMsg('event', 'x', 1)); // late frame from the dead socket
    expect(got).toHaveLength(0);
  });

  it('close() stops reconnecting and closes the socket', () => {
    const { hub, rec, timers } = setup();
    const statuses: string[] = [];
    hub.onStatus((s) => statuses.push(s));
    hub.connect();
    rec.last.serverOpen();
    rec.last.serverClose();
    expect(timers.pending).toHaveLength(1);
    hub.close();
    expect(timers.pending).toHaveLength(0);
    expect(hub.status).toBe('closed');
    expect(statuses).toEqual(['idle', 'connecting', 'open', 'closed']);

    const { hub: h2, rec: r2, timers: t2 } = setup();
    h2.connect();
    r2.last.serverOpen();
    h2.close();
    expect(r2.last.closedByClient).toBe(true);
    expect(t2.pending).toHaveLength(0);
  });

  it('reports hub errors and frames that are not JSON', () => {
    const { hub, rec, errors } = setup();
    hub.connect();
    rec.last.serverOpen();
    rec.last.serverSend('not json {');
    rec.last.serverSend({ type: 'error', channel: 'bogus', data: 'unknown channel', timestamp: 't' });
    rec.last.serverSend({ type: 'error', data: { message: 'type: unknown "x"; use "subscribe", "unsubscribe" or "ping"' }, timestamp: 't' });
    expect(errors).toEqual([
      'hub: received a frame that is not JSON',
      'hub error on bogus: unknown channel',
      'hub error: type: unknown "x"; use "subscribe", "unsubscribe" or "ping"',
    ]);
  });

  it('ping sends a ping frame only while open', () => {
    const { hub, rec } = setup();
    expect(hub.ping()).toBe(false);
    hub.connect();
    expect(hub.ping()).toBe(false);
    rec.last.serverOpen();
    expect(hub.ping()).toBe(true);
    expect(rec.last.frames()).toEqual([{ type: 'ping' }]);
  });

  it('schedules a retry when the socket cannot even be constructed', () => {
    const timers = new ManualTimers();
    const errors: string[] = [];
    let calls = 0;
    const hub = new HubClient({
      url: 'ws://127.0.0.1:1/ws',
      token: '',
      timers,
      onError: (m) => errors.push(m),
      createSocket: () => {
        calls++;
        throw new Error('SyntaxError: bad URL');
      },
    });
    hub.connect();
    expect(calls).toBe(1);
    expect(errors[0]).toContain('cannot open ws://127.0.0.1:1/ws');
    expect(timers.pending).toHaveLength(1);
    hub.close();
  });
});
