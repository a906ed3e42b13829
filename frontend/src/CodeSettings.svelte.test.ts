// @vitest-environment jsdom
// Settings › Code intelligence (views/settings/CodeIntelligence.svelte) on the Settings editor
// with a fake control: each key with its value, default and what is in force; an edit marks the
// section changed; the save (the Save bar's saveAll) sends the form and shows the hub's answer;
// a refusal shows the hub's error beside the field it names.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import CodeIntelligence from './views/settings/CodeIntelligence.svelte';
import type { CodeInput, CodeSettings } from './lib/generated/app';
import { SettingsEditor, type SettingsControl } from './lib/settings/editor.svelte';
import type { Settings, SettingsChange } from './lib/types';
import { sampleSettings } from './test/settings';

let view: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (view) unmount(view);
  view = undefined;
  document.body.innerHTML = '';
});

const code: CodeSettings = {
  idle: '',
  idleDefault: '10m0s',
  idleRunning: '10m0s',
  servers: [
    { language: 'go', command: [], default: 'gopls', running: [], found: '/usr/local/bin/gopls' },
    { language: 'rust', command: [], default: 'rust-analyzer', running: [], found: '', error: 'rust: rust-analyzer not found; rustup component add rust-analyzer' },
  ],
};

async function mounted(saveCode: SettingsControl['saveCode']) {
  let current: Settings = sampleSettings({ code });
  const control = { settings: vi.fn(async () => current), saveCode } as unknown as SettingsControl;
  const ed = new SettingsEditor(control);
  await ed.load();
  const props = $state({ ed, settings: ed.settings! });
  view = mount(CodeIntelligence, { target: document.body, props });
  // As Settings.svelte does: the section gets the settings the editor holds.
  const follow = (s: Settings) => {
    current = s;
    props.settings = s;
  };
  return { ed, follow };
}

function input(testid: string, language?: string): HTMLInputElement {
  const scope = language ? `[data-language="${language}"] ` : '';
  return document.querySelector<HTMLInputElement>(`${scope}[data-testid="${testid}"]`)!;
}

/** An element's text with its runs of blanks as one space, as a reader sees it. */
function text(selector: string): string {
  return (document.querySelector(selector)?.textContent ?? '').replace(/\s+/g, ' ');
}

function type(el: HTMLInputElement, value: string) {
  el.value = value;
  el.dispatchEvent(new Event('input'));
  flushSync();
}

describe('Settings › Code intelligence', () => {
  it('shows each key, saves the form through the editor and shows what is in force after', async () => {
    const sent: CodeInput[] = [];
    const { ed, follow } = await mounted(
      vi.fn(async (in_: CodeInput): Promise<SettingsChange> => {
        sent.push(in_);
        const next: CodeSettings = {
          ...code,
          idle: in_.idle,
          idleRunning: '5m0s',
          servers: code.servers.map((s) => (s.language === 'go' ? { ...s, command: in_.servers.go, running: in_.servers.go, found: in_.servers.go.join(' ') } : s)),
        };
        return { path: '/home/u/.config/switchboard/config.toml', diff: '+[code]\n+idle = "5m"', applies: 'now', note: "a server command from its language's next start", settings: sampleSettings({ code: next }) };
      }),
    );
    expect(document.querySelector('#settings-code')?.textContent).toBe('Code intelligence');
    expect(input('settings-code-idle').placeholder).toBe('10m0s');
    expect(text('[data-testid="settings-code-idle-state"]')).toContain('in force now: 10m0s');
    expect(input('settings-code-command', 'go').placeholder).toBe('gopls');
    expect(document.querySelector('[data-language="go"] [data-testid="settings-code-found"]')?.textContent).toBe('/usr/local/bin/gopls');
    expect(document.querySelector('[data-language="rust"] [data-testid="settings-code-missing"]')?.textContent).toContain('rustup component add');
    expect(text('body')).toContain('next server start');
    expect(ed.changed).toEqual([]);

    type(input('settings-code-idle'), 'soon');
    expect(document.querySelector('[data-testid="settings-field-error"][data-field="code.idle"]')?.textContent).toContain('code.idle: "soon" is not a duration');
    type(input('settings-code-idle'), '5m');
    expect(document.querySelector('[data-field="code.idle"]')).toBeNull();
    type(input('settings-code-command', 'go'), ' /opt/gopls  -remote=auto ');
    expect(ed.changed).toEqual(['code']);
    expect(document.querySelector('[data-testid="settings-unsaved-badge"][data-section="code"]')).not.toBeNull();

    await ed.saveAll();
    follow(ed.settings!);
    flushSync();
    expect(sent).toEqual([{ idle: '5m', servers: { go: ['/opt/gopls', '-remote=auto'], rust: [] } }]);
    expect(ed.outcome).toEqual({ saved: ['code'], refused: [] });
    const saved = text('[data-testid="settings-saved"][data-section="code"]');
    expect(saved).toContain('in force now');
    expect(saved).toContain('next start');
    expect(text('[data-testid="settings-code-idle-state"]')).toContain('in force now: 5m0s');
    expect(document.querySelector('[data-language="go"] [data-testid="settings-code-found"]')?.textContent).toBe('/opt/gopls -remote=auto');
    expect(input('settings-code-command', 'go').value).toBe('/opt/gopls -remote=auto');
    expect(ed.changed).toEqual([]);
  });

  it("shows the hub's refusal beside the field it names, and keeps what was typed", async () => {
    const { ed } = await mounted(
      vi.fn(async () => {
        throw new Error("save code intelligence: HTTP 400: code.servers.go: /nope/gopls not found; give the program's full path");
      }),
    );
    type(input('settings-code-command', 'go'), '/nope/gopls');
    await ed.saveAll();
    flushSync();
    expect(ed.outcome).toEqual({ saved: [], refused: ['code'] });
    expect(document.querySelector('[data-language="go"] [data-testid="settings-field-error"][data-field="code.servers.go"]')?.textContent).toContain('/nope/gopls not found');
    expect(input('settings-code-command', 'go').value).toBe('/nope/gopls');
    expect(document.querySelector('[data-testid="settings-saved"][data-section="code"]')).toBeNull();
  });
});
