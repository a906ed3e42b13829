// The Servers view: the user's other MCP servers ([[servers]] in the config file) as the hub runs
// them — state, tools and their approval, log — with the controls of `switchboard servers`. Pure
// functions over the hub channel "servers" and the /api/servers answers, tested without a DOM.

import { parseTime } from './format';
import type { Reducer } from './reducers';
import { payload, type HubMessage, type ServerSpec, type ServerStatus, type ServerTool, type ServersFeed } from './types';

export { diffLines, type DiffLine } from './clients';

/** Server states (upstream.State*). */
export const SERVER_STATES = {
  disabled: 'disabled',
  /** The user has not approved its command as configured: nothing of it runs. */
  unapproved: 'unapproved',
  idle: 'idle',
  starting: 'starting',
  running: 'running',
  backoff: 'backoff',
  failed: 'failed',
  stopped: 'stopped',
  /** A remote server waits for the user to sign the hub in to it (OAuth). */
  signin: 'signin',
} as const;

/** Tool states (upstream.Tool*): new and changed tools are held until the user approves them. */
export const TOOL_STATES = {
  approved: 'approved',
  quarantined: 'quarantined',
  new: 'new',
  changed: 'changed',
} as const;

// ---- the "servers" channel --------------------------------------------------------------------

export interface ServersState {
  servers: ServerStatus[];
}

export const initialServers: ServersState = { servers: [] };

/** Snapshot and event carry the whole list (ServersFeed), like an API answer's `servers`. */
export const reduceServers: Reducer<ServersState> = (state, msg) => {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const list = payload<ServersFeed>(msg).servers;
  if (!Array.isArray(list)) return state;
  return { servers: list };
};

/**
 * serversEvent is a "servers" event carrying list, to apply an API answer's list to the channel's
 * store at once (the hub's own event confirms it).
 */
export function serversEvent(list: ServerStatus[], now: Date = new Date()): HubMessage {
  return { type: 'event', channel: 'servers', data: { servers: list }, timestamp: now.toISOString() };
}

/** replaceServer puts one server's new status (an approve or restart answer) into the list. */
export function replaceServer(state: ServersState, s: ServerStatus): ServersState {
  const i = state.servers.findIndex((x) => x.name === s.name);
  if (i < 0) return state;
  const servers = state.servers.slice();
  servers[i] = s;
  return { servers };
}

// ---- one server -------------------------------------------------------------------------------

/** Badge tone of a server state (StatusBadge's tone). */
export function serverStateTone(state: string): 'ok' | 'bad' | 'busy' | 'idle' {
  switch (state) {
    case SERVER_STATES.running:
      return 'ok';
    case SERVER_STATES.failed:
      return 'bad';
    case SERVER_STATES.starting:
    case SERVER_STATES.backoff:
    case SERVER_STATES.signin:
      return 'busy';
    default:
      return 'idle';
  }
}

/** isHeld: a tool the approved server offers that is not pinned (new) or differs from its pin (changed). */
export function isHeld(t: Pick<ServerTool, 'state'>): boolean {
  return t.state === TOOL_STATES.new || t.state === TOOL_STATES.changed;
}

/** The tools waiting for the user's approval, in the server's order. */
export function heldTools(s: Pick<ServerStatus, 'tools'>): ServerTool[] {
  return (s.tools ?? []).filter(isHeld);
}

/** waitsForApproval: a server whose command is not approved, a quarantined one, or one with held tools (a disabled one waits for nothing). */
export function waitsForApproval(s: Pick<ServerStatus, 'approved' | 'command_approved' | 'held' | 'state' | 'tools'>): boolean {
  if (s.state === SERVER_STATES.disabled) return false;
  return !s.command_approved || !s.approved || (s.held ?? heldTools(s).length) > 0;
}

/**
 * sortServers puts the servers waiting for the user (command not approved, quarantined, held
 * tools) first; otherwise the hub's order (the config file's) is kept.
 */
export function sortServers(servers: ServerStatus[]): ServerStatus[] {
  const waiting = servers.filter(waitsForApproval);
  if (waiting.length === 0 || waiting.length === servers.length) return servers;
  return [...waiting, ...servers.filter((s) => !waitsForApproval(s))];
}

/**
 * The approval a server still needs, in the order they come: its command (nothing runs before),
 * then its tools (quarantined until pinned); 'done' once both are given.
 */
export type ApprovalStep = 'command' | 'tools' | 'done';

export function approvalStep(s: Pick<ServerStatus, 'approved' | 'command_approved'>): ApprovalStep {
  if (!s.command_approved) return 'command';
  if (!s.approved) return 'tools';
  return 'done';
}

