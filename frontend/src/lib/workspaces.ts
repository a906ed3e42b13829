// Where each MCP client session works (docs/policy.md, "Workspaces: where each client works"):
// the Sessions view lists a session's workspace, where it came from, and every directory the
// session may work in (its MCP roots and its `switchboard connect` directory) with a Grant or
// Revoke control. Pure functions over the "sessions" hub channel's data, tested without a DOM.

import type { SessionInfo, SessionRoot } from './types';

/** What the Sessions view says about where a workspace came from (session.workspaceFrom). */
export const workspaceSources: Record<string, string> = {
  root: 'MCP root',
  relay: 'connect directory',
  client: "the client's project",
  hub: 'hub workspace',
};

/** workspaceSource labels session.workspaceFrom; an unknown value is shown as it is. */
export function workspaceSource(from: string | undefined): string {
  if (!from) return '';
  return workspaceSources[from] ?? from;
}

/** The control a directory offers: grant what still needs consent, revoke what is usable. */
export type WorkspaceAction = 'grant' | 'revoke' | null;

export function workspaceAction(status: string): WorkspaceAction {
  switch (status) {
    case 'pending':
    case 'declined':
      return 'grant';
    case 'granted':
    case 'approved':
      return 'revoke';
    default:
      return null; // invalid: not a local directory, nothing to grant
  }
}

/** Badge tone of a root status (StatusBadge's tone). */
export function rootTone(status: string): 'ok' | 'bad' | 'busy' | 'idle' {
  switch (status) {
    case 'granted':
    case 'approved':
      return 'ok';
    case 'declined':
    case 'invalid':
      return 'bad';
    case 'pending':
      return 'busy';
    default:
      return 'idle';
  }
}

/** One directory a session may work in, as the Sessions view lists it. */
export interface WorkspaceEntry {
  kind: 'root' | 'relay';
  /** The directory (empty for an invalid root, which names none). */
  dir: string;
  /** What to show: the directory, or the URI when it names none. */
  label: string;
  name: string;
  status: string;
  /** Why it is granted, or why consent is needed. */
  detail: string;
  /** True for the directory the session's relative paths resolve against. */
  current: boolean;
  action: WorkspaceAction;
}

function entry(kind: 'root' | 'relay', r: SessionRoot, workspace: string): WorkspaceEntry {
  const dir = r.dir ?? '';
  return {
    kind,
    dir,
    label: dir || r.uri,
    name: r.name ?? '',
    status: r.status,
    detail: r.detail ?? '',
    current: dir !== '' && dir === workspace,
    action: dir ? workspaceAction(r.status) : null,
  };
}

/** workspaceEntries lists a session's roots (in the client's order), then its relay directory. */
export function workspaceEntries(s: SessionInfo): WorkspaceEntry[] {
  const ws = s.workspace ?? '';
  const out = (s.roots ?? []).filter((r) => r && r.uri).map((r) => entry('root', r, s.workspaceFrom === 'root' ? ws : ''));
  if (s.relay) out.push(entry('relay', s.relay, s.workspaceFrom === 'relay' ? ws : ''));
  return out;
}

/**
 * entryKey names an entry within its session (for busy buttons). Not unique on its own: two roots
 * can spell one directory (file:///a and file:///a/), and a grant answers for the directory.
 */
export function entryKey(e: WorkspaceEntry): string {
  return `${e.kind}:${e.label}`;
}

/**
 * identityLabel names the credential a session proved: a client's own token ("token: cursor"),
 * or an OAuth grant of the hub's authorization server ("OAuth grant …", listed in Settings ›
 * Other machines), whose identity the hub records as "grant:<id>".
 */
export function identityLabel(identity: string): string {
  return identity.startsWith('grant:') ? `OAuth grant ${identity.slice('grant:'.length)}` : `token: ${identity}`;
}
