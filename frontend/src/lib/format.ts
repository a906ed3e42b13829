// Small formatting and parsing helpers shared by the views.

import type { ProcessInfo } from './types';

/** Go's zero time.Time marshals as 0001-01-01T00:00:00Z; treat it (and junk) as "no time". */
export function parseTime(t: string | undefined | null): number | null {
  if (!t) return null;
  const ms = Date.parse(t);
  if (!Number.isFinite(ms) || ms <= 0) return null;
  return ms;
}

/** formatDurationMs renders milliseconds like Go does roughly: 850ms, 3.2s, 4m05s, 2h03m. */
export function formatDurationMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)}s`;
  const totalS = Math.floor(s);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const sec = totalS % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  return `${m}m${String(sec).padStart(2, '0')}s`;
}

/** formatGoDuration renders a Go time.Duration as JSON encodes it: nanoseconds. */
export function formatGoDuration(d: number | undefined | null): string {
  if (typeof d !== 'number') return '';
  return formatDurationMs(d / 1e6);
}

/** formatClock renders a timestamp as local HH:MM:SS (empty for zero/invalid times). */
export function formatClock(t: string | undefined | null): string {
  const ms = parseTime(t);
  if (ms === null) return '';
  return `${formatHourMinute(ms)}:${pad2(new Date(ms).getSeconds())}`;
}

/** formatHourMinute renders a time (ms since the epoch) as local HH:MM. */
export function formatHourMinute(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * formatAgo renders how long ago t was relative to now: "12s ago" under a minute, then whole
 * minutes ("3m ago") and hours with minutes ("1h02m ago"); a future t is a countdown ("in 4.0s").
 * Past a minute the text changes once a minute, so the dashboard's clock can sleep (clock.ts).
 */
export function formatAgo(t: string | undefined | null, now: number): string {
  const ms = parseTime(t);
  if (ms === null) return '';
  const diff = now - ms;
  if (diff < 0) return `in ${formatDurationMs(-diff)}`;
  if (diff >= 60_000 && diff < 3_600_000) return `${Math.floor(diff / 60_000)}m ago`;
  return `${formatDurationMs(diff)} ago`;
}

/**
 * formatCountdown renders a wait for a time in the future in tens of seconds below a minute
 * ("in 30s", "in 10s" for the last ten) and minutes beyond ("in 2m"); "now" once it is due.
 * Rounded up, so it never says less than what is left. Its text changes every 10 s at most, so a
 * retry countdown does not keep the dashboard's clock ticking each second (clock.ts); the view
 * shows the exact time next to it.
 */
export function formatCountdown(t: string | undefined | null, now: number): string {
  const ms = parseTime(t);
  if (ms === null) return '';
  const left = ms - now;
  if (left <= 0) return 'now';
  if (left <= 60_000) return `in ${Math.ceil(left / 10_000) * 10}s`;
  return `in ${Math.ceil(left / 60_000)}m`;
}

/**
 * splitArgs splits a command-line style string into arguments: whitespace separates, single quotes
 * keep everything literally, double quotes keep spaces and honour \" and \\, a backslash outside
 * quotes escapes the next character. No globbing or variables: the process is started directly,
 * not through a shell.
 */
export function splitArgs(input: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inArg = false;
  let quote: '' | "'" | '"' = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (quote === "'") {
      if (c === "'") quote = '';
      else cur += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = '';
      else if (c === '\\' && (input[i + 1] === '"' || input[i + 1] === '\\')) cur += input[++i];
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inArg = true;
    } else if (c === '\\' && i + 1 < input.length) {
      cur += input[++i];
      inArg = true;
    } else if (/\s/.test(c)) {
      if (inArg) out.push(cur);
      cur = '';
      inArg = false;
    } else {
      cur += c;
      inArg = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in arguments`);
  if (inArg) out.push(cur);
  return out;
}

/** statusTone maps a status string to a colour class used by badges. */
export function statusTone(status: string | undefined): 'ok' | 'bad' | 'busy' | 'idle' {
  switch ((status ?? '').toLowerCase()) {
    case 'running':
    case 'active':
    case 'connected':
    case 'in_progress':
    case 'started':
    case 'queued':
    case 'pending':
    case 'creating':
      return 'busy';
    case 'success':
    case 'succeeded':
    case 'passed':
    case 'done':
    case 'completed':
    case 'complete':
    case 'ok':
    case 'exited':
      return 'ok';
    case 'failed':
    case 'failure':
    case 'error':
    case 'killed':
    case 'cancelled':
    case 'canceled':
      return 'bad';
    default:
      return 'idle';
  }
}

/**
 * processDuration is the runtime to show for a process: a running one's record is only as fresh as
 * its last event, so count from startedAt; an ended one reports its final duration.
 */
export function processDuration(p: Pick<ProcessInfo, 'status' | 'startedAt' | 'duration'>, now: number): string {
  const started = parseTime(p.startedAt);
  if (p.status === 'running' && started !== null && now >= started) return formatDurationMs(now - started);
  return formatGoDuration(p.duration);
}

/** countOf says a count with its noun in the right number: "1 rule", "3 rules", "0 tools". */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/**
 * addressParts splits an address (a path, a URL, a socket, host:port) after each run of
 * separators (/, :, ., ?, &, =, _), the places it may wrap at: "/tmp/a.sock" → ["/", "tmp/",
 * "a.", "sock"]. Joined, the parts are the address again.
 */
export function addressParts(address: string): string[] {
  return address.match(/[^/:.?&=_]*[/:.?&=_]+|[^/:.?&=_]+$/g) ?? [];
}
