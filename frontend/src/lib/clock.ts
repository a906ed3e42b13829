/**
 * The dashboard's clock wakes only when something on screen would change. Every time a view shows
 * relative to `now` is an anchor: a past time shown as "12s ago" / "3m ago" / "1h02m ago", a future
 * one shown as a countdown ("in 4.0s"), or a running duration ("1m05s"). nextTickDelay returns how
 * long until the soonest of them changes its text, or until the per-minute chart rolls over to the
 * next minute — whichever comes first. Nothing on screen needing seconds means one wake-up a minute.
 */

import { parseTime } from './format';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** Anchor is one time shown relative to now. */
export interface Anchor {
  /** The time (RFC 3339, as the hub sends it). */
  at: string | undefined | null;
  /**
   * 'ago' for formatAgo (seconds under a minute, then minutes), 'duration' for a running duration
   * (seconds up to an hour, then minutes). A time in the future is a countdown: seconds.
   */
  kind: 'ago' | 'duration' | 'countdown';
}

/** resolution is how often the text of one anchor changes at now (ms); 0 when it has no text. */
export function resolution(a: Anchor, now: number): number {
  const t = parseTime(a.at);
  if (t === null) return 0;
  const age = now - t;
  if (a.kind === 'countdown') {
    // formatCountdown: tens of seconds below a minute, then minutes.
    if (age >= 0) return 0; // "now" until the next change of the data
    return -age <= MINUTE ? 10 * SECOND : MINUTE;
  }
  if (age < 0) return SECOND; // a countdown shown by formatAgo
  if (a.kind === 'duration') return age < 60 * MINUTE ? SECOND : MINUTE;
  return age < MINUTE ? SECOND : MINUTE;
}

/**
 * nextTickDelay is the time (ms) from now until the next change of any anchor's text or of the
 * current minute. Anchors tick on their own phase (a session that connected at :00.400 turns
 * "13s ago" at :13.400), so the clock lands on the change rather than up to a second late. step is
 * the finest resolution used (default 1 s); the result is never below minMs, so a burst of
 * anchors a few ms apart costs one wake-up.
 */
export function nextTickDelay(anchors: Anchor[], now: number, step = SECOND, minMs = 50): number {
  let delay = MINUTE - (now % MINUTE); // the chart's minute buckets
  for (const a of anchors) {
    let r = resolution(a, now);
    if (r === 0) continue;
    if (r === SECOND) r = step;
    const t = parseTime(a.at)!;
    const phase = (((now - t) % r) + r) % r; // how far into the current unit we are
    delay = Math.min(delay, r - phase);
  }
  return Math.max(minMs, delay);
}
