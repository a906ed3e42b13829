// The Logs view: the audit trail read back from its files (GET /api/audit, paged, filtered by
// the hub) with the calls that arrive meanwhile on the "activity" channel merged in, and the hub's
// own log from the "hublog" channel. Pure functions, tested without a DOM.

import { formatClock, parseTime } from './format';
import type { Reducer } from './reducers';
import { payload, type ActivityEntry, type AuditQuery, type HubLogRecord, type HubLogSnapshot } from './types';

/** The two panes, also the route item: #logs/audit, #logs/hub. */
export const LOG_PANES = ['audit', 'hub'] as const;
export type LogPane = (typeof LOG_PANES)[number];

export function logPane(item: string): LogPane {
  return (LOG_PANES as readonly string[]).includes(item) ? (item as LogPane) : 'audit';
}

// ---- audit ------------------------------------------------------------------------------------

export type Decision = '' | 'allow' | 'ask' | 'deny';
export type Outcome = '' | 'ok' | 'error' | 'started';

export interface AuditFilter {
  /** A client's name (any case) or a session id. */
  client: string;
  /** A glob (*, ?, [...]) or a prefix of the tool's name. */
  tool: string;
  decision: Decision;
  outcome: Outcome;
}

export const emptyAuditFilter: AuditFilter = { client: '', tool: '', decision: '', outcome: '' };

/** Entries per page asked of the hub. */
export const AUDIT_PAGE = 100;

export function isFiltered(f: AuditFilter): boolean {
  return !!(f.client.trim() || f.tool.trim() || f.decision || f.outcome);
}

/** auditQuery is the API query for f, continuing before the cursor `before` ("" for the newest). */
export function auditQuery(f: AuditFilter, before = '', limit = AUDIT_PAGE): AuditQuery {
  return { client: f.client.trim(), tool: f.tool.trim(), decision: f.decision, outcome: f.outcome, limit, before };
}

function isGlob(s: string): boolean {
  return /[*?[]/.test(s);
}

/**
 * globRegExp is Go's path.Match for names without '/': * and ? match any run and any one
 * character, [...] a class ([^...] or [!...] negated); null when the pattern is malformed.
 */
export function globRegExp(glob: string): RegExp | null {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) return null;
      let cls = glob.slice(i + 1, end);
      if (cls.startsWith('^') || cls.startsWith('!')) cls = '^' + cls.slice(1);
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '\\' && i + 1 < glob.length) {
      re += escapeRe(glob[++i]);
    } else re += escapeRe(c);
  }
  try {
    return new RegExp(re + '$');
  } catch {
    return null;
  }
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/**
 * matchesAudit applies the hub's filter (audit.Query.Match) to an entry that arrived live, so the
 * rows added between two loads are the ones the next load would return.
 */
export function matchesAudit(e: ActivityEntry, f: AuditFilter): boolean {
  const client = f.client.trim();
  if (client && (e.client ?? '').toLowerCase() !== client.toLowerCase() && e.session !== client) return false;
  const tool = f.tool.trim();
  if (tool) {
    if (isGlob(tool)) {
      const re = globRegExp(tool);
      if (!re || !re.test(e.tool)) return false;
    } else if (!e.tool.startsWith(tool)) return false;
  }
  if (f.decision && e.decision !== f.decision) return false;
  return !f.outcome || e.outcome === f.outcome;
}

/**
 * entryKey identifies one audit line across the file and the live feed: the time a call arrived
 * has nanoseconds, and the rest tells apart what could share it.
 */
export function entryKey(e: ActivityEntry): string {
  return `${e.time}|${e.callId ?? ''}|${e.tool}|${e.session}|${e.outcome}|${e.actor ?? ''}`;
}

/** keysOf is the set of entryKeys of entries (the feed as it was when a page was loaded). */
export function keysOf(entries: ActivityEntry[]): Set<string> {
  return new Set(entries.map(entryKey));
}

export interface AuditRow {
  entry: ActivityEntry;
  key: string;
  /** Arrived on the activity channel after the page was loaded. */
  live: boolean;
}

/**
 * auditRows is what the Audit pane lists: the calls that arrived since the first page was loaded
 * (in the feed now but not then), matching the filter, newest first, then the loaded pages as the
 * hub returned them (newest written first). An entry in both is listed once, from the page.
 */
export function auditRows(pages: ActivityEntry[], feed: ActivityEntry[], seenAtLoad: Set<string>, f: AuditFilter): AuditRow[] {
  const inPages = keysOf(pages);
  const live: AuditRow[] = [];
  for (let i = feed.length - 1; i >= 0; i--) {
    const e = feed[i];
    const key = entryKey(e);
    if (seenAtLoad.has(key) || inPages.has(key) || !matchesAudit(e, f)) continue;
    live.push({ entry: e, key, live: true });
  }
  return [...live, ...pages.map((e) => ({ entry: e, key: entryKey(e), live: false }))];
}

/**
 * stampText renders when a line was logged: the local time of day for today (relative to now),
 * with the date before it otherwise (the trail goes back days).
 */
