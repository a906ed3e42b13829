// Settings › Workspace: the directory clients work in.

import type { Settings } from '../types';

/** The fields the section has an input for. */
export const WORKSPACE_FIELDS = ['workspace'];

/** The saved workspace ('' when the file has none: the running one is shown beside it). */
export function workspaceForm(s: Settings): string {
  return s.workspace?.saved ?? '';
}

export function workspaceInput(text: string): string {
  return text.trim();
}