/** The approval badge of a server: its command first, then its tools. */
export function approvalBadge(s: Pick<ServerStatus, 'approved' | 'command_approved'>): { text: string; approved: boolean; tone: 'ok' | 'busy' } {
  switch (approvalStep(s)) {
    case 'command':
      return { text: 'command not approved', approved: false, tone: 'busy' };
    case 'tools':
      return { text: 'quarantined', approved: false, tone: 'busy' };
    default:
      return { text: 'approved', approved: true, tone: 'ok' };
  }
}

/**
 * hubLabel: a server that is another Switchboard hub (a hub on another machine used as this one's
 * server) reads "Switchboard hub on <machine>", as its serverInfo announced; '' for any other.
 */
export function hubLabel(s: Pick<ServerStatus, 'hub'>): string {
  if (!s.hub) return '';
  return s.hub.machine ? `Switchboard hub on ${s.hub.machine}` : 'Switchboard hub';
}

/** isRemote: a server reached by URL (nothing runs on this machine). */
export function isRemote(s: Pick<ServerStatus, 'transport'>): boolean {
  return s.transport !== 'stdio';
}

/**
 * The confirm button of a command approval: an eager local server starts at once, a remote one
 * is connected to; an on-demand one waits for its first call (or the approval of its tools).
 */
export function approveCommandLabel(s: Pick<ServerStatus, 'transport' | 'start'>): string {
  const remote = isRemote(s);
  if (s.start === 'on-demand') return remote ? 'Approve URL' : 'Approve command';
  return remote ? 'Approve URL and connect' : 'Approve command and start';
}

/**
 * envNames splits a status's env list ("KEY", and "header Name" for a remote server's headers)
 * into variable and header names. Values never reach the dashboard.
 */
export function envNames(env: string[] | null | undefined): { env: string[]; headers: string[] } {
  const out = { env: [] as string[], headers: [] as string[] };
  for (const n of env ?? []) {
    if (n.startsWith('header ')) out.headers.push(n.slice('header '.length));
    else out.env.push(n);
  }
  return out;
}

/** How a server is sandboxed, as its row shows it. */
export interface SandboxView {
  /** upstream.Sandbox* ("confined", "unconfined", "off", "remote"). */
  mode: string;
  /** What the row says after "sandbox: ". */
  label: string;
  /** It runs with everything the user can reach (sandbox = "off", or no Landlock): the row warns. */
  unsandboxed: boolean;
  /** What is confined, or why not (the tooltip). */
  detail: string;
}

export function sandboxView(sb: Partial<ServerStatus['sandbox']> | null | undefined): SandboxView {
  const mode = sb?.mode ?? '';
  const detail = sb?.detail ?? '';
  switch (mode) {
    case 'remote':
      return { mode, label: 'none needed (remote: nothing runs here)', unsandboxed: false, detail };
    case 'off':
    case 'unconfined':
      return { mode, label: mode, unsandboxed: true, detail };
    default:
      return { mode, label: mode || 'unknown', unsandboxed: false, detail };
  }
}

/**
 * changedCommand reads the command an approval was refused for having changed ("its command
 * changed since it was shown (now: CMD); review it again"); '' for any other error.
 */
export function changedCommand(message: string): string {
  const m = message.match(/its command changed since it was shown \(now: (.*)\); review it again/s);
  return m ? m[1] : '';
}

export interface ToolCounts {
  total: number;
  approved: number;
  held: number;
  quarantined: number;
  flagged: number;
}

export function toolCounts(s: Pick<ServerStatus, 'tools'>): ToolCounts {
  const tools = s.tools ?? [];
  return {
    total: tools.length,
    approved: tools.filter((t) => t.state === TOOL_STATES.approved).length,
    held: tools.filter(isHeld).length,
    quarantined: tools.filter((t) => t.state === TOOL_STATES.quarantined).length,
    flagged: tools.filter((t) => (t.flags ?? []).length > 0).length,
  };
}

/** needsSignIn: a remote server waits for the user to sign the hub in to it. */
export function needsSignIn(s: Pick<ServerStatus, 'state'>): boolean {
  return s.state === SERVER_STATES.signin;
}

/** canSignOut: the server runs on a grant from a sign-in (OAuth), so there is one to forget. */
export function canSignOut(s: Pick<ServerStatus, 'state' | 'signed_in'>): boolean {
  return s.signed_in && s.state === SERVER_STATES.running;
}

/** needsAttention: a row the user has something to do on (command or tools to approve, held tools). */
export function needsAttention(s: Pick<ServerStatus, 'approved' | 'command_approved' | 'tools'>): boolean {
  return !s.command_approved || !s.approved || heldTools(s).length > 0;
}

/** Badge tone of a tool state: approved ok, held (new, changed) bad, quarantined busy. */
export function toolStateTone(t: Pick<ServerTool, 'state'>): 'ok' | 'bad' | 'busy' {
  if (t.state === TOOL_STATES.approved) return 'ok';
  return isHeld(t) ? 'bad' : 'busy';
}

