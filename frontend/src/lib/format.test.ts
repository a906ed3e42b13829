import { describe, expect, it } from 'vitest';
import { addressParts, countOf, formatAgo, formatClock, formatCountdown, formatDurationMs, formatGoDuration, formatHourMinute, parseTime, processDuration, splitArgs, statusTone } from './format';

describe('splitArgs', () => {
  it.each([
    ['', []],
    ['   ', []],
    ['-la /tmp', ['-la', '/tmp']],
    ["-c 'echo hi; exit 3'", ['-c', 'echo hi; exit 3']],
    ['-c "say \\"hi\\" \\\\ ok"', ['-c', 'say "hi" \\ ok']],
    ['a\\ b c', ['a b', 'c']],
    ["''", ['']],
    ['x""y', ['xy']],
    ["--name='a b'", ['--name=a b']],
  ])('%j -> %j', (input, want) => {
    expect(splitArgs(input)).toEqual(want);
  });

  it('rejects an unclosed quote', () => {
    expect(() => splitArgs("-c 'oops")).toThrow("unclosed ' quote");
  });
});

describe('durations and times', () => {
  it.each([
    [850, '850ms'],
    [3200, '3.2s'],
    [42_000, '42s'],
    [245_000, '4m05s'],
    [7_380_000, '2h03m'],
  ])('formatDurationMs(%i) = %s', (ms, want) => {
    expect(formatDurationMs(ms)).toBe(want);
  });

  it('formats Go durations given in nanoseconds, and passes strings through', () => {
    expect(formatGoDuration(1_500_000_000)).toBe('1.5s');
    expect(formatGoDuration(undefined)).toBe('');
  });

  it("treats Go's zero time as no time", () => {
    expect(parseTime('0001-01-01T00:00:00Z')).toBeNull();
    expect(parseTime('')).toBeNull();
    expect(parseTime('2025-01-01T00:00:00Z')).toBe(Date.parse('2025-01-01T00:00:00Z'));
    expect(formatAgo('2025-01-01T00:00:00Z', Date.parse('2025-01-01T00:00:12Z'))).toBe('12s ago');
    expect(formatAgo('2025-01-01T00:00:08Z', Date.parse('2025-01-01T00:00:05Z'))).toBe('in 3.0s');
    expect(formatCountdown('2025-01-01T00:01:00Z', Date.parse('2025-01-01T00:00:35Z'))).toBe('in 30s');
    expect(formatCountdown('2025-01-01T00:01:00Z', Date.parse('2025-01-01T00:00:52.5Z'))).toBe('in 10s');
    expect(formatCountdown('2025-01-01T00:05:00Z', Date.parse('2025-01-01T00:00:52Z'))).toBe('in 5m');
    expect(formatCountdown('2025-01-01T00:01:00Z', Date.parse('2025-01-01T00:01:01Z'))).toBe('now');
    // Past a minute: whole minutes, then hours and minutes (the text changes once a minute).
    expect(formatAgo('2025-01-01T00:00:00Z', Date.parse('2025-01-01T00:03:59Z'))).toBe('3m ago');
    expect(formatAgo('2025-01-01T00:00:00Z', Date.parse('2025-01-01T01:02:30Z'))).toBe('1h02m ago');
  });

  it('shows clock times as local 24-hour HH:MM:SS and HH:MM, zero-padded', () => {
    const t = new Date(2025, 0, 2, 3, 4, 5); // local time, whatever the zone
    expect(formatClock(t.toISOString())).toBe('03:04:05');
    expect(formatHourMinute(t.getTime())).toBe('03:04');
    expect(formatClock(new Date(2025, 0, 2, 23, 59, 30).toISOString())).toBe('23:59:30');
    expect(formatClock('0001-01-01T00:00:00Z')).toBe('');
    expect(formatClock(undefined)).toBe('');
  });

  it('counts a running process from its start, and shows the final duration of an ended one', () => {
    const now = Date.parse('2025-01-01T00:01:05Z');
    expect(processDuration({ status: 'running', startedAt: '2025-01-01T00:00:00Z', duration: 1e9 }, now)).toBe('1m05s');
    expect(processDuration({ status: 'exited', startedAt: '2025-01-01T00:00:00Z', duration: 2.5e9 }, now)).toBe('2.5s');
  });

  it('maps statuses to tones', () => {
    expect(statusTone('running')).toBe('busy');
    expect(statusTone('success')).toBe('ok');
    expect(statusTone('failed')).toBe('bad');
    expect(statusTone('whatever')).toBe('idle');
  });
});

describe('countOf', () => {
  it('puts the noun in the number of its count', () => {
    expect(countOf(1, 'rule')).toBe('1 rule');
    expect(countOf(0, 'rule')).toBe('0 rules');
    expect(countOf(2, 'tool')).toBe('2 tools');
    expect(countOf(1, 'entry', 'entries')).toBe('1 entry');
    expect(countOf(3, 'entry', 'entries')).toBe('3 entries');
  });
});

describe('addressParts', () => {
  it('splits after each run of separators, keeping every character', () => {
    expect(addressParts('/tmp/sb-e2e-x/run/mcp.sock')).toEqual(['/', 'tmp/', 'sb-e2e-x/', 'run/', 'mcp.', 'sock']);
    expect(addressParts('unix:///run/user/1000/mcp.sock')).toEqual(['unix:///', 'run/', 'user/', '1000/', 'mcp.', 'sock']);
    expect(addressParts('ws://127.0.0.1:35717/ws')).toEqual(['ws://', '127.', '0.', '0.', '1:', '35717/', 'ws']);
    expect(addressParts('node /work/fixture.mjs').join('')).toBe('node /work/fixture.mjs');
  });
  it('leaves an address without separators whole', () => {
    expect(addressParts('localhost')).toEqual(['localhost']);
    expect(addressParts('')).toEqual([]);
  });
});
