// The keyboard of a tab strip (WAI-ARIA tabs pattern): arrows move to the neighbouring tab
// (wrapping round), Home and End to the first and last; any other key is not the strip's.

/** The tab a key moves to from current, or null when the key is not a tab-strip key. */
export function tabForKey<T>(tabs: readonly T[], current: T, key: string): T | null {
  if (tabs.length === 0) return null;
  const i = Math.max(0, tabs.indexOf(current));
  switch (key) {
    case 'ArrowRight':
      return tabs[(i + 1) % tabs.length];
    case 'ArrowLeft':
      return tabs[(i - 1 + tabs.length) % tabs.length];
    case 'Home':
      return tabs[0];
    case 'End':
      return tabs[tabs.length - 1];
    default:
      return null;
  }
}