/**
 * formatUptime renders how long a server has run: seconds under a minute ("42s"), then minutes
 * ("4m", "2h03m", "3d04h"). Past a minute the text changes once a minute, so a running server does
 * not keep the dashboard's clock ticking every second (clock.ts, anchor kind 'ago').
 */
export function formatUptime(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/** uptime is a running server's time since it started ('' in any other state). */
export function uptime(s: Pick<ServerStatus, 'state' | 'since'>, now: number): string {
  if (s.state !== SERVER_STATES.running) return '';
  const since = parseTime(s.since);
  if (since === null) return '';
  return formatUptime(Math.max(0, now - since));
}

export interface ServersSummary {
  total: number;
  running: number;
  /** Servers waiting for the user: command not approved, quarantined, or with held tools. */
  waiting: number;
  /** Held tools over all servers. */
  held: number;
}

export function serversSummary(servers: ServerStatus[]): ServersSummary {
  return {
    total: servers.length,
    running: servers.filter((s) => s.state === SERVER_STATES.running).length,
    waiting: servers.filter(waitsForApproval).length,
    held: servers.reduce((n, s) => n + (s.state === SERVER_STATES.disabled ? 0 : heldTools(s).length), 0),
  };
}

/** The overview's line: "2 running, 1 waiting for approval". */
export function summaryText(sum: ServersSummary): string {
  let text = `${sum.running} running`;
  if (sum.waiting > 0) text += `, ${sum.waiting} waiting for approval`;
  return text;
}

// ---- the add form -----------------------------------------------------------------------------

/** The Add server form's fields, as typed. */
export interface ServerForm {
  name: string;
  /** A local server started with a command (stdio), or a remote one reached by URL. */
  kind: 'command' | 'url';
  command: string;
  /** One argument per line. */
  args: string;
  /** KEY=VALUE per line (values may be ${VAR} or ${secret:NAME}). */
  env: string;
  url: string;
  /** Name: value (or Name=value) per line. */
  headers: string;
  transport: 'http' | 'sse';
  /** The certificate pinned for an https URL (another hub's own): "sha256:AB:CD:…"; '' for none. */
  tls_fingerprint: string;
  start: 'eager' | 'on-demand';
}

export function emptyForm(): ServerForm {
  return { name: '', kind: 'command', command: '', args: '', env: '', url: '', headers: '', transport: 'http', tls_fingerprint: '', start: 'eager' };
}

/** The fields of a spec the API names in its errors (and the form has an input for). */
export type FormField = 'name' | 'command' | 'args' | 'env' | 'url' | 'headers' | 'transport' | 'tls_fingerprint' | 'start';
const FIELDS: FormField[] = ['name', 'command', 'args', 'env', 'url', 'headers', 'transport', 'tls_fingerprint', 'start'];

/** A problem with the form: the field it is about ('' for the form as a whole) and what to fix. */
export interface FormError {
  field: FormField | '';
  text: string;
}

/** lines splits a textarea into its non-blank lines, trimmed. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/**
 * parsePairs reads KEY=VALUE lines (env) or "Name: value" / Name=value lines (headers). A line
 * without a key is an error naming the field and the line.
 */
export function parsePairs(text: string, field: 'env' | 'headers'): { value: Record<string, string> } | { error: FormError } {
  const out: Record<string, string> = {};
  const all = text.split('\n');
  for (let i = 0; i < all.length; i++) {
    const line = all[i].trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    const colon = field === 'headers' ? line.indexOf(':') : -1;
    // headers: the first of ':' and '=' separates (a value may contain either).
    const at = colon >= 0 && (eq < 0 || colon < eq) ? colon : eq;
    const key = at > 0 ? line.slice(0, at).trim() : '';
    if (!key) {
      const want = field === 'env' ? 'KEY=VALUE' : 'Name: value';
      return { error: { field, text: `${field}: line ${i + 1} "${line}" is not ${want}` } };
    }
    out[key] = line.slice(at + 1).trim();
  }
  return { value: out };
}

/**
 * specFromForm builds the [[servers]] entry POST /api/servers takes. Only what the spec cannot
 * express is checked here (a malformed env or header line); everything else — a missing name or
 * command, a bad URL — is the hub's to say, in the same words as `switchboard servers add`.
 */
export function specFromForm(f: ServerForm): { spec: ServerSpec } | { error: FormError } {
  const spec: ServerSpec = { name: f.name.trim() };
  if (f.kind === 'command') {
    spec.command = f.command.trim();
    const args = lines(f.args);
    if (args.length) spec.args = args;
    const env = parsePairs(f.env, 'env');
    if ('error' in env) return env;
    if (Object.keys(env.value).length) spec.env = env.value;
  } else {
    spec.url = f.url.trim();
    spec.transport = f.transport;
    const headers = parsePairs(f.headers, 'headers');
    if ('error' in headers) return headers;
    if (Object.keys(headers.value).length) spec.headers = headers.value;
    const pin = f.tls_fingerprint.trim();
    if (pin) spec.tls_fingerprint = pin;
  }
  if (f.start !== 'eager') spec.start = f.start;
  return { spec };
}

/**
 * formError places an API error next to the field it names. The hub's errors read
 * `servers: "NAME": FIELD: what to do` (or `servers: FIELD: ...`); the control prefixes its action
 * and the HTTP status ("add server x: HTTP 400: "), which the form does not repeat.
 */
export function formError(message: string): FormError {
  const text = message.replace(/^.*?: HTTP \d{3}: /, '').replace(/^add server [^:]*: /, '');
  const m = text.match(/^servers: (?:"[^"]*": )?([a-z_]+): /);
  const field = m && (FIELDS as string[]).includes(m[1]) ? (m[1] as FormField) : '';
  return { field, text };
}

/** The fields the form shows for a kind of server. */
export function formFields(kind: ServerForm['kind']): FormField[] {
  return kind === 'command' ? ['name', 'command', 'args', 'env', 'start'] : ['name', 'url', 'headers', 'transport', 'tls_fingerprint', 'start'];
}

/** The error the form shows at its top: one that names no field, or a field not shown for this kind. */
export function generalFormError(err: FormError | null, kind: ServerForm['kind']): FormError | null {
  return err && (!err.field || !formFields(kind).includes(err.field)) ? err : null;
}

/** The error shown next to field, if it is about that field. */
export function fieldFormError(err: FormError | null, field: FormField): FormError | null {
  return err && err.field === field ? err : null;
}

// ---- approvals and log ------------------------------------------------------------------------

/** The confirm button of an approval: "Approve and pin 3 tools", "Approve greet". */
export function approveLabel(s: Pick<ServerStatus, 'approved' | 'tools'>, tool?: string): string {
  if (tool) return `Approve ${tool}`;
  const n = (s.tools ?? []).length;
  return `Approve and pin ${n} tool${n === 1 ? '' : 's'}`;
}

/** Flags (signs of hidden instructions) over all the tools an approval would pin. */
export function flaggedTools(tools: ServerTool[]): ServerTool[] {
  return tools.filter((t) => (t.flags ?? []).length > 0);
}

/** The warning over an approval that would pin tools with flags. */
export function flaggedWarning(n: number): string {
  const one = n === 1;
  return `⚠ ${n} tool${one ? '' : 's'} look${one ? 's' : ''} like ${one ? 'it carries' : 'they carry'} hidden instructions: read ${one ? 'it' : 'them'} before approving.`;
}

/**
 * Why the tools step has no tools to approve yet: the command was approved and the server is
 * starting, or it does not run (backoff, failed); '' otherwise.
 */
export function toolsStepWait(s: Pick<ServerStatus, 'approved' | 'command_approved' | 'state'>): 'starting' | 'down' | '' {
  if (approvalStep(s) !== 'tools') return '';
  if (s.state === SERVER_STATES.starting || s.state === SERVER_STATES.unapproved) return 'starting';
  if (s.state === SERVER_STATES.backoff || s.state === SERVER_STATES.failed) return 'down';
  return '';
}

/** A command approval the hub refused, kept in the panel: its error and the new command it names. */
export interface CommandRefusal {
  name: string;
  text: string;
  /** The command as it is now ('' when the refusal was for another reason). */
  now: string;
}

export function commandRefusal(name: string, message: string): CommandRefusal {
  return { name, text: message, now: changedCommand(message) };
}

/**
 * changedServer is the server's fresh status from a new list when its command differs from the
 * one the user was shown (by hash), so the panel shows the new one; null otherwise.
 */
export function changedServer(list: ServerStatus[], shown: Pick<ServerStatus, 'name' | 'command_hash'>): ServerStatus | null {
  const fresh = list.find((x) => x.name === shown.name);
  return fresh && fresh.command_hash !== shown.command_hash ? fresh : null;
}

/** How many log lines the Log panel asks for, and how often it asks while open. */
export const LOG_LINES = 200;
export const LOG_POLL_MS = 2000;

/** A log line's clock time (HH:MM:SS.mmm, local) from its RFC 3339 stamp. */
export function logTime(t: string): string {
  const ms = parseTime(t);
  if (ms === null) return '';
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/**
 * followLog: after new lines, scroll the log to its end when it was near the end (or never
 * scrolled), not when the user scrolled up to read.
 */
export function followLog(el: { scrollHeight: number; scrollTop: number; clientHeight: number }): boolean {
  const nearEnd = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  return nearEnd || el.scrollTop === 0;
}