export function stampText(t: string, now: number): string {
  const ms = parseTime(t);
  if (ms === null) return '';
  const d = new Date(ms);
  const today = new Date(now);
  if (d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate()) return formatClock(t);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${formatClock(t)}`;
}

/** Who made the call: the person's place for dashboard and tray actions, else the client. */
export function callerLabel(e: ActivityEntry): string {
  if (e.actor) return e.actor;
  return e.client || e.session || 'unknown client';
}

export function decisionTone(d: string | undefined): 'ok' | 'bad' | 'busy' | 'idle' {
  switch (d) {
    case 'allow':
      return 'ok';
    case 'deny':
      return 'bad';
    case 'ask':
      return 'busy';
    default:
      return 'idle';
  }
}

export function outcomeTone(o: string): 'ok' | 'bad' | 'busy' | 'idle' {
  switch (o) {
    case 'ok':
      return 'ok';
    case 'error':
      return 'bad';
    case 'started':
      return 'busy';
    default:
      return 'idle';
  }
}

export interface Detail {
  label: string;
  value: string;
  /** Monospace text (arguments, ids, paths). */
  mono?: boolean;
}

/** entryDetails is what an expanded row shows, in reading order; empty fields are left out. */
export function entryDetails(e: ActivityEntry): Detail[] {
  const out: Detail[] = [];
  const add = (label: string, value: string | undefined, mono = false) => {
    if (value) out.push({ label, value, mono });
  };
  add('arguments', e.args, true);
  add('error', e.error);
  if (e.decision) add('policy', `${e.decision}${e.rule ? ` by ${e.rule}` : ''}`);
  if (e.approval) add('approval', `${e.approval}${e.by ? ` by ${e.by}` : ''}`);
  add('roots', e.roots);
  add('ignored arguments', e.ignored, true);
  add('client', e.client);
  add('session', e.session, true);
  add('transport', e.transport);
  add('user', e.user);
  add('call', e.callId, true);
  add('time', e.time, true);
  return out;
}

// ---- hub log ----------------------------------------------------------------------------------

export interface HubLogState {
  records: HubLogRecord[];
  /** The file the hub also writes its log to. */
  file: string;
  /** The highest seq applied: an event at or below it repeats what the snapshot held. */
  lastSeq: number;
}

export const initialHubLog: HubLogState = { records: [], file: '', lastSeq: 0 };

/** Records kept in the view (the hub keeps 1000). */
export const HUBLOG_KEEP = 1000;

/** Snapshot: the newest records (oldest first) and the file; event: one record. */
export const reduceHubLog: Reducer<HubLogState> = (state, msg) => {
  if (msg.type === 'snapshot') {
    const snap = payload<HubLogSnapshot>(msg);
    const records = Array.isArray(snap.records) ? snap.records.slice(-HUBLOG_KEEP) : [];
    return { records, file: typeof snap.file === 'string' ? snap.file : state.file, lastSeq: records.length ? records[records.length - 1].seq : 0 };
  }
  if (msg.type !== 'event') return state;
  const r = msg.data as HubLogRecord | undefined;
  if (!r || typeof r !== 'object' || typeof r.seq !== 'number' || r.seq <= state.lastSeq) return state;
  const records = state.records.length >= HUBLOG_KEEP ? [...state.records.slice(1 - HUBLOG_KEEP), r] : [...state.records, r];
  return { ...state, records, lastSeq: r.seq };
};

/** The levels a person filters by (the hub keeps info and above). */
export const HUBLOG_LEVELS = ['INFO', 'WARN', 'ERROR'] as const;

/** levelRank orders slog's level names: DEBUG -4, INFO 0, WARN 4, ERROR 8, "INFO+2" 2. */
export function levelRank(level: string): number {
  const m = /^(DEBUG|INFO|WARN|ERROR)([+-]\d+)?$/.exec(level.toUpperCase());
  if (!m) return 0;
  const base = { DEBUG: -4, INFO: 0, WARN: 4, ERROR: 8 }[m[1] as 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'];
  return base + (m[2] ? Number(m[2]) : 0);
}

export function levelTone(level: string): 'ok' | 'bad' | 'busy' | 'idle' {
  const r = levelRank(level);
  if (r >= 8) return 'bad';
  if (r >= 4) return 'busy';
  return 'idle';
}

/** attrText renders a record's attributes as slog's text handler does: key=value, quoted when needed. */
export function attrText(r: HubLogRecord): string {
  return (r.attrs ?? []).map((a) => `${a.key}=${/^[^\s"=]*$/.test(a.value) && a.value !== '' ? a.value : JSON.stringify(a.value)}`).join(' ');
}

/**
 * filterHubLog returns the records at minLevel or above whose message or attributes contain text
 * (any case), newest first, at most limit.
 */
export function filterHubLog(records: HubLogRecord[], minLevel: string, text: string, limit = HUBLOG_KEEP): HubLogRecord[] {
  const min = levelRank(minLevel || 'INFO');
  const q = text.trim().toLowerCase();
  const out: HubLogRecord[] = [];
  for (let i = records.length - 1; i >= 0 && out.length < limit; i--) {
    const r = records[i];
    if (levelRank(r.level) < min) continue;
    if (q && !`${r.msg} ${attrText(r)}`.toLowerCase().includes(q)) continue;
    out.push(r);
  }
  return out;
}
