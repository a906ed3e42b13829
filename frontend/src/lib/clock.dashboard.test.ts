// @vitest-environment jsdom
// The Dashboard's adaptive clock (clock.ts) with Svelte's client runtime (effects run under jsdom,
// not under the node environment's server runtime) and fake timers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { Dashboard } from './live.svelte';
import type { Control } from './control';
import { SocketRecorder, hubMsg } from '../test/fakeSocket';

const boot = { hubUrl: 'ws://127.0.0.1:1/ws', hubToken: 'tok', version: 'v', workspace: '/w' };

describe('adaptive clock', () => {
  afterEach(() => vi.useRealTimers());

  // ticks advances fake time by ms and returns every value `now` took meanwhile.
  async function ticks(d: Dashboard, ms: number): Promise<number[]> {
    const seen: number[] = [];
    let last = d.now;
    for (let t = 0; t < ms; t += 50) {
      await vi.advanceTimersByTimeAsync(50);
      flushSync();
      if (d.now !== last) seen.push((last = d.now));
    }
    return seen;
  }

  it('sleeps until the next minute when nothing needs seconds, ticks each second while something does', async () => {
    vi.useFakeTimers({ now: Date.parse('2025-01-01T00:00:20.000Z') });
    const rec = new SocketRecorder();
    const control = { transports: async () => ({ transports: [] }), toolsets: async () => ({ toolsets: [] }) } as unknown as Control;
    const d = new Dashboard(control, boot, { createSocket: rec.create, frame: (fn) => fn() });
    d.start();
    rec.last.serverOpen();
    flushSync();

    // Idle page: one wake-up, at the minute boundary (the chart's next bucket).
    expect(await ticks(d, 45_000)).toEqual([Date.parse('2025-01-01T00:01:00.000Z')]);

    // A session that connected 4.7 s ago shows "4.7s ago": the clock ticks on its second phase.
    rec.last.serverSend(hubMsg('snapshot', 'sessions', { sessions: [{ id: 's1', connectedAt: '2025-01-01T00:01:00.300Z' }] }));
    flushSync();
    const now = Date.now(); // 00:01:05.000 (`now` still shows the last tick, 00:01:00)
    const seconds = await ticks(d, 10_000);
    expect(seconds).toHaveLength(10);
    expect(seconds[0] - now).toBe(300); // :05.300, when "4.7s" would turn "5.0s"
    expect(seconds.every((t, i) => i === 0 || t - seconds[i - 1] === 1000)).toBe(true);

    // Once it reads "1m ago" the clock is back to once a minute: from 00:02:15 the next wake-ups
    // are the chart's minute (00:03:00) and "1m ago" turning "2m ago" (00:03:00.300).
    await ticks(d, 60_000);
    expect(await ticks(d, 60_000)).toEqual([Date.parse('2025-01-01T00:03:00.000Z'), Date.parse('2025-01-01T00:03:00.300Z')]);

    // A running process shows a second-resolution duration; when it exits, the seconds stop.
    rec.last.serverSend(hubMsg('snapshot', 'processes', { processes: [{ id: 'p1', status: 'running', startedAt: new Date(d.now).toISOString() }] }));
    flushSync();
    expect((await ticks(d, 5_000)).length).toBeGreaterThanOrEqual(4);
    rec.last.serverSend(hubMsg('snapshot', 'processes', { processes: [{ id: 'p1', status: 'exited', startedAt: new Date(d.now).toISOString() }] }));
    flushSync();
    expect((await ticks(d, 5_000)).length).toBeLessThanOrEqual(1); // at most the minute boundary

    // Disposed: no more wake-ups.
    d.dispose();
    expect(await ticks(d, 120_000)).toEqual([]);
  });
});
