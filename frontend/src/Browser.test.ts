// @vitest-environment jsdom
// The Browser view: subscribes to the hub's "browser" channel while open, shows the active tab's
// title, URL and screenshot, the tabs and the console tail, and unsubscribes when left.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';
import type { Control } from './lib/control';
import { SocketRecorder, hubMsg } from './test/fakeSocket';
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

async function start() {
  const rec = new SocketRecorder();
  const ok = async () => ({}) as never;
  const control = {
    kind: 'http',
    bootstrap: async () => ({ hubUrl: 'ws://127.0.0.1:7001/ws', hubToken: 't', version: 'v', workspace: '/w' }),
    transports: async () => ({ transports: [] }),
    toolsets: async () => ({ toolsets: [] }),
    approvals: async () => ({ approvals: [], policy: null }),
    setTransport: ok, startProcess: ok, stopProcess: ok, killProcess: ok, sendInput: ok, cancelTask: ok,
    createIDESession: ok, sendChat: ok, clientConfig: ok,
  } as unknown as Control;
  window.location.hash = '#browser';
  app = mount(App, {
    target: document.body,
    props: { control, dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn() } },
  });
  await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
  rec.last.serverOpen();
  flushSync();
  await viewShown('browser');
  return rec.last;
}

const pixel = 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQH/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==';

describe('Browser view', () => {
  it('shows what the agent sees: title, URL, tabs, screenshot and console', async () => {
    const sock = await start();
    expect(sock.frames()).toContainEqual({ type: 'subscribe', channel: 'browser' });
    sock.serverSend(hubMsg('snapshot', 'browser', { state: { connected: false, launched: false, url: '', title: '', tabs: [] }, screenshot: '', console: [] }));
    flushSync();
    expect($('browser-empty')?.textContent).toContain('webview_launch');

    const state = {
      connected: true, launched: true, endpoint: 'ws://127.0.0.1:9/devtools/browser/x', url: 'http://127.0.0.1:8080/form', title: 'Sign up',
      tabs: [{ id: 'T1', url: 'http://127.0.0.1:8080/form', title: 'Sign up', active: true }, { id: 'T2', url: 'about:blank', title: '', active: false }],
    };
    sock.serverSend(hubMsg('event', 'browser', { state, screenshot: pixel, shotAt: '2025-01-01T00:00:01Z', console: [
      { type: 'log', text: 'hello', timestamp: '2025-01-01T00:00:01Z' },
      { type: 'exception', text: 'Error: boom', timestamp: '2025-01-01T00:00:02Z', url: 'http://127.0.0.1:8080/app.js', line: 7 },
    ] }));
    flushSync();
    expect($('browser')?.dataset.connected).toBe('true');
    expect($('browser-mode')?.textContent).toBe('launched');
    expect($('browser-title')?.textContent).toBe('Sign up');
    expect($('browser-url')?.textContent).toBe('http://127.0.0.1:8080/form');
    expect(($('browser-screenshot') as HTMLImageElement).src).toBe(pixel);
    expect($$('browser-tab')).toHaveLength(2);
    const lines = $$('browser-console-line');
    expect(lines.map((l) => l.dataset.type)).toEqual(['exception', 'log']); // newest first
    expect(lines[0].textContent).toContain('/app.js:7');

    // More console output appends; a disconnect clears the picture.
    sock.serverSend(hubMsg('event', 'browser', { state: { ...state, connected: false, tabs: [] }, screenshot: '', console: [{ type: 'warning', text: 'bye', timestamp: '2025-01-01T00:00:03Z' }] }));
    flushSync();
    expect($('browser-empty')).not.toBeNull();
    expect($('browser-screenshot')).toBeNull();
    expect($$('browser-console-line')).toHaveLength(3);

    // Leaving the view unsubscribes, so the hub stops taking screenshots.
    $('tab-activity')!.click();
    flushSync();
    expect(sock.frames()).toContainEqual({ type: 'unsubscribe', channel: 'browser' });
  });
});
