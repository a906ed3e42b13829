// The Servers view's state and actions: what is open (the approval panel, a removal's
// confirmation, a log, the Add form), what is running (every button waits while one action is),
// and each action against the control API. An answer that carries servers is applied to the
// "servers" channel's store at once; the hub's own event confirms it.

import type { Controls } from './generated/control';
import {
  approvalStep,
  changedServer,
  commandRefusal,
  emptyForm,
  formError,
  LOG_LINES,
  LOG_POLL_MS,
  replaceServer,
  serversEvent,
  specFromForm,
  type CommandRefusal,
  type FormError,
  type ServerForm,
  type ServersState,
} from './servers';
import type { HubMessage, ServerChange, ServerLogLine, ServerStatus } from './types';

/** The controls the Servers view calls. */
export type ServersControl = Pick<
  Controls,
    | 'listServers'
  | 'serverLogs'
  | 'approveServer'
  | 'approveServerCommand'
  | 'restartServer'
  | 'loginServer'
  | 'logoutServer'
  | 'setServerEnabled'
  | 'addServer'
  | 'removeServer'
>;

/** What the view needs of the Dashboard. */
export interface ServersDeps {
  readonly control: ServersControl;
  /** The "servers" channel's store. */
  readonly servers: { readonly value: ServersState; readonly loaded: boolean; apply(msg: HubMessage): void };
  /** Runs an action, a failure becoming a notice. */
  run<T>(action: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }>;
  /** Opens a page in a new tab (a sign-in's, when the hub could not open the browser itself). */
  open?(url: string): void;
}

/** openTab opens url in a new browser tab, without giving it a handle on the dashboard. */
function openTab(url: string) {
  window.open(url, '_blank', 'noopener,noreferrer');
}

/** An edit of the config file made here, shown with its diff until dismissed. */
export interface LastChange {
  what: string;
  change: ServerChange;
}

export class ServersController {
  configPath = $state('');
  /** The API answered (the hub's snapshot may come later, or first). */
  listed = $state(false);
  /** The action running ('' when none): every button waits. */
  busy = $state('');
  /** The server whose approval waits for the user's confirmation. */
  approving = $state('');
  /** A refused command approval (its command changed since it was shown), kept in the panel. */
  commandError: CommandRefusal | null = $state(null);
  /** The server whose removal waits for the user's confirmation. */
  removing = $state('');
  /** The server whose log is open. */
  logOpen = $state('');
  adding = $state(false);
  /** The sign-in page of a sign-in in progress, by server: shown as a link while it waits. */
  signInURL: Record<string, string> = $state({});
  form: ServerForm = $state(emptyForm());
  formErr: FormError | null = $state(null);
  lastChange: LastChange | null = $state(null);

  constructor(private readonly dash: ServersDeps) {}

  get servers(): ServerStatus[] {
    return this.dash.servers.value.servers;
  }

  get loaded(): boolean {
    return this.dash.servers.loaded || this.listed;
  }

  get approvingServer(): ServerStatus | null {
    return this.servers.find((s) => s.name === this.approving) ?? null;
  }

  /** Applies an answer's server list at once; the hub's "servers" event confirms it. */
  private applyList(list: ServerStatus[] | null | undefined) {
    if (!Array.isArray(list)) return;
    this.dash.servers.apply(serversEvent(list));
  }

  private applyOne(s: ServerStatus) {
    this.applyList(replaceServer(this.dash.servers.value, s).servers);
  }

  refresh = async () => {
    this.busy = 'refresh';
    const res = await this.dash.run(() => this.dash.control.listServers());
    this.busy = '';
    if (!res.ok) return;
    this.configPath = res.value.configPath;
    this.listed = true;
    // The hub's channel is the source of truth once its snapshot came: an answer computed before
    // a later event must not undo it.
    if (!this.dash.servers.loaded) this.applyList(res.value.servers);
  };

  // ---- approvals ----

  openApprove(s: ServerStatus) {
    this.approving = s.name;
    this.commandError = null;
  }

  closeApprove() {
    this.approving = '';
  }

  /**
   * The panel takes the user through what is left: once both approvals are given (its tools were
   * pinned before and only its command had changed, say), there is nothing more to confirm.
   */
  settleApproval() {
    const a = this.approvingServer;
    if (this.approving && a && approvalStep(a) === 'done') this.approving = '';
  }

  /** Approves the command the panel shows (by its hash: a command changed since is refused). */
  async approveCommand(s: ServerStatus) {
    this.busy = `approve-command:${s.name}`;
    this.commandError = null;
    try {
      this.applyOne(await this.dash.control.approveServerCommand(s.name, s.command_hash));
    } catch (err) {
      this.commandError = commandRefusal(s.name, err instanceof Error ? err.message : String(err));
      // The hub's "servers" event brings the new command; ask as well, should it come late.
      try {
        const fresh = changedServer((await this.dash.control.listServers()).servers, s);
        if (fresh) this.applyOne(fresh);
      } catch {
        // the error above is what the user needs to see
      }
    } finally {
      this.busy = '';
    }
  }

