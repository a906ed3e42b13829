// Settings › Code intelligence: the [code] section (the language-server pool's idle time and each
// language's server command) as a form. The hub checks and applies a save (SaveCode): these
// helpers turn the settings into the form and back, and catch a mistyped idle time early.
import type { CodeInput } from '../generated/app';
import type { Settings } from '../types';

/** The form: idle as typed, and each language's command line as one line of text. */
export interface CodeForm {
  idle: string;
  servers: Record<string, string>;
}

/** The fields the section has an input for (a language's is code.servers.<language>). */
export const CODE_FIELDS = ['code.idle', 'code.servers'];

export function emptyCodeForm(): CodeForm {
  return { idle: '', servers: {} };
}

export function codeForm(s: Settings): CodeForm {
  const servers: Record<string, string> = {};
  for (const sv of s.code?.servers ?? []) servers[sv.language] = sv.command.join(' ');
  return { idle: s.code?.idle ?? '', servers };
}

/** A command line split at blanks: the program, then its arguments ([] : none, the default). */
export function splitCommand(line: string): string[] {
  return line.split(/\s+/).filter((w) => w !== '');
}

/** What the form saves: every language, an empty command meaning the default. */
export function codeInput(f: CodeForm): CodeInput {
  const servers: Record<string, string[]> = {};
  for (const [lang, line] of Object.entries(f.servers)) servers[lang] = splitCommand(line);
  return { idle: f.idle.trim(), servers };
}

const durationRE = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

/** Why idle would be refused, "" when it reads as a duration (the hub checks the rest). */
export function idleError(idle: string): string {
  const v = idle.trim();
  if (v === '' || v === '0' || durationRE.test(v)) return '';
  return `code.idle: "${v}" is not a duration; write it like "10m" or "1h", "0s" to keep servers running, or leave it empty for the default`;
}

/** Whether the form differs from the settings, blanks in a command line aside. */
export function codeChanged(f: CodeForm, s: Settings): boolean {
  const saved = codeForm(s);
  if (f.idle.trim() !== saved.idle) return true;
  return Object.keys({ ...saved.servers, ...f.servers }).some((l) => splitCommand(f.servers[l] ?? '').join(' ') !== (saved.servers[l] ?? ''));
}
