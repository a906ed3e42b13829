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

export interface ActivityFilter {
  /** Exact tool name; empty = any. */
  tool: string;
  /** Exact session id; empty = any. */
  session: string;
  /** "INFO" | "SECURITY"; empty = any. */
  level: string;
  /** Free text matched against tool, args and error (case-insensitive); empty = any. */
  text?: string;
}

export const emptyFilter: ActivityFilter = { tool: '', session: '', level: '', text: '' };

/**
 * filterActivity returns the matching entries newest first by the time each call arrived (the
 * feed receives them as they finish, so a call that waited for approval arrives late), at most
 * `limit` of them (rendering thousands of rows would make the view sluggish; the feed only keeps
 * 500 anyway).
 */
export function filterActivity(entries: ActivityEntry[], f: ActivityFilter, limit = 500): ActivityEntry[] {
  const text = (f.text ?? '').trim().toLowerCase();
  const out: ActivityEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (f.tool && e.tool !== f.tool) continue;
    if (f.session && e.session !== f.session) continue;
    if (f.level && e.level !== f.level) continue;
    if (text && !`${e.tool} ${e.args ?? ''} ${e.error ?? ''}`.toLowerCase().includes(text)) continue;
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
export function distinct(entries: ActivityEntry[], key: 'tool' | 'session' | 'level'): string[] {
  const set = new Set<string>();
  for (const e of entries) if (e[key]) set.add(e[key]);
  return [...set].sort();
}
