// Settings › Web fetch: the private addresses web_fetch may reach, and its timeout.

import { lines } from './common';
import type { Settings, SettingsWebInput } from '../types';

export interface WebForm {
  /** One allow-list entry per line. */
  allow: string;
  timeout: string;
}

/** The fields the section has an input for. */
export const WEB_FIELDS = ['web.allow', 'web.timeout'];

export function emptyWebForm(): WebForm {
  return { allow: '', timeout: '' };
}

export function webForm(s: Settings): WebForm {
  return { allow: (s.web?.allow ?? []).join('\n'), timeout: s.web?.timeout ?? '' };
}

export function webInput(f: WebForm): SettingsWebInput {
  return { allow: lines(f.allow), timeout: f.timeout.trim() };
}
