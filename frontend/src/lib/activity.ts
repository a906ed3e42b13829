// Derived views of the tool-call feed: calls per minute for the overview chart and the filters of
// the Activity view.

import type { ActivityEntry } from './types';
import { epochMinute } from './reducers';

export interface MinuteBucket {
  /** Epoch ms of the start of the minute. */
  start: number;
  count: number;
}

/**
 * minuteBuckets returns `minutes` consecutive one-minute buckets ending with the minute that holds
 * `now` (oldest first), filled from per-minute counts. Minutes without calls are zero, so the chart
 * always has the same number of bars.
 */
export function minuteBuckets(perMinute: Record<number, number>, now: number, minutes = 30): MinuteBucket[] {
  const current = epochMinute(now);
  const out: MinuteBucket[] = [];
  for (let m = current - minutes + 1; m <= current; m++) {
    out.push({ start: m * 60_000, count: perMinute[m] ?? 0 });
  }
  return out;
}

/** bucketEntries counts entries per minute (the same counting the activity reducer does). */
export function bucketEntries(entries: ActivityEntry[], now: number, minutes = 30): MinuteBucket[] {
  const per: Record<number, number> = {};
  for (const e of entries) {
    const m = epochMinute(e.time);
    if (Number.isFinite(m)) per[m] = (per[m] ?? 0) + 1;
  }
  return minuteBuckets(per, now, minutes);
}

// ---- who made a call -------------------------------------------------------------------------

/**
 * clientKey names who made a call, for the client drop-down: the person's place for dashboard
 * and tray actions, else the client's self-reported name, else its session id (a call before the
 * client said its name).
 */
export function clientKey(e: ActivityEntry): string {
  return e.actor || e.client || e.session || '';
}

export interface CallerView {
  /** The client's name (or the session id when it gave none; the place for a person's action). */
  name: string;
  /** How it is connected (stdio, unix, tcp, http); empty for a person's action. */
  transport: string;
  /** The session id, for the tooltip: the name is a label, the id tells connections apart. */
  title: string;
  /** A person on the dashboard or tray, not an MCP client. */
  person: boolean;
}

export function callerOf(e: ActivityEntry): CallerView {
  if (e.actor) return { name: e.actor, transport: '', title: `done by a person in the ${e.actor}, not by an MCP client`, person: true };
  const name = e.client || e.session || 'unknown client';
  const title = e.session ? `session ${e.session}${e.client ? '' : ' (the client gave no name)'}` : '';
  return { name, transport: e.transport ?? '', title, person: false };
}

// ---- the policy's decision --------------------------------------------------------------------

export type DecisionKind = 'allowed' | 'approved' | 'declined' | 'timed out' | 'unanswered' | 'dismissed' | 'asked' | 'denied' | 'refused' | 'action' | 'none';

export interface DecisionView {
  kind: DecisionKind;
  /** What the decision column shows: "allowed", "asked → approved", "denied", "refused", … */
  label: string;
  /** Who or what decided, shown under the label: "on the dashboard", "rule 2 (exec ask)", … */
  detail: string;
  /** The whole story, for the tooltip. */
  title: string;
  tone: 'ok' | 'bad' | 'busy' | 'idle';
}

/** Where an approval came from (policy.Outcome.By), in words. */
function answeredBy(by: string | undefined): string {
  switch (by) {
    case 'client':
      return 'in the client';
    case 'dashboard':
      return 'on the dashboard';
    case 'tray':
      return 'from the tray';
    case 'timeout':
      return 'nobody answered in time';
    case 'nobody':
      return 'nobody could be asked';
    default:
      return by ?? '';
  }
}

/** The rule's name unless it is the policy's default (which says nothing a person needs). */
function ruleDetail(rule: string | undefined): string {
  return rule && !rule.startsWith('default policy') ? rule : '';
}

