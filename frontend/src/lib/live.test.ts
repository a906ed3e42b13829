import { describe, expect, it } from 'vitest';
import { ChannelStore, Dashboard } from './live.svelte';
import { HubClient } from './hub';
import { initialActivity, reduceActivity } from './reducers';
import type { Control } from './control';
import { SocketRecorder, hubMsg } from '../test/fakeSocket';

function connectedHub() {
  const rec = new SocketRecorder();
  const hub = new HubClient({ url: 'ws://127.0.0.1:1/ws', token: 't', createSocket: rec.create });
  hub.connect();
  rec.last.serverOpen();
  return { hub, rec };
}

const call = (tool: string) => ({ time: '2025-01-01T00:00:00Z', tool, session: 's', transport: 'unix', level: 'INFO', outcome: 'ok', durationMs: 1, args: '' });

describe('ChannelStore', () => {
  it('reduces every message but publishes once per frame', () => {
    const { hub, rec } = connectedHub();
    const frames: (() => void)[] = [];
    const store = new ChannelStore(hub, 'activity', reduceActivity, initialActivity, (fn) => frames.push(fn));
    expect(rec.last.frames()).toEqual([{ type: 'subscribe', channel: 'activity' }]);
    expect(store.loaded).toBe(false);

    rec.last.serverSend(hubMsg('snapshot', 'activity', { events: [call('a')] }));
    for (let i = 0; i < 100; i++) rec.last.serverSend(hubMsg('event', 'activity', call(`t${i}`)));
    expect(frames).toHaveLength(1); // one publication scheduled for the whole burst
    expect(store.value.entries).toHaveLength(0); // not published yet
    frames.shift()!();
    expect(store.value.entries).toHaveLength(101);
    expect(store.loaded).toBe(true);

    // Messages that change nothing schedule nothing.
    rec.last.serverSend(hubMsg('event', 'activity', { bogus: true }));
    expect(frames).toHaveLength(0);

    store.dispose();
    expect(rec.last.frames()).toContainEqual({ type: 'unsubscribe', channel: 'activity' });
    rec.last.serverSend(hubMsg('event', 'activity', call('late')));
    expect(frames).toHaveLength(0);
    hub.close();
  });
});

describe('Dashboard', () => {
  const boot = { hubUrl: 'ws://127.0.0.1:1/ws', hubToken: 'tok', version: 'v', workspace: '/w' };

  it('turns a failed control call into a notice and dismisses it', async () => {
    const rec = new SocketRecorder();
    const control = {
      transports: async () => ({ transports: [] }),
      toolsets: async () => ({ toolsets: [] }),
      stopProcess: async () => {
        throw new Error('stop p-1: HTTP 404: id: no process "p-1"');
      },
    } as unknown as Control;
    const d = new Dashboard(control, boot, { createSocket: rec.create, tickMs: 0, frame: (fn) => fn() });
    d.start();
    const res = await d.run(() => control.stopProcess('p-1'));
    expect(res.ok).toBe(false);
    expect(d.notices.map((n) => n.text)).toEqual(['stop p-1: HTTP 404: id: no process "p-1"']);
    d.dismiss(d.notices[0].id);
    expect(d.notices).toEqual([]);
    const ok = await d.run(async () => 42);
    expect(ok).toEqual({ ok: true, value: 42 });
    d.dispose();
    expect(rec.last.closedByClient).toBe(true);
  });

  it('fills transports from the control API until the hub snapshot arrives, then the hub wins', async () => {
    const rec = new SocketRecorder();
    const control = {
      transports: async () => ({ transports: [{ name: 'tcp', running: false, addr: 'api' }] }),
      toolsets: async () => ({ toolsets: [] }),
    } as unknown as Control;
    const d = new Dashboard(control, boot, { createSocket: rec.create, tickMs: 0, frame: (fn) => fn() });
    d.start();
    await Promise.resolve();
    await Promise.resolve();
    expect(d.transports.value.transports.map((t) => t.addr)).toEqual(['api']);
    rec.last.serverOpen();
    rec.last.serverSend(hubMsg('snapshot', 'transports', { transports: [{ name: 'tcp', running: true, addr: 'hub' }] }));
    expect(d.transports.value.transports.map((t) => t.addr)).toEqual(['hub']);
    expect(d.transports.loaded).toBe(true);
    d.dispose();
  });
});
