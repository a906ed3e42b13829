import { describe, expect, it } from 'vitest';
import { AutostartWatch, autostartMark } from './autostart';
import type { ActivityEntry } from '../types';

const e = (tool: string, callId: string, outcome = 'ok'): ActivityEntry =>
  ({ time: `2026-01-01T00:00:0${callId.slice(1)}Z`, callId, tool, outcome, actor: 'tray', session: '', transport: 'tray', user: '', level: 'SECURITY', durationMs: 1, args: '' }) as ActivityEntry;

describe('Start at login switched elsewhere', () => {
  it('marks the newest switch in the activity feed', () => {
    expect(autostartMark([])).toBe('');
    expect(autostartMark([e('exec', 'c1')])).toBe('');
    const first = autostartMark([e('autostart_set', 'a1'), e('exec', 'c2')]);
    expect(first).toBe('a1@2026-01-01T00:00:01Z');
    // A "started" line is not the switch yet; the outcome is.
    expect(autostartMark([e('autostart_set', 'a1'), e('autostart_set', 'a3', 'started')])).toBe(first);
    expect(autostartMark([e('autostart_set', 'a1'), e('autostart_set', 'a3')])).toBe('a3@2026-01-01T00:00:03Z');
  });

  it('tells a switch newer than the one seen when the view opened, once', () => {
    const w = new AutostartWatch();
    // The view's first read already has the result of the switches made before it opened.
    expect(w.changed([e('autostart_set', 'a1')])).toBe(false);
    expect(w.changed([e('autostart_set', 'a1'), e('exec', 'c2')])).toBe(false);
    expect(w.changed([e('autostart_set', 'a1'), e('autostart_set', 'a3', 'started')])).toBe(false);
    expect(w.changed([e('autostart_set', 'a1'), e('autostart_set', 'a3')])).toBe(true);
    expect(w.changed([e('autostart_set', 'a1'), e('autostart_set', 'a3')])).toBe(false);
    const empty = new AutostartWatch();
    expect(empty.changed([])).toBe(false);
    expect(empty.changed([e('autostart_set', 'a4')])).toBe(true);
  });
});
