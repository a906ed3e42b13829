import { describe, expect, it } from 'vitest';
import { changed, durationMs, inForce, taskAfterError, tasksChanged, tasksForm, tasksInput } from './taskafter';
import { sampleSettings } from '../../test/settings';

describe('task_after', () => {
  it('reads Go durations', () => {
    expect(durationMs('45s')).toBe(45_000);
    expect(durationMs('1m30s')).toBe(90_000);
    expect(durationMs('1.5h')).toBe(5_400_000);
    expect(durationMs('0')).toBe(0);
    expect(durationMs('0s')).toBe(0);
    expect(durationMs('45')).toBeNull();
    expect(durationMs('45s later')).toBeNull();
    expect(durationMs('')).toBeNull();
  });
  it('refuses what the hub refuses, naming the fix', () => {
    expect(taskAfterError('')).toBe('');
    expect(taskAfterError('off')).toBe('');
    expect(taskAfterError('OFF')).toBe('');
    expect(taskAfterError('0s')).toBe('');
    expect(taskAfterError('1s')).toBe('');
    expect(taskAfterError('2m')).toBe('');
    expect(taskAfterError('soon')).toMatch(/not a duration.*"45s"/);
    expect(taskAfterError('45')).toMatch(/not a duration/);
    expect(taskAfterError('500ms')).toMatch(/at least "1s"/);
    expect(taskAfterError('-5s')).toMatch(/negative/);
    expect(taskAfterError('48h')).toMatch(/at most "24h"/);
  });
  it('says what is in force', () => {
    expect(inForce({ saved: '', running: '45s', default: '45s' })).toBe('A call still running after 45s (the default) is answered with a task and goes on.');
    expect(inForce({ saved: '2m', running: '2m0s', default: '45s' })).toMatch(/after 2m0s is answered/);
    expect(inForce({ saved: '0s', running: '0s', default: '45s' })).toMatch(/^Off/);
  });
  it('knows when the form differs from the file', () => {
    const s = { saved: '0s', running: '0s', default: '45s' };
    expect(changed(s, 'off')).toBe(false);
    expect(changed(s, '0s')).toBe(false);
    expect(changed(s, '1s')).toBe(true);
    expect(changed({ saved: '1m0s', running: '1m0s', default: '45s' }, '60s')).toBe(false);
    expect(changed({ saved: '', running: '45s', default: '45s' }, '')).toBe(false);
    expect(changed({ saved: '', running: '45s', default: '45s' }, '45s')).toBe(true);
    expect(changed(null, '1s')).toBe(false);
  });
  it('turns the settings into the form and back', () => {
    const s = sampleSettings({ tasks: { saved: '2m', running: '2m0s', default: '45s' } });
    const f = tasksForm(s);
    expect(f).toEqual({ taskAfter: '2m' });
    expect(tasksChanged(f, s)).toBe(false);
    expect(tasksChanged({ taskAfter: ' 2m ' }, s)).toBe(false);
    expect(tasksChanged({ taskAfter: '120s' }, s)).toBe(false);
    expect(tasksChanged({ taskAfter: '' }, s)).toBe(true);
    expect(tasksChanged({ taskAfter: 'off' }, s)).toBe(true);
    expect(tasksInput({ taskAfter: ' off ' })).toEqual({ taskAfter: 'off' });
    expect(tasksForm(sampleSettings())).toEqual({ taskAfter: '' });
  });
});
