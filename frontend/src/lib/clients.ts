// The Clients view (docs/clients.md, "Connect a client in one command"): every MCP client
// Switchboard knows, per scope, with its config file and its state towards this hub, and Connect /
// Disconnect controls that show the edit as a diff before writing. Pure functions over
// GET /api/clients and POST /api/clients/{name}, tested without a DOM.

import type { ClientAction, ClientChange, ClientList, ClientScopeName } from './types';

/** The states internal/clientconf reports (Status.State). */
export const CLIENT_STATES = {
  notInstalled: 'not installed',
  notSetUp: 'not set up',
  connected: 'connected to this hub',
  different: 'set up differently',
  unreadable: 'cannot read the config',
} as const;

/** Badge tone of a client state (StatusBadge's tone). */
export function clientStateTone(state: string): 'ok' | 'bad' | 'busy' | 'idle' {
  switch (state) {
    case CLIENT_STATES.connected:
      return 'ok';
    case CLIENT_STATES.unreadable:
      return 'bad';
    case CLIENT_STATES.different:
      return 'busy';
    default:
      return 'idle';
  }
}

/**
 * The controls a client's file offers: Connect unless it already reaches this hub (also when the
 * file cannot be read: the attempt names the line to fix), Disconnect where there is a
 * switchboard entry to remove (this hub's or another one).
 */
export function clientActions(state: string): ClientAction[] {
  switch (state) {
    case CLIENT_STATES.connected:
      return ['disconnect'];
    case CLIENT_STATES.different:
      return ['connect', 'disconnect'];
    default:
      return ['connect'];
  }
}

/** One row of the Clients view: a client in one scope. */
export interface ClientRow {
  key: string;
  name: string;
  display: string;
  format: string;
  installed: boolean;
  scope: ClientScopeName;
  /** True for the first row of a client (its name is shown once). */
  first: boolean;
  path: string;
  exists: boolean;
  state: string;
  detail: string;
  /** The client's own tools mode (its entry's --tools-mode), "" for the hub's. */
  toolsMode: string;
  /** The entry carries the client's own token (connect writes it), which names the client on the hub. */
  hasToken: boolean;
  actions: ClientAction[];
}

/** The tools modes a client can be connected in ("" is the hub's). */
export const TOOLS_MODES = ['', 'full', 'search', 'script'] as const;

export function clientKey(name: string, scope: string): string {
  return `${name}/${scope}`;
}

/** clientRows flattens the list into one row per client and scope, in the hub's order. */
export function clientRows(list: ClientList | null | undefined): ClientRow[] {
  const out: ClientRow[] = [];
  for (const c of list?.clients ?? []) {
    (c.scopes ?? []).forEach((s, i) => {
      out.push({
        key: clientKey(c.name, s.scope),
        name: c.name,
        display: c.display || c.name,
        format: c.format,
        installed: c.installed,
        scope: s.scope === 'project' ? 'project' : 'user',
        first: i === 0,
        path: s.path,
        exists: s.exists,
        state: s.state,
        detail: s.detail ?? '',
        toolsMode: s.tools_mode ?? '',
        hasToken: s.has_token === true,
        actions: clientActions(s.state),
      });
    });
  }
  return out;
}

/** How many clients (not rows) are connected to this hub in at least one scope. */
export function connectedCount(list: ClientList | null | undefined): number {
  return (list?.clients ?? []).filter((c) => (c.scopes ?? []).some((s) => s.state === CLIENT_STATES.connected)).length;
}

/** A line of a unified diff with the class that colours it. */
export interface DiffLine {
  kind: 'add' | 'del' | 'hunk' | 'file' | 'ctx' | 'note';
  text: string;
}

/** diffLines splits a unified diff into lines and tells added, removed and header lines apart. */
export function diffLines(diff: string): DiffLine[] {
  if (!diff) return [];
  const lines = diff.replace(/\n$/, '').split('\n');
  return lines.map((text) => {
    if (text.startsWith('+++ ') || text.startsWith('--- ')) return { kind: 'file', text };
    if (text.startsWith('@@')) return { kind: 'hunk', text };
    if (text.startsWith('+')) return { kind: 'add', text };
    if (text.startsWith('-')) return { kind: 'del', text };
    if (text.startsWith('\\')) return { kind: 'note', text };
    return { kind: 'ctx', text };
  });
}

/** The verb on a confirm button: what the write does to the file. */
export function confirmLabel(change: Pick<ClientChange, 'action' | 'path'>): string {
  return change.action === 'connect' ? 'Write and connect' : 'Write and disconnect';
}

/** The title of a preview, e.g. "Connect Cursor (user scope)". */
export function previewTitle(change: Pick<ClientChange, 'action' | 'display' | 'client' | 'scope'>): string {
  const verb = change.action === 'connect' ? 'Connect' : 'Disconnect';
  return `${verb} ${change.display || change.client} (${change.scope} scope)`;
}

/** The key of the row whose panel is open: the preview's, else the last result's; '' when none. */
export function openRowKey(preview: ClientChange | null, result: ClientChange | null): string {
  const c = preview ?? result;
  return c ? clientKey(c.client, c.scope) : '';
}
