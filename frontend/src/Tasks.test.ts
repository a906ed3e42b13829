// @vitest-environment jsdom
// The Activity view's Tasks list, mounted in the whole App: tasks from the hub's "tasks" channel
// show their caller, tool, progress, age and status; Cancel calls the control API; the list
// follows the channel's events and is gone while there are no tasks.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';
import type { Control } from './lib/control';
import type { Task } from './lib/tasks';
import { SocketRecorder, hubMsg, type FakeSocket } from './test/fakeSocket';
import { viewShown } from './test/view';

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  window.location.hash = '';
});

const $ = (id: string) => document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
const $$ = (id: string) => [...document.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

/** A Control recording every call; answers are {} unless given. */
function recordingControl(calls: unknown[][], answers: Record<string, unknown>): Control {
  const base: Record<string, unknown> = { kind: 'http' };
  return new Proxy(base, {
    get(target, name: string) {
      if (name in target) return target[name];
      return async (...args: unknown[]) => {
        calls.push([name, ...args]);
        return (answers[name] ?? {}) as never;
      };
    },
  }) as unknown as Control;
}

async function start() {
  const rec = new SocketRecorder();
  const calls: unknown[][] = [];
  const control = recordingControl(calls, {
    bootstrap: { hubUrl: 'ws://127.0.0.1:7001/ws', hubToken: 't', version: 'v', workspace: '/w' },
    transports: { transports: [] },
    toolsets: { toolsets: [] },
  });
  window.location.hash = '#activity';
  app = mount(App, {
    target: document.body,
    props: { control, dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn() } },
  });
  await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
  rec.last.serverOpen();
  flushSync();
  await viewShown('activity');
  return { sock: rec.last, calls };
}

function send(sock: FakeSocket, type: string, channel: string, data: unknown) {
  sock.serverSend(hubMsg(type, channel, data));
  flushSync();
}

// One start time for every task of the file: taken per call, two tasks made a millisecond apart
// sorted newest first in the other order.
const created = new Date(Date.now() - 90_000).toISOString();

function task(id: string, extra: Partial<Task> = {}): Task {
  return { id, owner: { session: 'unix-1', client: 'claude-code', transport: 'unix' }, tool: 'exec', status: 'working', created, updated: created, ...extra };
}

describe('Tasks list', () => {
  it('shows running and finished tasks and cancels a running one', async () => {
    const { sock, calls } = await start();
    expect($('tasks')).toBeNull(); // no tasks, no list
    expect(sock.frames()).toContainEqual({ type: 'subscribe', channel: 'tasks' });
    send(sock, 'snapshot', 'tasks', {
      tasks: [
        task('task-a', { progress: { done: 3, total: 10, message: 'indexing' } }),
        task('task-b', { tool: 'rag_ingest', status: 'completed', owner: { session: 'http-2', client: 'cursor', transport: 'http' } }),
      ],
    });
    const rows = $$('task-row');
    expect(rows.map((r) => [r.dataset.taskId, r.dataset.status])).toEqual([
      ['task-a', 'working'],
      ['task-b', 'completed'],
    ]);
    expect(rows[0].textContent).toContain('claude-code (unix)');
    expect(rows[0].querySelector('[data-testid="task-progress"]')?.textContent).toContain('3 of 10 · indexing');
    expect(rows[0].querySelector('progress')).not.toBeNull();
    expect(rows[0].querySelector('[data-testid="task-age"]')?.textContent).toMatch(/^1m\d\ds$/);
    expect(rows[1].textContent).toContain('cursor (http)');
    expect(rows[1].querySelector('[data-testid="task-cancel"]')).toBeNull(); // ended: nothing to cancel
    // The Activity tab counts the running ones.
    expect($('tab-activity')?.querySelector('[data-testid="tab-count"]')?.textContent).toBe('1');

    (rows[0].querySelector('[data-testid="task-cancel"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(calls).toContainEqual(['cancelTask', 'task-a']));

    send(sock, 'event', 'tasks', { kind: 'ended', task: task('task-a', { status: 'cancelled', statusMessage: 'cancelled by the user on the dashboard' }) });
    const a = $$('task-row').find((r) => r.dataset.taskId === 'task-a')!;
    expect(a.dataset.status).toBe('cancelled');
    expect(a.textContent).toContain('cancelled by the user on the dashboard');
    expect($('tab-activity')?.querySelector('[data-testid="tab-count"]')).toBeNull();
    send(sock, 'event', 'tasks', { kind: 'removed', task: task('task-a') });
    send(sock, 'event', 'tasks', { kind: 'removed', task: task('task-b') });
    expect($('tasks')).toBeNull();
  });
});
