// Settings › Start at login: the same switch as the tray's, which may be flipped elsewhere while
// the view is open.

import type { ActivityEntry } from '../types';

/**
 * autostartMark identifies the newest "Start at login" switch in the activity feed (from the tray,
 * this view or another window), or '' when there is none: when it changes, the view re-reads
 * whether the login entry exists.
 */
export function autostartMark(entries: ActivityEntry[]): string {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e.tool === 'autostart_set' && e.outcome !== 'started') return `${e.callId ?? ''}@${e.time}`;
  }
  return '';
}

/**
 * AutostartWatch tells when a newer switch shows up in the activity feed than the newest one when
 * the view opened (whose result the view's first read already has).
 */
export class AutostartWatch {
  private seen: string | undefined;

  /** changed records the feed's newest switch and says whether it is new since the last call (never on the first). */
  changed(entries: ActivityEntry[]): boolean {
    const mark = autostartMark(entries);
    const newer = this.seen !== undefined && mark !== this.seen;
    this.seen = mark;
    return newer;
  }
}
