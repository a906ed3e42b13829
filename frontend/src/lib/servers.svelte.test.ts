import { afterEach, describe, expect, it, vi } from 'vitest';
import { reduceServers, LOG_POLL_MS, type ServersState } from './servers';
import { ServerLogFeed, ServersController, type ServersControl, type ServersDeps } from './servers.svelte';
import { server, tool } from '../test/servers';
import type { HubMessage, ServerChange, ServerStatus } from './types';

/** The Dashboard as the view uses it: a servers store, a control, and run turning failures into notices. */
function deps(over: Partial<ServersControl> = {}, list: ServerStatus[] = []) {
  const missing = (name: string) => () => Promise.reject(new Error(`${name}: not expected`));
  const names: (keyof ServersControl)[] = [
    'listServers',
    'serverLogs',
    'approveServer',
    'approveServerCommand',
    'restartServer',
    'loginServer',
    'logoutServer',
    'setServerEnabled',
    'addServer',
    'removeServer',
  ];
  const control = Object.assign(Object.fromEntries(names.map((n) => [n, vi.fn(missing(n))])) as unknown as ServersControl, over);
  const notices: string[] = [];
  const store = {
    value: { servers: list } as ServersState,
    loaded: false,
    apply(msg: HubMessage) {
      this.value = reduceServers(this.value, msg);
    },
  };
  const d: ServersDeps = {
    control,
    servers: store,
    async run<T>(action: () => Promise<T>) {
      try {
        return { ok: true as const, value: await action() };
      } catch (err) {
        notices.push((err as Error).message);
        return { ok: false as const };
      }
    },
  };
  return { d, control, store, notices };
}

const change = (servers: ServerStatus[], path = '/c/config.toml'): ServerChange => ({ path, diff: '+x', servers }) as ServerChange;

afterEach(() => vi.useRealTimers());

