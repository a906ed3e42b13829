// Settings › Tasks: task_after, how long a tool call runs before the hub answers its client with
// a task (collected with tasks_get, or tasks/get under the Tasks extension) and lets the call go
// on, as a form saved through the Save bar (SaveTasks). The hub checks the value again
// (config.ParseTaskAfter); these checks give the same answer before a round trip.
import type { TaskAfterInput, TaskSettings } from '../generated/app';
import type { Settings } from '../types';

/** The form: task_after as typed ("" the default, "off" never hands a call back). */
export interface TasksForm {
  taskAfter: string;
}

/** The fields the section has an input for (the hub's errors name task_after). */
export const TASKS_FIELDS = ['task_after'];

export function emptyTasksForm(): TasksForm {
  return { taskAfter: '' };
}

export function tasksForm(s: Settings): TasksForm {
  return { taskAfter: s.tasks?.saved ?? '' };
}

/** What the form saves: the value trimmed (the hub reads "off" and "" itself). */
export function tasksInput(f: TasksForm): TaskAfterInput {
  return { taskAfter: f.taskAfter.trim() };
}

/** Whether the form differs from the file (see changed: "off" is the file's "0s", "60s" its "1m0s"). */
export function tasksChanged(f: TasksForm, s: Settings): boolean {
  return changed(s.tasks ?? null, f.taskAfter);
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The milliseconds of a Go duration such as "45s", "1m30s" or "1.5h"; null when it is not one. */
export function durationMs(text: string): number | null {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  let parts = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += parseFloat(m[1]) * UNITS[m[2]];
    at = re.lastIndex;
    parts++;
  }
  return parts > 0 && at === s.length ? total : null;
}

/** Why the hub would refuse value as task_after, or '' ("" is the default, "off" turns tasks off). */
export function taskAfterError(value: string): string {
  const v = value.trim();
  if (v === '' || v.toLowerCase() === 'off') return '';
  if (v.startsWith('-')) return `"${v}" is negative; write a duration such as "45s", or "off"`;
  const ms = durationMs(v);
  if (ms === null) return `"${v}" is not a duration; write it like "45s" or "2m", or "off" to turn tasks off`;
  if (ms > 0 && ms < 1000) return `${v} would turn almost every call into a task; write at least "1s", or "off"`;
  if (ms > 24 * 3_600_000) return `${v} is longer than any client waits; write at most "24h", or "off"`;
  return '';
}

/** A sentence on what the hub does now. */
export function inForce(s: TaskSettings): string {
  const running = durationMs(s.running);
  if (running === 0) return 'Off: every call is waited for, however long it runs.';
  const def = s.saved === '' ? ' (the default)' : '';
  return `A call still running after ${s.running}${def} is answered with a task and goes on.`;
}

/** Whether value differs from what the file holds (after trimming; "off" is the file's "0s"). */
export function changed(s: TaskSettings | null, value: string): boolean {
  if (!s) return false;
  const v = value.trim();
  const norm = (x: string) => (x.toLowerCase() === 'off' ? '0s' : x);
  if (norm(v) === norm(s.saved)) return false;
  const a = durationMs(norm(v));
  const b = durationMs(norm(s.saved));
  return !(a !== null && b !== null && a === b && v !== '' && s.saved !== '');
}
