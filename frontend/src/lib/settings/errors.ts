// A failed save of a Settings section: the hub's message split into the errors that name a field
// (shown next to its input) and the rest (shown at the section's top).

/** A problem with a field, named as the config file names it (policy.rules[2].args). */
export interface FieldError {
  field: string;
  text: string;
}

/** The errors of one failed save: those that name a field, and the rest. */
export interface SaveErrors {
  fields: FieldError[];
  general: string[];
}

const FIELD_RE = /^([A-Za-z_][\w-]*(?:\[\d+\])?(?:\.[\w-]+(?:\[\d+\])?)*): /;

/**
 * saveErrors splits a failed save's message into one error per line (the hub joins several with
 * newlines) and tells the field each names. The control prefixes its action and, over HTTP, the
 * status ("save policy: HTTP 400: "), which the form does not repeat.
 */
export function saveErrors(message: string): SaveErrors {
  const text = message.replace(/^(?:save [^:]+|test a call|read settings|regenerate the \w+ token|(?:en|dis)able start at login): (?:HTTP \d{3}: )?/, '');
  const out: SaveErrors = { fields: [], general: [] };
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const m = line.match(FIELD_RE);
    if (m && m[1] !== 'settings' && m[1] !== 'config') out.fields.push({ field: m[1], text: line });
    else out.general.push(line);
  }
  return out;
}

/** The errors of a check made here, before anything is sent: one field error. */
export function fieldErrors(e: FieldError): SaveErrors {
  return { fields: [e], general: [] };
}

/** errorsAt lists the errors about field or anything below it (policy.rules[2] covers .tool, .args.x). */
export function errorsAt(errs: SaveErrors | null | undefined, field: string): string[] {
  if (!errs) return [];
  return errs.fields.filter((e) => e.field === field || e.field.startsWith(field + '.') || e.field.startsWith(field + '[')).map((e) => e.text);
}

/** unplaced lists the errors no input of the section shows (fields other than those given). */
export function unplaced(errs: SaveErrors | null | undefined, shown: string[]): string[] {
  if (!errs) return [];
  const placed = (f: string) => shown.some((s) => f === s || f.startsWith(s + '.') || f.startsWith(s + '['));
  return [...errs.general, ...errs.fields.filter((e) => !placed(e.field)).map((e) => e.text)];
}

/** The text of a thrown error. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