describe('ServersController', () => {
  it('takes the API’s list until the hub’s snapshot came, and the config file’s path', async () => {
    const { d, store } = deps({ listServers: vi.fn(async () => ({ configPath: '/c/config.toml', servers: [server('a')] })) });
    const ctl = new ServersController(d);
    expect(ctl.loaded).toBe(false);
    await ctl.refresh();
    expect(ctl.configPath).toBe('/c/config.toml');
    expect(ctl.loaded).toBe(true);
    expect(ctl.servers.map((s) => s.name)).toEqual(['a']);
    // Once the hub's snapshot came, an answer computed earlier does not undo it.
    store.loaded = true;
    store.value = { servers: [server('b')] };
    await ctl.refresh();
    expect(ctl.servers.map((s) => s.name)).toEqual(['b']);
    expect(ctl.busy).toBe('');
  });

  it('approves the command, then the tools, closing the panel; a failed approval is a notice', async () => {
    const waiting = server('a', { command_approved: false, approved: false, state: 'unapproved' });
    const approveServerCommand = vi.fn(async () => ({ ...waiting, command_approved: true, state: 'running', tools: [tool('greet', 'quarantined')] }));
    const approveServer = vi.fn(async () => server('a', { tools: [tool('greet', 'approved')] }));
    const { d, notices } = deps({ approveServerCommand, approveServer }, [waiting]);
    const ctl = new ServersController(d);
    ctl.openApprove(waiting);
    expect(ctl.approvingServer?.name).toBe('a');
    await ctl.approveCommand(waiting);
    expect(approveServerCommand).toHaveBeenCalledWith('a', 'hash-a');
    expect(ctl.servers[0].command_approved).toBe(true);
    ctl.settleApproval();
    expect(ctl.approving).toBe('a'); // the tools are next
    await ctl.approve(ctl.servers[0], []);
    expect(approveServer).toHaveBeenCalledWith('a', []);
    expect(ctl.approving).toBe('');
    expect(ctl.servers[0].tools?.[0].state).toBe('approved');

    approveServer.mockRejectedValueOnce(new Error('approve a: HTTP 500: boom'));
    await ctl.approve(ctl.servers[0], ['greet']);
    expect(notices).toEqual(['approve a: HTTP 500: boom']);
  });

  it('closes the panel by itself once nothing is left to approve', () => {
    const { d, store } = deps({}, [server('a', { command_approved: false })]);
    const ctl = new ServersController(d);
    ctl.openApprove(ctl.servers[0]);
    ctl.settleApproval();
    expect(ctl.approving).toBe('a');
    store.value = { servers: [server('a')] };
    ctl.settleApproval();
    expect(ctl.approving).toBe('');
  });

  it('keeps a refused command approval in the panel and shows the command as it is now', async () => {
    const shown = server('a', { command_approved: false, approved: false, state: 'unapproved' });
    const now = { ...shown, command: 'node evil.mjs', command_hash: 'new' };
    const refusal = 'approve the command of a: HTTP 409: its command changed since it was shown (now: node evil.mjs); review it again';
    const { d } = deps({ approveServerCommand: vi.fn(async () => Promise.reject(new Error(refusal))), listServers: vi.fn(async () => ({ configPath: '', servers: [now] })) }, [shown]);
    const ctl = new ServersController(d);
    ctl.openApprove(shown);
    await ctl.approveCommand(shown);
    expect(ctl.commandError).toEqual({ name: 'a', text: refusal, now: 'node evil.mjs' });
    expect(ctl.approvingServer?.command).toBe('node evil.mjs');
    expect(ctl.busy).toBe('');
    // Opening the panel again starts without the old refusal.
    ctl.openApprove(ctl.servers[0]);
    expect(ctl.commandError).toBeNull();
  });

  it('removes a server after confirmation: closes its log and shows the file’s diff', async () => {
    const removeServer = vi.fn(async () => change([server('b')]));
    const { d } = deps({ removeServer }, [server('a'), server('b')]);
    const ctl = new ServersController(d);
    ctl.toggleLog('a');
    ctl.removing = 'a';
    await ctl.remove('a');
    expect(ctl.removing).toBe('');
    expect(ctl.logOpen).toBe('');
    expect(ctl.lastChange?.what).toBe('Removed a');
    expect(ctl.servers.map((s) => s.name)).toEqual(['b']);
  });

  it('restarts and switches servers with their answers applied at once', async () => {
    const restartServer = vi.fn(async () => server('a', { restarts: 1 }));
    const setServerEnabled = vi.fn(async () => change([server('a', { enabled: false, state: 'disabled' })]));
    const { d } = deps({ restartServer, setServerEnabled }, [server('a')]);
    const ctl = new ServersController(d);
    await ctl.restart(ctl.servers[0]);
    expect(ctl.servers[0].restarts).toBe(1);
    await ctl.setEnabled(ctl.servers[0], false);
    expect(setServerEnabled).toHaveBeenCalledWith('a', false);
    expect(ctl.servers[0].enabled).toBe(false);
    ctl.toggleLog('a');
    expect(ctl.logOpen).toBe('a');
    ctl.toggleLog('a');
    expect(ctl.logOpen).toBe('');
  });

  it('adds a server from the form, or places the problem by its field', async () => {
    const addServer = vi.fn(async () => change([server('memory')], '/c/new.toml'));
    const { d } = deps({ addServer });
    const ctl = new ServersController(d);
    ctl.toggleAdd();
    ctl.form = { ...ctl.form, name: 'memory', command: 'npx', env: 'no pair' };
    await ctl.add();
    expect(addServer).not.toHaveBeenCalled();
    expect(ctl.formErr?.field).toBe('env');

    ctl.form.env = '';
    addServer.mockRejectedValueOnce(new Error('add server memory: HTTP 400: servers: "memory": command: not found'));
    await ctl.add();
    expect(ctl.formErr).toEqual({ field: 'command', text: 'servers: "memory": command: not found' });
    expect(ctl.adding).toBe(true);

    await ctl.add();
    expect(addServer).toHaveBeenLastCalledWith({ name: 'memory', command: 'npx' });
    expect(ctl.formErr).toBeNull();
    expect(ctl.adding).toBe(false);
    expect(ctl.form.name).toBe('');
    expect(ctl.configPath).toBe('/c/new.toml');
    expect(ctl.lastChange?.what).toBe('Added memory');
    expect(ctl.servers.map((s) => s.name)).toEqual(['memory']);

    ctl.toggleAdd();
    ctl.formErr = { field: 'name', text: 'x' };
    ctl.cancelAdd();
    expect(ctl.adding).toBe(false);
    expect(ctl.formErr).toBeNull();
  });
});

