// @vitest-environment jsdom
// Settings › Code intelligence (views/settings/CodeIntelligence.svelte) against a fake control:
// each key with its value, default and what is in force; a save sends the form and shows the
// hub's answer; a refusal shows the hub's error naming the key.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import CodeIntelligence from './views/settings/CodeIntelligence.svelte';
import type { CodeInput, CodeSettings, Settings, SettingsChange } from './lib/generated/app';
import type { CodeSettingsControl } from './lib/settings/code';

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

function input(testid: string, language?: string): HTMLInputElement {
  const scope = language ? `[data-language="${language}"] ` : '';
  return document.querySelector<HTMLInputElement>(`${scope}[data-testid="${testid}"]`)!;
}

function type(el: HTMLInputElement, value: string) {
  el.value = value;
  el.dispatchEvent(new Event('input'));
  flushSync();
}

describe('Settings › Code intelligence', () => {
  it('shows each key, saves the form and shows what is in force after', async () => {
    const sent: CodeInput[] = [];
    const control: CodeSettingsControl = {
      saveCode: vi.fn(async (in_: CodeInput): Promise<SettingsChange> => {
        sent.push(in_);
        const next: CodeSettings = {
          ...code,
          idle: in_.idle,
          idleRunning: '5m0s',
          servers: code.servers.map((s) => (s.language === 'go' ? { ...s, command: in_.servers.go, running: in_.servers.go, found: in_.servers.go.join(' ') } : s)),
        };
        return { path: '/home/me/.config/switchboard/config.toml', diff: '+[code]\n+idle = "5m"', applies: 'now', note: 'In force now: a server command from that language\'s next start.', settings: { code: next } as Settings };
      }),
    };
    view = mount(CodeIntelligence, { target: document.body, props: { control, settings: { code } as Settings } });
    expect(document.querySelector('#settings-code')?.textContent).toBe('Code intelligence');
    expect(input('settings-code-idle').placeholder).toBe('10m0s');
    expect(document.querySelector('[data-testid="settings-code-idle-state"]')?.textContent).toContain('in force: 10m0s');
    expect(input('settings-code-command', 'go').placeholder).toBe('gopls');
    expect(document.querySelector('[data-language="go"] [data-testid="settings-code-found"]')?.textContent).toBe('/usr/local/bin/gopls');
    expect(document.querySelector('[data-language="rust"] [data-testid="settings-code-missing"]')?.textContent).toContain('rustup component add');
    expect(document.body.textContent).toContain("next start");

    const save = document.querySelector<HTMLButtonElement>('[data-testid="settings-code-save"]')!;
    expect(save.disabled).toBe(true); // nothing changed
    type(input('settings-code-idle'), 'soon');
    expect(document.querySelector('[data-testid="settings-code-idle-error"]')?.textContent).toContain('code.idle:');
    expect(save.disabled).toBe(true);
    type(input('settings-code-idle'), '5m');
    type(input('settings-code-command', 'go'), ' /opt/gopls  -remote=auto ');
    expect(document.querySelector('[data-testid="settings-code-unsaved"]')).not.toBeNull();
    expect(save.disabled).toBe(false);
    save.click();
    await vi.waitFor(() => expect(document.querySelector('[data-testid="settings-code-saved"]')?.textContent).toContain('next start'));
    expect(sent).toEqual([{ idle: '5m', servers: { go: ['/opt/gopls', '-remote=auto'], rust: [] } }]);
    expect(document.querySelector('[data-testid="settings-code-saved"]')?.textContent).toContain('idle = "5m"');
    expect(document.querySelector('[data-testid="settings-code-idle-state"]')?.textContent).toContain('in force: 5m0s');
    expect(document.querySelector('[data-language="go"] [data-testid="settings-code-found"]')?.textContent).toBe('/opt/gopls -remote=auto');
    expect(input('settings-code-command', 'go').value).toBe('/opt/gopls -remote=auto');
    expect(document.querySelector('[data-testid="settings-code-unsaved"]')).toBeNull();
  });

  it('shows the hub refusal naming the key, and keeps the form', async () => {
    const control: CodeSettingsControl = {
      saveCode: vi.fn(async () => {
        throw new Error('code.servers.go: /nope/gopls not found; give the program\'s full path');
      }),
    };
    view = mount(CodeIntelligence, { target: document.body, props: { control, settings: { code } as Settings } });
    type(input('settings-code-command', 'go'), '/nope/gopls');
    document.querySelector<HTMLButtonElement>('[data-testid="settings-code-save"]')!.click();
    await vi.waitFor(() => expect(document.querySelector('[data-testid="settings-code-error"]')?.textContent).toContain('code.servers.go:'));
    expect(input('settings-code-command', 'go').value).toBe('/nope/gopls');
    expect(document.querySelector('[data-testid="settings-code-saved"]')).toBeNull();
  });
});
