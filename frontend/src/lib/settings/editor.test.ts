import { describe, expect, it, vi } from 'vitest';
import { SettingsEditor, settingsEditor, type SettingsControl } from './editor.svelte';
import { sampleSettings } from '../../test/settings';
import type { Settings, SettingsChange } from '../types';

/** A control whose every method fails unless the test gives it. */
function fakeControl(over: Partial<SettingsControl> = {}): SettingsControl {
  const missing = (name: string) => () => Promise.reject(new Error(`${name}: not expected`));
  const names: (keyof SettingsControl)[] = [
    'settings', 'previewSettings', 'saveTransports', 'saveToolsets', 'saveWorkspace', 'savePolicy', 'testPolicy', 'saveML', 'saveRAG',
    'saveSecurity', 'saveWeb', 'saveCode', 'saveTasks', 'setRAGAPIKey', 'setAutostart', 'regenerateToken',
  ];
  const c = Object.fromEntries(names.map((n) => [n, vi.fn(missing(n))])) as unknown as SettingsControl;
  return Object.assign(c, over);
}

function change(settings: Settings, diff = '+x'): SettingsChange {
  return { path: settings.path, diff, applies: 'now', note: '', settings };
}

async function loaded(over: Partial<SettingsControl> = {}) {
  const control = fakeControl({ settings: vi.fn(async () => sampleSettings()), ...over });
  const ed = new SettingsEditor(control);
  await ed.load();
  return { ed, control };
}

