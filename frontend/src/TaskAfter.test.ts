// @vitest-environment jsdom
// Settings › Tasks (views/settings/TaskAfter.svelte) against a fake control: what is in force, a
// value the hub would refuse kept from being sent, a save ("off"), and the hub's refusal shown.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import TaskAfter from './views/settings/TaskAfter.svelte';
import type { TaskAfterInput, TaskSettings } from './lib/generated/app';
import type { TaskAfterControl } from './lib/settings/taskafter';

let view: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (view) unmount(view);
  view = undefined;
  document.body.innerHTML = '';
});

const q = <T extends Element = HTMLElement>(id: string) => document.querySelector<T>(`[data-testid="${id}"]`);

function type(value: string) {
  const input = q<HTMLInputElement>('settings-tasks-after')!;
  input.value = value;
  input.dispatchEvent(new Event('input'));
  flushSync();
}

describe('Settings › Tasks', () => {
  it('shows task_after in force, checks the value and saves it', async () => {
    let file: TaskSettings = { saved: '', running: '45s', default: '45s' };
    const sent: TaskAfterInput[] = [];
    const control: TaskAfterControl = {
      taskSettings: vi.fn(async () => file),
      saveTaskAfter: vi.fn(async (in_: TaskAfterInput) => {
        sent.push(in_);
        if (in_.taskAfter === '2h') throw new Error('save task_after: the config file changed on disk; reload');
        file = { saved: in_.taskAfter === 'off' ? '0s' : in_.taskAfter, running: in_.taskAfter === 'off' ? '0s' : in_.taskAfter, default: '45s' };
        return { path: '/home/u/.config/switchboard/config.toml', diff: '+task_after = "0s"', note: 'In force now: calls are never handed back as tasks.', tasks: file };
      }),
    };
    view = mount(TaskAfter, { target: document.body, props: { control } });
    await vi.waitFor(() => expect(q('settings-tasks-in-force')?.textContent).toContain('after 45s (the default)'));
    const save = q<HTMLButtonElement>('settings-tasks-save')!;
    expect(save.disabled).toBe(true); // nothing changed yet

    type('500ms');
    expect(save.disabled).toBe(true);
    expect(q('settings-tasks-field-error')?.textContent).toContain('at least "1s"');
    type('soon');
    expect(q('settings-tasks-field-error')?.textContent).toContain('not a duration');

    type(' off ');
    expect(q('settings-tasks-field-error')).toBeNull();
    expect(save.disabled).toBe(false);
    save.click();
    await vi.waitFor(() => expect(q('settings-tasks-saved')?.textContent).toContain('never handed back'));
    expect(sent).toEqual([{ taskAfter: 'off' }]);
    expect(q('settings-tasks-in-force')?.textContent).toMatch(/^Off/);
    expect(q<HTMLInputElement>('settings-tasks-after')!.value).toBe('0s');
    expect(save.disabled).toBe(true); // the form is the file again

    type('2h');
    save.click();
    await vi.waitFor(() => expect(q('settings-tasks-error')?.textContent).toContain('config file changed'));
    expect(q('settings-tasks-saved')).toBeNull();
  });
});
