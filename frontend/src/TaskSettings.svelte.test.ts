// @vitest-environment jsdom
// Settings › Tasks (views/settings/TaskAfter.svelte) on the Settings editor with a fake control:
// what is in force, a value the hub would refuse shown beside the field before it is sent, the
// save through the Save bar's saveAll ("off") with the hub's answer, and a refusal shown beside
// task_after with what was typed kept. The section has no Save button of its own.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import TaskAfter from './views/settings/TaskAfter.svelte';
import type { TaskAfterInput } from './lib/generated/app';
import { SettingsEditor, type SettingsControl } from './lib/settings/editor.svelte';
import type { Settings, SettingsChange } from './lib/types';
import { sampleSettings } from './test/settings';

let view: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (view) unmount(view);
  view = undefined;
  document.body.innerHTML = '';
});

async function mounted(saveTasks: SettingsControl['saveTasks']) {
  let current: Settings = sampleSettings();
  const control = { settings: vi.fn(async () => current), saveTasks } as unknown as SettingsControl;
  const ed = new SettingsEditor(control);
  await ed.load();
  const props = $state({ ed, settings: ed.settings! });
  view = mount(TaskAfter, { target: document.body, props });
  // As Settings.svelte does: the section gets the settings the editor holds.
  const follow = (s: Settings) => {
    current = s;
    props.settings = s;
  };
  return { ed, follow };
}

const q = <T extends Element = HTMLElement>(sel: string) => document.querySelector<T>(sel);
const text = (sel: string) => (q(sel)?.textContent ?? '').replace(/\s+/g, ' ');
const field = () => q<HTMLInputElement>('[data-testid="settings-tasks-after"]')!;

function type(value: string) {
  field().value = value;
  field().dispatchEvent(new Event('input'));
  flushSync();
}

describe('Settings › Tasks', () => {
  it('shows task_after in force, checks the value and saves it through the editor', async () => {
    const sent: TaskAfterInput[] = [];
    const { ed, follow } = await mounted(
      vi.fn(async (in_: TaskAfterInput): Promise<SettingsChange> => {
        sent.push(in_);
        return {
          path: '/home/u/.config/switchboard/config.toml',
          diff: '+task_after = "0s"',
          applies: 'now',
          note: 'In force from the next call: calls are never handed back as tasks.',
          settings: sampleSettings({ tasks: { saved: '0s', running: '0s', default: '45s' } }),
        };
      }),
    );
    expect(q('#settings-tasks')?.textContent).toBe('Tasks');
    expect(text('[data-testid="settings-tasks-in-force"]')).toContain('after 45s (the default)');
    expect(text('[data-section="tasks"]')).toContain('In force from the next call');
    expect(field().placeholder).toBe('45s');
    expect(document.querySelectorAll('[data-section="tasks"] button')).toHaveLength(0); // the Save bar saves it
    expect(ed.changed).toEqual([]);

    type('500ms');
    expect(text('[data-testid="settings-field-error"][data-field="task_after"]')).toContain('task_after: 500ms would turn almost every call into a task; write at least "1s"');
    type('soon');
    expect(text('[data-field="task_after"]')).toContain('not a duration');
    type(' off ');
    expect(q('[data-field="task_after"]')).toBeNull();
    expect(ed.changed).toEqual(['tasks']);
    expect(q('[data-testid="settings-unsaved-badge"][data-section="tasks"]')).not.toBeNull();

    await ed.saveAll();
    follow(ed.settings!);
    flushSync();
    expect(sent).toEqual([{ taskAfter: 'off' }]);
    expect(ed.outcome).toEqual({ saved: ['tasks'], refused: [] });
    expect(text('[data-testid="settings-saved"][data-section="tasks"]')).toContain('never handed back');
    expect(text('[data-testid="settings-tasks-in-force"]')).toMatch(/^Off/);
    expect(q<HTMLElement>('[data-testid="settings-tasks-in-force"]')?.dataset.running).toBe('0s');
    expect(field().value).toBe('0s');
    expect(ed.changed).toEqual([]);
  });

  it("shows the hub's refusal beside task_after, and keeps what was typed", async () => {
    const { ed } = await mounted(
      vi.fn(async () => {
        throw new Error('save tasks: HTTP 400: task_after: 48h0m0s is longer than any client waits; write at most "24h0m0s" (default "45s"), or "off"');
      }),
    );
    type('2m');
    await ed.saveAll();
    flushSync();
    expect(ed.outcome).toEqual({ saved: [], refused: ['tasks'] });
    expect(text('[data-testid="settings-field-error"][data-field="task_after"]')).toContain('longer than any client waits');
    expect(field().value).toBe('2m');
    expect(q('[data-testid="settings-saved"][data-section="tasks"]')).toBeNull();
  });
});
