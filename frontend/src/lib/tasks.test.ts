import { describe, expect, it } from 'vitest';
import { age, callerOf, initialTasks, progressRatio, progressText, reduceTasks, runningCount, type Task } from './tasks';
import { hubMsg } from '../test/fakeSocket';

function task(id: string, extra: Partial<Task> = {}): Task {
  return {
    id,
    owner: { session: 'unix-1', client: 'claude-code', transport: 'unix' },
    tool: 'exec',
    status: 'working',
    created: '2026-01-01T10:00:00Z',
    updated: '2026-01-01T10:00:05Z',
    ...extra,
  };
}

describe('tasks channel', () => {
  it('takes the snapshot newest first, then applies starts, progress, ends and expiries', () => {
    let s = reduceTasks(initialTasks, hubMsg('snapshot', 'tasks', { tasks: [task('a'), task('b', { created: '2026-01-01T10:01:00Z' })] }));
    expect(s.tasks.map((t) => t.id)).toEqual(['b', 'a']);
    s = reduceTasks(s, hubMsg('event', 'tasks', { kind: 'started', task: task('c', { created: '2026-01-01T10:02:00Z' }) }));
    expect(s.tasks.map((t) => t.id)).toEqual(['c', 'b', 'a']);
    s = reduceTasks(s, hubMsg('event', 'tasks', { kind: 'updated', task: task('a', { progress: { done: 3, total: 10, message: 'indexing' } }) }));
    expect(s.tasks.find((t) => t.id === 'a')?.progress?.done).toBe(3);
    expect(s.tasks).toHaveLength(3);
    s = reduceTasks(s, hubMsg('event', 'tasks', { kind: 'ended', task: task('b', { status: 'completed' }) }));
    expect(runningCount(s)).toBe(2);
    s = reduceTasks(s, hubMsg('event', 'tasks', { kind: 'removed', task: task('b', { status: 'completed' }) }));
    expect(s.tasks.map((t) => t.id)).toEqual(['c', 'a']);
    expect(reduceTasks(s, hubMsg('event', 'tasks', { kind: 'started' }))).toBe(s); // no task: ignored
  });

  it('says who called, how far it is and how long it has run', () => {
    const now = Date.parse('2026-01-01T10:01:30Z');
    const t = task('a', { progress: { done: 3, total: 10, message: 'indexing' } });
    expect(callerOf(t)).toBe('claude-code (unix)');
    expect(callerOf(task('x', { owner: { session: 'http-4', client: '', transport: 'http' } }))).toBe('http-4');
    expect(progressText(t)).toBe('3 of 10 · indexing');
    expect(progressText(task('q', { status: 'input_required', statusMessage: "waiting for the client's answer (tasks/update)", progress: { done: 1 } }))).toBe(
      "waiting for the client's answer (tasks/update)",
    );
    expect(progressRatio(t)).toBeCloseTo(0.3);
    expect(progressText(task('b', { progress: { done: 12, message: 'sh -c make' } }))).toBe('sh -c make');
    expect(progressRatio(task('b', { progress: { done: 12 } }))).toBeNull();
    expect(age(t, now)).toBe('1m30s');
    // An ended task's age stops at its end, and its text is why it ended.
    const done = task('d', { status: 'cancelled', statusMessage: 'cancelled by the user on the dashboard' });
    expect(age(done, now)).toBe('5.0s');
    expect(progressText(done)).toBe('cancelled by the user on the dashboard');
  });
});