/**
 * decisionOf says how a call was let through or stopped, from the policy fields of its audit
 * entry (decision, rule, approval, by) and the feed's refused mark:
 *   allowed · asked → approved (by whom) · asked → declined / timed out / unanswered ·
 *   denied (by which rule) · refused (the hub answered in the tool's place: an unknown tool, a
 *   quarantined or held server tool, a refused root) · a person's own action.
 * Whether the tool then succeeded is the outcome's business, not the decision's.
 */
export function decisionOf(e: ActivityEntry): DecisionView {
  const rule = e.rule ?? '';
  if (e.actor) {
    return { kind: 'action', label: 'by you', detail: `in the ${e.actor}`, title: `done by a person in the ${e.actor}: no policy applies`, tone: 'idle' };
  }
  if (e.refused) {
    const why = e.error ? `: ${e.error}` : '';
    return { kind: 'refused', label: 'refused', detail: '', title: `not run: the hub refused it${why}`, tone: 'bad' };
  }
  switch (e.decision) {
    case 'deny':
      return { kind: 'denied', label: 'denied', detail: rule, title: `denied by ${rule || 'the policy'}`, tone: 'bad' };
    case 'ask': {
      const asked = `asked by ${rule || 'the policy'}`;
      const by = answeredBy(e.by);
      switch (e.approval) {
        case 'approved':
          return { kind: 'approved', label: 'asked → approved', detail: by, title: `${asked}; approved ${by}`.trim(), tone: 'ok' };
        case 'declined':
          return { kind: 'declined', label: 'asked → declined', detail: by, title: `${asked}; declined ${by}`.trim(), tone: 'bad' };
        case 'timed out':
          return { kind: 'timed out', label: 'asked → timed out', detail: by, title: `${asked}; nobody answered in time`, tone: 'bad' };
        case 'unanswerable':
          return { kind: 'unanswered', label: 'asked → unanswered', detail: by, title: `${asked}; no client, dashboard or tray could show the question`, tone: 'bad' };
        case 'dismissed':
          return { kind: 'dismissed', label: 'asked → dismissed', detail: by, title: `${asked}; the question was dismissed`, tone: 'bad' };
        default:
          return { kind: 'asked', label: 'asked', detail: ruleDetail(rule), title: asked, tone: 'busy' };
      }
    }
    case 'allow':
      return { kind: 'allowed', label: 'allowed', detail: ruleDetail(rule), title: `allowed by ${rule || 'the policy'}`, tone: 'ok' };
  }
  return { kind: 'none', label: '', detail: '', title: '', tone: 'idle' };
}

// ---- argument values ---------------------------------------------------------------------------

/** The forms the audit summary gives a hidden value: a secret, or a payload's size and sha256. */
const HIDDEN_VALUE = /^<(?:redacted|\d+ bytes sha256=([0-9a-f]{64})|redacted \d+ bytes of JSON sha256=([0-9a-f]{64}))>$/;

export interface ArgView {
  name: string;
  /** What the row shows: the value, or for a hidden one its summary with the sha256 shortened. */
  value: string;
  /** A payload, private text or secret: the hub sent the audit summary's stand-in, not the value. */
  hidden: boolean;
}

/**
 * argPairs lists a call's arguments for display: the feed's values (from the hub's memory: a path
 * as its text; payloads, private text and secrets as the audit summary shows them), the shown
 * ones first, each group by name. A hidden value's sha256 is cut to 12 digits (the row's tooltip
 * has the whole summary). Empty when the entry has none (an audit-file entry, an older hub): the
 * view then shows the summary.
 */
