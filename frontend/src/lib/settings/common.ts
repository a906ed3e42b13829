// What every section of the Settings view shares: the sections, their titles, the keys overridden
// for this run, list editing and the confirmation line of a save. Pure functions over the
// GET /api/settings answer and the forms, tested without a DOM.

import type { Settings } from '../types';

export { diffLines, type DiffLine } from '../clients';

/** The sections, each saved by its own button, in the order the view shows them. */
export const SECTIONS = ['transports', 'security', 'toolsets', 'workspace', 'policy', 'web', 'tasks', 'ml', 'rag', 'code', 'servers', 'grants', 'autostart'] as const;
export type Section = (typeof SECTIONS)[number];

/** What a save refills: a section, or the RAG key's own form inside the RAG section. */
export type Target = Section | 'ragkey';

/** Where errors are kept: a save's target, the policy test, or a token's regeneration. */
export type ErrorKey = Target | 'test' | 'token' | 'review';

export const SECTION_TITLES: Record<Section, string> = {
  transports: 'Transports',
  security: 'Transport security',
  toolsets: 'Toolsets',
  workspace: 'Workspace',
  policy: 'Policy and roots',
  web: 'Web fetch',
  tasks: 'Tasks',
  ml: 'Inference backends',
  rag: 'RAG',
  code: 'Code intelligence',
  servers: 'Upstream servers',
  grants: 'Other machines (OAuth)',
  autostart: 'Start at login',
};

/** move returns list with item i moved by delta places (unchanged when it would leave the list). */
export function move<T>(list: T[], i: number, delta: number): T[] {
  const j = i + delta;
  if (i < 0 || i >= list.length || j < 0 || j >= list.length) return list;
  const out = list.slice();
  const [item] = out.splice(i, 1);
  out.splice(j, 0, item);
  return out;
}

export function removeAt<T>(list: T[], i: number): T[] {
  return list.filter((_, k) => k !== i);
}

/** lines splits a textarea into its non-blank lines, trimmed. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/**
 * What overrides keys of a section in this hub (tcp.addr for transports, …): environment
 * variables, and command-line flags that set a key to something other than the file's value.
 */
export function overridesFor(s: Settings, prefixes: string[]): string[] {
  const matches = (key: string) => prefixes.some((p) => key.split(', ').some((k) => k === p || k.startsWith(p + '.')));
  const env = (s.overrides ?? []).filter((o) => matches(o.key)).map((o) => (o.adds ? `${o.env} adds to ${o.key}` : `${o.env} overrides ${o.key}`));
  const flags = (s.flags ?? [])
    .filter((f) => matches(f.key))
    .map((f) => `${f.key} is set by ${f.flag}${f.value ? ` (${f.value})` : ''} for this run; the saved value applies when Switchboard is started without it`);
  return [...env, ...flags];
}

export function isPending(s: Settings, section: Section): boolean {
  return (s.pending ?? []).includes(section);
}

/** The confirmation line of a save. */
export function savedText(change: { path: string; diff: string; applies: string }): string {
  if (!change.diff) return `Nothing to change in ${change.path}: it already says this.`;
  return change.applies === 'now' ? `Saved to ${change.path} and in force now.` : `Saved to ${change.path}; applies at the next start.`;
}