describe('SettingsEditor', () => {
  it('fills every form when the settings are read; a failed read says why and keeps nothing', async () => {
    const { ed } = await loaded();
    expect(ed.settings?.path).toBe('/home/u/.config/switchboard/config.toml');
    expect(ed.transports.map((t) => t.name)).toEqual(['unix', 'tcp', 'http']);
    expect(ed.toolsets).toEqual(['files', 'process', 'git']);
    expect(ed.policy.rules).toHaveLength(2);
    expect(ed.ml.defaultBackend).toBe('gpu');
    expect(ed.rag.collection).toBe('hostuk-docs');
    expect(ed.web.allow).toBe('intranet.example');
    expect(ed.ragKey.ref).toBe('${secret:lab-qdrant}');
    expect(ed.busy).toBe('');

    const broken = new SettingsEditor(fakeControl({ settings: vi.fn(async () => Promise.reject(new Error('read settings: HTTP 500: boom'))) }));
    await broken.load();
    expect(broken.loadError).toBe('read settings: HTTP 500: boom');
    expect(broken.settings).toBeNull();
    expect(broken.busy).toBe('');
  });

  it('a save refills only its own section from the answer; the others keep what is being edited', async () => {
    const after = sampleSettings({ web: { allow: ['10.0.0.0/8'], timeout: '90s', envAllow: [] } });
    const saveWeb = vi.fn(async () => change(after));
    const { ed } = await loaded({ saveWeb });
    ed.web.allow = ' 10.0.0.0/8 \n';
    ed.web.timeout = '90s';
    ed.workspace = '/being/typed';
    let busyDuring = '';
    saveWeb.mockImplementationOnce(async () => {
      busyDuring = ed.busy;
      return change(after);
    });
    await ed.saveWeb();
    expect(busyDuring).toBe('web');
    expect(saveWeb).toHaveBeenCalledWith({ allow: ['10.0.0.0/8'], timeout: '90s' });
    expect(ed.saved.web?.diff).toBe('+x');
    expect(ed.settings).toBe(after);
    expect(ed.web).toEqual({ allow: '10.0.0.0/8', timeout: '90s' });
    expect(ed.workspace).toBe('/being/typed');
    expect(ed.busy).toBe('');
  });

  it('a refused save shows its errors by field and drops the section’s last confirmation', async () => {
    const saveTransports = vi.fn(async () => change(sampleSettings()));
    const { ed } = await loaded({ saveTransports });
    await ed.saveTransports();
    expect(ed.saved.transports).toBeDefined();
    saveTransports.mockRejectedValueOnce(new Error('save transports: HTTP 400: tcp.addr: address already in use\nconfig: not written'));
    await ed.saveTransports();
    expect(ed.saved.transports).toBeUndefined();
    expect(ed.errors.transports).toEqual({ fields: [{ field: 'tcp.addr', text: 'tcp.addr: address already in use' }], general: ['config: not written'] });
    // The next save starts without the old errors.
    await ed.saveTransports();
    expect(ed.errors.transports).toBeUndefined();
  });

  it('checks the rules and the RAG key before sending; leaving the key as it is sends nothing', async () => {
    const { ed, control } = await loaded();
    ed.policy.rules[0].args = 'no-name';
    await ed.savePolicy();
    expect(control.savePolicy).not.toHaveBeenCalled();
    expect(ed.errors.policy?.fields[0].field).toBe('policy.rules[1].args');

    await ed.saveRAGKey();
    expect(control.setRAGAPIKey).not.toHaveBeenCalled();
    ed.ragKey.mode = 'store';
    await ed.saveRAGKey();
    expect(control.setRAGAPIKey).not.toHaveBeenCalled();
    expect(ed.errors.ragkey?.fields[0].field).toBe('rag.api_key');
  });

  it('saves toolsets in the hub order, and the Default set button checks the default', async () => {
    const saveToolsets = vi.fn(async () => change(sampleSettings()));
    const { ed } = await loaded({ saveToolsets });
    ed.toolsets = ['git', 'ide'];
    await ed.saveToolsets();
    expect(saveToolsets).toHaveBeenCalledWith(['ide', 'git']);
    ed.toolsets = [];
    ed.defaultToolsets();
    expect(ed.toolsets).toEqual(['files', 'process', 'git']);
  });

  it('tests a call against the rules as edited, and shows what is wrong with it', async () => {
    const testPolicy = vi.fn(async () => ({ decision: 'deny', rule: 'rule 2', ruleIndex: 2 }));
    const { ed } = await loaded({ testPolicy });
    ed.test = { tool: 'exec', args: 'rm', client: '' };
    await ed.runTest();
    expect(testPolicy).not.toHaveBeenCalled();
    expect(ed.errors.test?.fields[0].field).toBe('args');

    ed.test.args = '{"command": "rm"}';
    await ed.runTest();
    expect(ed.errors.test).toBeUndefined();
    expect(testPolicy).toHaveBeenCalledWith(expect.objectContaining({ tool: 'exec', args: { command: 'rm' } }));
    expect(ed.decision?.decision).toBe('deny');

    testPolicy.mockRejectedValueOnce(new Error('test a call: HTTP 400: tool: empty'));
    await ed.runTest();
    expect(ed.decision).toBeNull();
    expect(ed.errors.test?.fields).toEqual([{ field: 'tool', text: 'tool: empty' }]);
  });

  it('regenerates a token and says where it went; a failure is the token’s error', async () => {
    const after = sampleSettings({ path: '/new' });
    const regenerateToken = vi.fn(async () => ({ token: 'client', path: '/t', diff: '', reconfigure: 'paste it', settings: after }));
    const { ed } = await loaded({ regenerateToken });
    expect(await ed.regenerate('client')).toBe(true);
    expect(ed.tokenDone?.path).toBe('/t');
    expect(ed.settings).toBe(after);
    regenerateToken.mockRejectedValueOnce(new Error('regenerate the client token: HTTP 500: disk full'));
    expect(await ed.regenerate('client')).toBe(false);
    expect(ed.tokenDone).toBeNull();
    expect(ed.errors.token?.general).toEqual(['disk full']);
  });

  it('re-reads only the login entry when Start at login was switched elsewhere', async () => {
    const settings = vi.fn(async () => sampleSettings());
    const { ed } = await loaded({ settings });
    ed.web.allow = 'typed';
    settings.mockResolvedValueOnce(sampleSettings({ autostart: { available: true, enabled: true, entry: '/e' }, path: '/other' }));
    await ed.refreshAutostart();
    expect(ed.settings?.autostart.enabled).toBe(true);
    expect(ed.settings?.path).toBe('/home/u/.config/switchboard/config.toml');
    expect(ed.web.allow).toBe('typed');
  });

  it('saves every changed section, and only those, in the view order; a refused one keeps its errors and what was typed', async () => {
    const saveTransports = vi.fn(async () => change(sampleSettings()));
    const saveWeb = vi.fn(async () => change(sampleSettings()));
    const savePolicy = vi.fn(async () => Promise.reject(new Error('save policy: HTTP 400: policy.rules[3]: "exec[" has an unclosed [')));
    const { ed, control } = await loaded({ saveTransports, saveWeb, savePolicy });
    expect(ed.changed).toEqual([]);
    ed.web.timeout = '90s';
    ed.transports[1].enabled = true;
    ed.policy.rules = [...ed.policy.rules, { tool: 'exec[', args: '', client: '', action: 'deny', origin: 0 }];
    expect(ed.changed).toEqual(['transports', 'policy', 'web']);
    await ed.saveAll();
    expect(saveTransports).toHaveBeenCalledTimes(1);
    expect(savePolicy).toHaveBeenCalledTimes(1);
    expect(saveWeb).toHaveBeenCalledTimes(1);
    expect(control.saveToolsets).not.toHaveBeenCalled();
    expect(ed.outcome).toEqual({ saved: ['transports', 'web'], refused: ['policy'] });
    expect(ed.saved.transports?.diff).toBe('+x');
    expect(ed.errors.policy?.fields).toEqual([{ field: 'policy.rules[3]', text: 'policy.rules[3]: "exec[" has an unclosed [' }]);
    // The saved sections are clean again; the refused one still holds what was typed.
    expect(ed.changed).toEqual(['policy']);
    expect(ed.policy.rules.at(-1)?.tool).toBe('exec[');
  });

  it('discards every unsaved change, and their errors', async () => {
    const { ed } = await loaded();
    ed.workspace = '/elsewhere';
    ed.ragKey.mode = 'remove';
    ed.formError('policy', 'policy.default', 'bad');
    expect(ed.changed).toEqual(['workspace', 'rag']);
    ed.discard();
    expect(ed.changed).toEqual([]);
    expect(ed.errors).toEqual({});
  });

  it('is kept per dashboard: opened again, it keeps unsaved changes, and reads the file again when there are none', async () => {
    const settings = vi.fn(async () => sampleSettings());
    const control = fakeControl({ settings });
    const ed = settingsEditor(control);
    expect(settingsEditor(control)).toBe(ed);
    expect(settingsEditor(fakeControl())).not.toBe(ed);
    await ed.open();
    expect(settings).toHaveBeenCalledTimes(1);
    ed.web.timeout = '90s';
    await ed.open(); // the tab shown again
    expect(settings).toHaveBeenCalledTimes(1);
    expect(ed.web.timeout).toBe('90s');
    ed.discard();
    await ed.open();
    expect(settings).toHaveBeenCalledTimes(2);
  });

  it('reviews the changed sections before writing: their diffs, the refusals beside their fields, put away by an edit', async () => {
    const previewSettings = vi.fn(async (input: object) => ({
      path: '/c.toml',
      sections: Object.keys(input).map((section) =>
        section === 'web' ? { section, diff: '', error: 'web.allow: "https://x/" is a URL; write its host: x' } : { section, diff: `+${section}`, applies: 'now' },
      ),
    }));
    const { ed, control } = await loaded({ previewSettings });
    ed.transports[1].enabled = true;
    ed.web.allow = 'https://x/';
    ed.policy.rules = [...ed.policy.rules, { tool: 'exec', args: 'no equals sign', client: '', action: 'deny', origin: 0 }];
    await ed.reviewChanges();
    // Only the changed sections travel; a rule that does not parse is refused here.
    expect(Object.keys(previewSettings.mock.calls[0][0])).toEqual(['transports', 'web']);
    expect(ed.reviewed?.sections.map((x) => [x.section, x.diff, Boolean(x.error)])).toEqual([
      ['transports', '+transports', false],
      ['policy', '', true],
      ['web', '', true],
    ]);
    expect(ed.reviewRefused).toBe(true);
    expect(ed.errors.web?.fields[0].field).toBe('web.allow');
    expect(ed.errors.policy?.fields[0].field).toBe('policy.rules[3].args');
    expect(control.saveTransports).not.toHaveBeenCalled();
    // Any edit puts the review away; typed back, it shows again.
    ed.web.allow = 'x';
    expect(ed.reviewed).toBeNull();
    ed.web.allow = 'https://x/';
    expect(ed.reviewed).not.toBeNull();
    ed.discard();
    expect(ed.reviewed).toBeNull();
  });

  it('reviews and saves task_after with the other sections: "off" is the file\'s "0s", and a refusal names task_after', async () => {
    const previewSettings = vi.fn(async (input: object) => ({
      path: '/c.toml',
      sections: Object.keys(input).map((section) => ({ section, diff: '+task_after = "0s"', applies: 'now' })),
    }));
    const after = sampleSettings({ tasks: { saved: '0s', running: '0s', default: '45s' } });
    const saveTasks = vi.fn(async () => change(after));
    const { ed } = await loaded({ previewSettings, saveTasks });
    expect(ed.tasks).toEqual({ taskAfter: '' });
    ed.tasks.taskAfter = ' off ';
    expect(ed.changed).toEqual(['tasks']);
    await ed.reviewChanges();
    expect(previewSettings.mock.calls[0][0]).toEqual({ tasks: { taskAfter: 'off' } });
    expect(ed.reviewed?.sections).toEqual([{ section: 'tasks', diff: '+task_after = "0s"', applies: 'now' }]);
    await ed.saveAll();
    expect(saveTasks).toHaveBeenCalledWith({ taskAfter: 'off' });
    expect(ed.outcome).toEqual({ saved: ['tasks'], refused: [] });
    expect(ed.tasks).toEqual({ taskAfter: '0s' });
    // "off" and the file's "0s" are the same value: nothing is left to save.
    ed.tasks.taskAfter = 'off';
    expect(ed.changed).toEqual([]);

    ed.tasks.taskAfter = '2h';
    saveTasks.mockRejectedValueOnce(new Error('save tasks: HTTP 400: task_after: the config file changed on disk; reload'));
    await ed.saveAll();
    expect(ed.outcome).toEqual({ saved: [], refused: ['tasks'] });
    expect(ed.errors.tasks?.fields).toEqual([{ field: 'task_after', text: 'task_after: the config file changed on disk; reload' }]);
    expect(ed.tasks.taskAfter).toBe('2h');
  });
});