describe('ServerLogFeed', () => {
  it('polls while open and drops an answer that comes after it closed', async () => {
    vi.useFakeTimers();
    let n = 0;
    let release: () => void = () => {};
    const serverLogs = vi.fn(async () => {
      n++;
      if (n === 3) await new Promise<void>((r) => (release = r));
      return { name: 'a', lines: [{ time: '', stream: 'stderr', text: `line ${n}` }] };
    });
    const feed = new ServerLogFeed({ serverLogs } as unknown as ServersControl, 'a');
    const stop = feed.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(serverLogs).toHaveBeenCalledWith('a', 200);
    expect(feed.lines.map((l) => l.text)).toEqual(['line 1']);
    await vi.advanceTimersByTimeAsync(LOG_POLL_MS);
    expect(feed.lines.map((l) => l.text)).toEqual(['line 2']);
    await vi.advanceTimersByTimeAsync(LOG_POLL_MS);
    stop();
    release();
    await vi.advanceTimersByTimeAsync(LOG_POLL_MS * 2);
    expect(serverLogs).toHaveBeenCalledTimes(3);
    expect(feed.lines.map((l) => l.text)).toEqual(['line 2']);
  });

  it('shows why the log cannot be read', async () => {
    const feed = new ServerLogFeed({ serverLogs: vi.fn(async () => Promise.reject(new Error('log of a: HTTP 500: gone'))) } as unknown as ServersControl, 'a');
    const stop = feed.start();
    await vi.waitFor(() => expect(feed.error).toBe('log of a: HTTP 500: gone'));
    stop();
  });
});


describe('ServersController sign-in', () => {
  it('starts a sign-in, opens its page when the hub did not, shows the link while the server waits', async () => {
    const waiting = server('remote', { transport: 'http', state: 'signin', approved: false, oauth: true });
    const loginServer = vi.fn(async () => ({ name: 'remote', url: 'https://as.example/authorize?x=1', opened: false }));
    const { d, store } = deps({ loginServer }, [waiting]);
    const opened: string[] = [];
    d.open = (u: string) => opened.push(u);
    const ctl = new ServersController(d);
    await ctl.signIn(waiting);
    expect(loginServer).toHaveBeenCalledWith('remote');
    expect(opened).toEqual(['https://as.example/authorize?x=1']);
    expect(ctl.signInLink(store.value.servers[0])).toBe('https://as.example/authorize?x=1');
    expect(ctl.busy).toBe('');
    // Once signed in the link goes.
    expect(ctl.signInLink({ ...waiting, state: 'running' })).toBe('');
  });

  it('does not open the page twice when the hub opened it; a refusal is a notice', async () => {
    const waiting = server('remote', { state: 'signin', oauth: true });
    const loginServer = vi
      .fn()
      .mockResolvedValueOnce({ name: 'remote', url: 'https://as.example/a', opened: true })
      .mockRejectedValueOnce(new Error('sign in to remote: authorization server does not support PKCE with S256'));
    const { d, notices } = deps({ loginServer }, [waiting]);
    const opened: string[] = [];
    d.open = (u: string) => opened.push(u);
    const ctl = new ServersController(d);
    await ctl.signIn(waiting);
    await ctl.signIn(waiting);
    expect(opened).toEqual([]);
    expect(notices).toEqual(['sign in to remote: authorization server does not support PKCE with S256']);
  });

  it('signs out and applies the answer', async () => {
    const running = server('remote', { state: 'running', oauth: true, signed_in: true });
    const logoutServer = vi.fn(async () => ({ ...running, state: 'signin' }));
    const { d, store } = deps({ logoutServer }, [running]);
    const ctl = new ServersController(d);
    await ctl.signOut(running);
    expect(store.value.servers[0].state).toBe('signin');
  });
});
