// The Tasks list: tool calls that ran longer than their client waited (task_after) and go on as
// tasks, from the hub's "tasks" channel (mcp.TasksSnapshot, then one tasks.Change per start,
// progress tick, end or expiry).

import type { TasksSnapshot } from './generated/mcp';
import type { Change, Task } from './generated/tasks';
import { formatDurationMs, parseTime } from './format';
import type { Reducer } from './reducers';
import { payload, type HubMessage } from './types';

export type { Task };

export interface TasksState {
  /** Newest first, as the hub lists them. */
  tasks: Task[];
}

export const initialTasks: TasksState = { tasks: [] };

/** The dashboard keeps at most this many tasks (finished ones expire on the hub after an hour). */
export const MAX_TASKS = 200;

function newestFirst(a: Task, b: Task): number {
  return (parseTime(b.created) ?? 0) - (parseTime(a.created) ?? 0);
}

export const reduceTasks: Reducer<TasksState> = (state, msg: HubMessage) => {
  if (msg.type === 'snapshot') {
    const list = payload<TasksSnapshot>(msg).tasks;
    return { tasks: Array.isArray(list) ? [...list].sort(newestFirst).slice(0, MAX_TASKS) : [] };
  }
  if (msg.type !== 'event') return state;
  const c = msg.data as Change | undefined;
  if (!c || typeof c !== 'object' || !c.task?.id) return state;
  const rest = state.tasks.filter((t) => t.id !== c.task.id);
  if (c.kind === 'removed') return { tasks: rest };
  return { tasks: [c.task, ...rest].sort(newestFirst).slice(0, MAX_TASKS) };
};

/** running: the task's call has not ended (it can be cancelled). */
export function running(t: Pick<Task, 'status'>): boolean {
  return t.status === 'working' || t.status === 'input_required';
}

export function runningCount(s: TasksState): number {
  return s.tasks.filter(running).length;
}

/** caller names who started the task: the client's name, or its session and transport. */
export function callerOf(t: Pick<Task, 'owner'>): string {
  const o = t.owner;
  if (!o) return '';
  if (o.client) return o.transport ? `${o.client} (${o.transport})` : o.client;
  return o.session || o.transport || '';
}

/** progressText is the call's latest progress: "3 of 10 · files indexed", "12s · running go test". */
export function progressText(t: Pick<Task, 'progress' | 'status' | 'statusMessage'>): string {
  const p = t.progress;
  if (!running(t)) return t.statusMessage ?? '';
  // A task waits for its client to answer a question (Tasks extension, tasks/update).
  if (t.status === 'input_required') return t.statusMessage || "waiting for the client's answer";
  if (!p) return '';
  const amount = p.total ? `${trim(p.done)} of ${trim(p.total)}` : '';
  return [amount, p.message ?? ''].filter(Boolean).join(' · ');
}

/** progressRatio is 0..1 when the call reports a total, else null (no bar). */
export function progressRatio(t: Pick<Task, 'progress' | 'status'>): number | null {
  const p = t.progress;
  if (!running(t) || !p || !p.total) return null;
  return Math.max(0, Math.min(1, p.done / p.total));
}

/** age is how long the task has run (running) or ran (ended). */
export function age(t: Pick<Task, 'created' | 'updated' | 'status'>, now: number): string {
  const start = parseTime(t.created);
  if (start === null) return '';
  const end = running(t) ? now : (parseTime(t.updated) ?? now);
  return formatDurationMs(Math.max(0, end - start));
}

function trim(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
