// @vitest-environment jsdom
// The Processes view with the real xterm.js terminal mounted in jsdom (it renders with the DOM
// renderer): output from process:<id> reaches the terminal, and the buttons call the control API.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';
import type { Control } from './lib/control';
import type { ProcessInfo } from './lib/types';
import { SocketRecorder, hubMsg, type FakeSocket } from './test/fakeSocket';
import { viewShown } from './test/view';

// jsdom has no matchMedia; xterm asks it for the device pixel ratio. Real browsers have it.
beforeAll(() => {
  if (typeof window.matchMedia !== 'function') {
    window.matchMedia = ((query: string) => ({
      matches: false,
      media: query,
      onchange: null,
      addListener() {},
      removeListener() {},
      addEventListener() {},
      removeEventListener() {},
      dispatchEvent: () => false,
    })) as unknown as typeof window.matchMedia;
  }
});

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  window.location.hash = '';
});

const $ = (id: string) => document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
const $$ = (id: string) => [...document.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

function proc(id: string, status: string, extra: Partial<ProcessInfo> = {}): ProcessInfo {
  return { id, command: 'sh', args: ['-c', 'echo hi'], dir: '/w', status, pid: 4242, exitCode: 0, startedAt: new Date().toISOString(), duration: 1_500_000_000, pty: false, outputBytes: 0, droppedBytes: 0, ...extra };
}

async function start(hash = '#processes') {
  const rec = new SocketRecorder();
  const calls: unknown[][] = [];
  const rec1 =
    (name: string, result: unknown = {}) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return result as never;
    };
  const control: Control = {
    kind: 'http',
    bootstrap: rec1('bootstrap', { hubUrl: 'ws://127.0.0.1:7001/ws', hubToken: 't', version: 'v', workspace: '/w' }),
    transports: rec1('transports', { transports: [] }),
    setTransport: rec1('setTransport'),
    toolsets: rec1('toolsets', { toolsets: [] }),
    setToolset: rec1('setToolset', { toolsets: [] }),
    startProcess: rec1('startProcess', proc('proc-9', 'running')),
    stopProcess: rec1('stopProcess'),
    killProcess: rec1('killProcess'),
    cancelTask: rec1('cancelTask'),
    sendInput: rec1('sendInput'),
    createIDESession: rec1('createIDESession'),
    sendChat: rec1('sendChat'),
    clientConfig: rec1('clientConfig'),
    approvals: rec1('approvals'),
    decideApproval: rec1('decideApproval'),
    grantWorkspace: rec1('grantWorkspace'),
    ragCollections: rec1('ragCollections', { collections: [] }),
    ragQuery: rec1('ragQuery'),
    listClients: rec1('listClients', { clients: [], project: '/w' }),
    previewClient: rec1('previewClient'),
    applyClient: rec1('applyClient'),
    listServers: rec1('listServers', { servers: [], configPath: '' }),
    serverLogs: rec1('serverLogs', { name: '', lines: [] }),
    approveServer: rec1('approveServer'),
    approveServerCommand: rec1('approveServerCommand'),
    restartServer: rec1('restartServer'),
    loginServer: rec1('loginServer'),
    logoutServer: rec1('logoutServer'),
    setServerEnabled: rec1('setServerEnabled'),
    addServer: rec1('addServer'),
    removeServer: rec1('removeServer'),
    settings: rec1('settings'),
    previewSettings: rec1('previewSettings'),
    saveTransports: rec1('saveTransports'),
    saveToolsets: rec1('saveToolsets'),
    saveWorkspace: rec1('saveWorkspace'),
    savePolicy: rec1('savePolicy'),
    testPolicy: rec1('testPolicy'),
    saveML: rec1('saveML'),
    saveRAG: rec1('saveRAG'),
    setAutostart: rec1('setAutostart'),
    saveSecurity: rec1('saveSecurity'),
    regenerateToken: rec1('regenerateToken'),
    clientTokens: rec1('clientTokens'),
    issueClientToken: rec1('issueClientToken'),
    revokeClientToken: rec1('revokeClientToken'),
    saveTasks: rec1('saveTasks'),
    saveWeb: rec1('saveWeb'),
    saveCode: rec1('saveCode'),
    setRAGAPIKey: rec1('setRAGAPIKey'),
    grants: rec1('grants', { enabled: false, grants: [], tls: false }),
    revokeGrant: rec1('revokeGrant', { enabled: false, grants: [], tls: false }),
    audit: rec1('audit'),
    hubLog: rec1('hubLog'),
    project: rec1('project'),
    setProject: rec1('setProject'),
    pickProject: rec1('pickProject'),
  };
  window.location.hash = hash;
  app = mount(App, {
    target: document.body,
    props: { control, dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn() } },
  });
  await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
  rec.last.serverOpen();
  flushSync();
  await viewShown('processes');
  return { sock: rec.last, calls };
}

