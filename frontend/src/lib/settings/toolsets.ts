// Settings › Toolsets: the tool groups served to every client.

import type { Settings } from '../types';

/** The toolsets that are checked: the saved list, or the default set when the file has none. */
export function toolsetsForm(s: Settings): string[] {
  const saved = s.toolsets?.saved ?? [];
  return [...(saved.length ? saved : (s.toolsets?.default ?? []))];
}

/** The toolsets to save in the hub's order (checked in any order). */
export function toolsetsInput(checked: string[], order: string[]): string[] {
  return order.filter((n) => checked.includes(n));
}

/** The hub's order of the toolsets: every one it has. */
export function toolsetsOrder(s: Settings | null): string[] {
  return (s?.toolsets.available ?? []).map((t) => t.name);
}
