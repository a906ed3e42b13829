// @vitest-environment jsdom
// The Code view: the language servers from the `code` hub channel (subscribed only while the
// view is open), the chosen server's diagnostics per file as they change, the project runs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';
import type { Control } from './lib/control';
import { SocketRecorder, hubMsg } from './test/fakeSocket';

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  window.location.hash = '';
});

const $ = (id: string) => document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
const $$ = (id: string) => [...document.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

const gopls = {
  workspace: '/w/app',
  language: 'go',
  command: '/usr/bin/gopls',
  state: 'ready',
  pid: 7,
  server: 'gopls v0.23.0',
  startedAt: '2026-01-01T00:00:00Z',
  lastUsed: '2026-01-01T00:00:05Z',
  restarts: 0,
  memoryBytes: 64 * 1024 * 1024,
  openFiles: 2,
  sandbox: 'landlock',
};

describe('Code view', () => {
  it('shows the servers, the chosen one’s diagnostics live, and the project runs', async () => {
    const rec = new SocketRecorder();
    const control = {
      kind: 'http',
      bootstrap: async () => ({ hubUrl: 'ws://127.0.0.1:7001/ws', hubToken: 't', version: 'v', workspace: '/w/app' }),
      transports: async () => ({ transports: [] }),
      toolsets: async () => ({ toolsets: [] }),
      approvals: async () => ({ approvals: [], policy: null }),
    } as unknown as Control;
    window.location.hash = '#code';
    app = mount(App, { target: document.body, props: { control, dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn() } } });
    await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
    const sock = rec.last;
    sock.serverOpen();
    await vi.waitFor(() => expect(sock.frames().map((f) => f.channel)).toContain('code'));
    sock.serverSend(hubMsg('snapshot', 'code', { servers: [], files: [], runs: [] }));
    await vi.waitFor(() => expect($('code-empty')).not.toBeNull());
    expect($('code-runs-empty')).not.toBeNull();

    sock.serverSend(hubMsg('event', 'code', { servers: [gopls], files: [], runs: [] }));
    await vi.waitFor(() => expect($$('code-server')).toHaveLength(1));
    expect($('code-server')?.dataset.state).toBe('ready');
    expect($('code-server-memory')?.textContent).toBe('64.0 MiB');
    $('code-server')!.click();
    flushSync();
    await vi.waitFor(() => expect($('code-no-diagnostics')).not.toBeNull());
    expect($('code-detail-info')?.textContent).toContain('gopls v0.23.0');
    expect(window.location.hash).toBe(`#code/${encodeURIComponent('/w/app|go')}`);

    sock.serverSend(
      hubMsg('event', 'code', {
        servers: [gopls],
        files: [{ workspace: '/w/app', language: 'go', path: 'a/a.go', diagnostics: [{ path: 'a/a.go', line: 7, column: 2, severity: 'error', message: 'cannot use s', source: 'compiler' }] }],
        runs: [{ workspace: '/w/app', action: 'test', command: 'go test -json ./...', source: 'go.mod', process: 'proc-1', success: false, exitCode: 1, duration: 2e9, finished: '2026-01-01T00:00:09Z', failures: [{ path: 'a/a_test.go', line: 9, test: 'TestA', message: 'boom' }], output: 'FAIL' }],
      }),
    );
    await vi.waitFor(() => expect($$('code-diagnostic')).toHaveLength(1));
    expect($('code-diagnostic')?.dataset.severity).toBe('error');
    expect($('code-diagnostic')?.textContent).toContain('7:2');
    expect($('code-diagnostic-counts')?.textContent).toBe('1 error, 0 warnings');
    expect($('code-run')?.dataset.success).toBe('false');
    expect($('code-run-failure')?.textContent).toContain('TestA');

    // The server crashed: its state and error show.
    sock.serverSend(hubMsg('event', 'code', { servers: [{ ...gopls, state: 'ended', pid: 0, lastError: 'exit status 2' }], files: [], runs: [] }));
    await vi.waitFor(() => expect($('code-detail-error')?.textContent).toBe('exit status 2'));
    expect($('code-server')?.dataset.state).toBe('ended');
  });
});