  /** Approves a server's tools: all of them (tools empty; closes the panel) or the named held ones. */
  async approve(s: ServerStatus, tools: string[]) {
    this.busy = tools.length ? `approve:${s.name}:${tools.join(',')}` : `approve:${s.name}`;
    const res = await this.dash.run(() => this.dash.control.approveServer(s.name, tools));
    this.busy = '';
    if (res.ok) {
      this.applyOne(res.value);
      if (!tools.length) this.approving = '';
    }
  }

  // ---- the rest of a row ----

  async restart(s: ServerStatus) {
    this.busy = `restart:${s.name}`;
    const res = await this.dash.run(() => this.dash.control.restartServer(s.name));
    this.busy = '';
    if (res.ok) this.applyOne(res.value);
  }

  /**
   * Signs the hub in to a remote server: the hub starts the sign-in and opens its page in the
   * browser (the desktop) or answers with it, opened here in a new tab (the dashboard in a
   * browser). The link stays on the row until the server leaves the signin state.
   */
  async signIn(s: ServerStatus) {
    this.busy = `login:${s.name}`;
    const res = await this.dash.run(() => this.dash.control.loginServer(s.name));
    this.busy = '';
    if (!res.ok) return;
    this.signInURL = { ...this.signInURL, [s.name]: res.value.url };
    if (!res.value.opened) (this.dash.open ?? openTab)(res.value.url);
  }

  /** The sign-in page still to show for a server ('' once it no longer waits for one). */
  signInLink(s: ServerStatus): string {
    return s.state === 'signin' ? (this.signInURL[s.name] ?? '') : '';
  }

  /** Forgets the hub's sign-in to a server: it restarts and waits for a new one. */
  async signOut(s: ServerStatus) {
    this.busy = `logout:${s.name}`;
    const res = await this.dash.run(() => this.dash.control.logoutServer(s.name));
    this.busy = '';
    if (res.ok) this.applyOne(res.value);
  }

  async setEnabled(s: ServerStatus, enabled: boolean) {
    this.busy = `enable:${s.name}`;
    const res = await this.dash.run(() => this.dash.control.setServerEnabled(s.name, enabled));
    this.busy = '';
    if (res.ok) this.applyList(res.value.servers);
  }

  async remove(name: string) {
    this.busy = `remove:${name}`;
    const res = await this.dash.run(() => this.dash.control.removeServer(name));
    this.busy = '';
    this.removing = '';
    if (this.logOpen === name) this.logOpen = '';
    if (res.ok) {
      this.lastChange = { what: `Removed ${name}`, change: res.value };
      this.applyList(res.value.servers);
    }
  }

  toggleLog(name: string) {
    this.logOpen = this.logOpen === name ? '' : name;
  }

  // ---- add form ----

  toggleAdd = () => {
    this.adding = !this.adding;
  };

  cancelAdd = () => {
    this.adding = false;
    this.formErr = null;
  };

  /** Adds the form's server to the config file (approving the command it shows). */
  add = async () => {
    this.formErr = null;
    const built = specFromForm(this.form);
    if ('error' in built) {
      this.formErr = built.error;
      return;
    }
    this.busy = 'add';
    try {
      const change = await this.dash.control.addServer(built.spec);
      this.lastChange = { what: `Added ${built.spec.name}`, change };
      this.applyList(change.servers);
      this.configPath = change.path || this.configPath;
      this.form = emptyForm();
      this.adding = false;
    } catch (err) {
      this.formErr = formError(err instanceof Error ? err.message : String(err));
    } finally {
      this.busy = '';
    }
  };
}

/**
 * ServerLogFeed is an open Log panel's lines: polled while open (the hub publishes states, not log
 * lines). An answer that arrives after the panel closed is dropped.
 */
export class ServerLogFeed {
  lines: ServerLogLine[] = $state([]);
  error = $state('');
  private open = false;

  constructor(
    private readonly control: Pick<Controls, 'serverLogs'>,
    readonly name: string,
  ) {}

  async load() {
    try {
      const l = await this.control.serverLogs(this.name, LOG_LINES);
      if (!this.open) return;
      this.lines = l.lines ?? [];
      this.error = '';
    } catch (err) {
      if (this.open) this.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** Loads now and every LOG_POLL_MS; the function returned stops it. */
  start(): () => void {
    this.open = true;
    this.load();
    const h = setInterval(() => this.load(), LOG_POLL_MS);
    return () => {
      this.open = false;
      clearInterval(h);
    };
  }
}