function send(sock: FakeSocket, type: string, channel: string, data: unknown) {
  sock.serverSend(hubMsg(type, channel, data));
  flushSync();
}

describe('Processes view', () => {
  it('starts a process from the form with shell-like arguments', async () => {
    const { calls } = await start();
    expect($('processes-empty')).not.toBeNull();
    const cmd = $('process-start-command') as HTMLInputElement;
    const args = $('process-start-args') as HTMLInputElement;
    cmd.value = 'sh';
    cmd.dispatchEvent(new Event('input'));
    args.value = `-c 'for i in 1 2 3; do echo $i; done'`;
    args.dispatchEvent(new Event('input'));
    flushSync();
    $('process-start')!.click();
    await vi.waitFor(() => expect(calls).toContainEqual(['startProcess', 'sh', ['-c', 'for i in 1 2 3; do echo $i; done']]));
  });

  it('follows output in the terminal, sends input, stops and kills', async () => {
    const { sock, calls } = await start();
    send(sock, 'snapshot', 'processes', { processes: [proc('proc-1', 'running'), proc('proc-2', 'exited', { exitCode: 2 })] });
    const rows = $$('process-row');
    expect(rows.map((r) => r.dataset.status).sort()).toEqual(['exited', 'running']);
    rows.find((r) => r.dataset.processId === 'proc-1')!.click();
    flushSync();
    expect(sock.frames()).toContainEqual({ type: 'subscribe', channel: 'process:proc-1' });

    const out = $('process-output')!;
    send(sock, 'snapshot', 'process:proc-1', { process: proc('proc-1', 'running'), output: 'hello\n', offset: 6 });
    expect(out.dataset.chars).toBe('6');
    send(sock, 'event', 'process:proc-1', { kind: 'output', stream: 'stdout', data: 'hello\n', offset: 0 }); // already shown
    send(sock, 'event', 'process:proc-1', { kind: 'output', stream: 'stdout', data: '\x1b[31mred\x1b[0m\n', offset: 6 });
    await vi.waitFor(() => expect(out.dataset.chars).toBe(String(6 + '\x1b[31mred\x1b[0m\n'.length)));
    await vi.waitFor(() => expect(out.querySelector('.xterm-rows')?.textContent ?? '').toContain('red'));

    const input = $('process-input') as HTMLInputElement;
    input.value = 'yes';
    input.dispatchEvent(new Event('input'));
    flushSync();
    $('process-input-send')!.click();
    await vi.waitFor(() => expect(calls).toContainEqual(['sendInput', 'proc-1', 'yes\n']));

    await vi.waitFor(() => expect(($('process-stop') as HTMLButtonElement).disabled).toBe(false));
    $('process-stop')!.click();
    await vi.waitFor(() => expect(calls).toContainEqual(['stopProcess', 'proc-1']));
    await vi.waitFor(() => expect(($('process-kill') as HTMLButtonElement).disabled).toBe(false));
    $('process-kill')!.click();
    await vi.waitFor(() => expect(calls).toContainEqual(['killProcess', 'proc-1']));

    // The status event on the detail channel disables the controls at once.
    send(sock, 'event', 'process:proc-1', { kind: 'status', process: proc('proc-1', 'killed', { exitCode: -1 }) });
    expect($('process-detail-status')?.dataset.status).toBe('killed');
    expect(($('process-stop') as HTMLButtonElement).disabled).toBe(true);
    expect(($('process-input') as HTMLInputElement).disabled).toBe(true);
  });

  it('a #processes/<id> link opens that process once the list has it', async () => {
    const { sock } = await start('#processes/proc-2');
    expect($('process-output')).toBeNull();
    send(sock, 'snapshot', 'processes', { processes: [proc('proc-1', 'running'), proc('proc-2', 'exited', { exitCode: 2 })] });
    expect($('process-output')?.dataset.processId).toBe('proc-2');
    expect(sock.frames()).toContainEqual({ type: 'subscribe', channel: 'process:proc-2' });
    expect($('process-exit-code')?.textContent).toBe('exit 2');
    expect($('process-detail-status')?.className).toContain('tone-bad'); // non-zero exit
    expect(($('process-stop') as HTMLButtonElement).disabled).toBe(true);
  });
});