export function argPairs(e: ActivityEntry): ArgView[] {
  const v = e.values;
  if (!v) return [];
  const out = Object.keys(v).map((name) => {
    const m = HIDDEN_VALUE.exec(v[name]);
    if (!m) return { name, value: v[name], hidden: false };
    const sum = m[1] ?? m[2];
    return { name, value: sum ? v[name].replace(sum, `${sum.slice(0, 12)}…`) : v[name], hidden: true };
  });
  return out.sort((a, b) => Number(a.hidden) - Number(b.hidden) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// ---- filters -------------------------------------------------------------------------------------

export interface ActivityFilter {
  /** Exact tool name; empty = any. */
  tool: string;
  /** Exact clientKey (client name, session id of an unnamed one, or dashboard/tray); empty = any. */
  client: string;
  /** "INFO" | "SECURITY"; empty = any. */
  level: string;
  /**
   * Free text, case-insensitive, matched against the tool, the client (name, transport, session
   * id), the decision (its words, rule and who answered), the argument values and summary, and
   * the error; empty = any.
   */
  text?: string;
}

export const emptyFilter: ActivityFilter = { tool: '', client: '', level: '', text: '' };

/** isFiltered reports whether any filter is set. */
export function isFiltered(f: ActivityFilter): boolean {
  return !!(f.tool || f.client || f.level || (f.text ?? '').trim());
}

/** searchText is everything the free-text filter looks at, lowercased. */
export function searchText(e: ActivityEntry): string {
  const d = decisionOf(e);
  const parts = [e.tool, e.client, e.actor, e.session, e.transport, d.label, d.detail, e.rule, e.args, e.error];
  for (const [k, v] of Object.entries(e.values ?? {})) parts.push(`${k}=${v}`);
  return parts.filter(Boolean).join('\n').toLowerCase();
}

/** matchesText reports whether the entry holds text (case-insensitive; empty matches all). */
export function matchesText(e: ActivityEntry, text: string): boolean {
  const t = text.trim().toLowerCase();
  return !t || searchText(e).includes(t);
}

/**
 * filterActivity returns the matching entries newest first by the time each call arrived (the
 * feed receives them as they finish, so a call that waited for approval arrives late), at most
 * `limit` of them (rendering thousands of rows would make the view sluggish; the feed only keeps
 * 500 anyway).
 */
export function filterActivity(entries: ActivityEntry[], f: ActivityFilter, limit = 500): ActivityEntry[] {
  const text = (f.text ?? '').trim();
  const out: ActivityEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (f.tool && e.tool !== f.tool) continue;
    if (f.client && clientKey(e) !== f.client) continue;
    if (f.level && e.level !== f.level) continue;
    if (text && !matchesText(e, text)) continue;
    out.push(e);
  }
  // Stable: entries with the same (or an unparsable) time keep the newest-finished-first order.
  const at = (e: ActivityEntry) => {
    const t = Date.parse(e.time);
    return Number.isFinite(t) ? t : -Infinity;
  };
  out.sort((a, b) => at(b) - at(a));
  return out.slice(0, limit);
}

/** distinct returns the sorted distinct non-empty values of key, for filter drop-downs. */
export function distinct(entries: ActivityEntry[], key: 'tool' | 'client' | 'level'): string[] {
  const set = new Set<string>();
  for (const e of entries) {
    const v = key === 'client' ? clientKey(e) : e[key];
    if (v) set.add(v);
  }
  return [...set].sort();
}

/** A row of the Activity table: an entry and how deep it is nested (1: made inside another call). */
export interface ActivityRow {
  e: ActivityEntry;
  depth: number;
}

/**
 * nestActivity puts each inner call — one a script made (its `parent` is the script run's call
 * id) — right under the call it was made in when that call is among rows, oldest first; every
 * other row keeps its place. An inner call whose script run is filtered out stays where it is,
 * marked as nested.
 */
export function nestActivity(rows: ActivityEntry[]): ActivityRow[] {
  const ids = new Set(rows.filter((e) => e.callId).map((e) => e.callId as string));
  const children = new Map<string, ActivityEntry[]>();
  for (const e of rows) {
    if (e.parent && ids.has(e.parent)) {
      const kids = children.get(e.parent) ?? [];
      kids.push(e);
      children.set(e.parent, kids);
    }
  }
  const out: ActivityRow[] = [];
  for (const e of rows) {
    if (e.parent && ids.has(e.parent)) continue;
    out.push({ e, depth: e.parent ? 1 : 0 });
    const kids = e.callId ? children.get(e.callId) : undefined;
    // rows are newest first; a script's calls read best in the order they ran.
    if (kids) for (const k of [...kids].reverse()) out.push({ e: k, depth: 1 });
  }
  return out;
}
