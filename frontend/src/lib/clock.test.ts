import { describe, expect, it } from 'vitest';
import { nextTickDelay, resolution } from './clock';

const at = (iso: string) => Date.parse(iso);

describe('adaptive clock', () => {
  it('wakes at the next minute when nothing on screen needs seconds', () => {
    expect(nextTickDelay([], at('2025-01-01T00:00:20.000Z'))).toBe(40_000);
    // A session that connected ten minutes ago reads "10m ago": it changes on its own minute.
    const anchors = [{ at: '2025-01-01T00:00:05.000Z', kind: 'ago' as const }];
    expect(nextTickDelay(anchors, at('2025-01-01T00:10:20.000Z'))).toBe(40_000); // chart minute first
    expect(nextTickDelay(anchors, at('2025-01-01T00:10:01.000Z'))).toBe(4_000); // "10m ago" → "11m ago"
  });

  it('ticks every second, on the anchor phase, while a relative time shows seconds', () => {
    const now = at('2025-01-01T00:00:12.900Z');
    // Connected at :00.400: "12s ago" turns "13s ago" at :13.400.
    expect(nextTickDelay([{ at: '2025-01-01T00:00:00.400Z', kind: 'ago' }], now)).toBe(500);
    // A running process started 5 minutes ago shows "5m00s": still second resolution.
    const proc = { at: '2025-01-01T00:00:12.000Z', kind: 'duration' as const };
    expect(resolution(proc, at('2025-01-01T00:05:12.000Z'))).toBe(1000);
    expect(resolution(proc, at('2025-01-01T01:05:12.000Z'))).toBe(60_000);
    // A retry countdown (in the future) ticks every second.
    expect(nextTickDelay([{ at: '2025-01-01T00:00:30.000Z', kind: 'ago' }], now)).toBe(100);
  });

  it('counts a retry down in tens of seconds, minutes when further off, never each second', () => {
    const retry = { at: '2025-01-01T00:01:00.000Z', kind: 'countdown' as const };
    expect(nextTickDelay([retry], at('2025-01-01T00:00:35.000Z'))).toBe(5_000); // "in 30s" → "in 20s" at :40
    expect(nextTickDelay([retry], at('2025-01-01T00:00:52.500Z'))).toBe(7_500); // "in 10s" until due, then "now"
    expect(resolution(retry, at('2025-01-01T00:01:00.000Z'))).toBe(0); // due: "now"
    expect(resolution(retry, at('2024-12-31T23:58:00.000Z'))).toBe(60_000);
  });

  it('ignores missing times and never returns less than minMs', () => {
    const now = at('2025-01-01T00:00:12.000Z');
    expect(nextTickDelay([{ at: '', kind: 'ago' }, { at: null, kind: 'duration' }], now)).toBe(48_000);
    expect(nextTickDelay([{ at: '2025-01-01T00:00:00.020Z', kind: 'ago' }], now)).toBe(50);
    expect(nextTickDelay([], at('2025-01-01T00:01:00.000Z'))).toBe(60_000);
  });
});
