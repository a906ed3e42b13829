// The Settings view: the settings people otherwise write in the config file, as forms. Each
// section saves on its own (POST /api/settings/<section>); the hub checks the values, writes the
// file keeping its comments and order, and applies what it can at once. Pure functions over the
// GET /api/settings answer and the forms, tested without a DOM.

import type {
  ActivityEntry,
  Settings,
  SettingsMLInput,
  SettingsPolicyInput,
  SettingsPolicyRule,
  SettingsRAG,
  SettingsRAGAPIKeyInput,
  SettingsSecurityInput,
  SettingsToken,
  SettingsTransportInput,
  SettingsWebInput,
} from './types';

export { diffLines, type DiffLine } from './clients';

/** The sections, each saved by its own button, in the order the view shows them. */
export const SECTIONS = ['transports', 'security', 'toolsets', 'workspace', 'policy', 'web', 'ml', 'rag', 'servers', 'autostart'] as const;
export type Section = (typeof SECTIONS)[number];

export const SECTION_TITLES: Record<Section, string> = {
  transports: 'Transports',
  security: 'Transport security',
  toolsets: 'Toolsets',
  workspace: 'Workspace',
  policy: 'Policy and roots',
  web: 'Web fetch',
  ml: 'Inference backends',
  rag: 'RAG',
  servers: 'Upstream servers',
  autostart: 'Start at login',
};

export const ACTIONS = ['allow', 'ask', 'deny'] as const;

// ---- forms ------------------------------------------------------------------------------------

export interface TransportForm {
  name: string;
  enabled: boolean;
  addr: string;
}

export interface RuleForm {
  tool: string;
  /** One `name=glob` per line (e.g. command=rm*). */
  args: string;
  client: string;
  action: string;
  /** The rule's 1-based place in the file when read; 0 for a rule added here. */
  origin: number;
}

export interface PolicyForm {
  default: string;
  askTimeout: string;
  rules: RuleForm[];
  /** One directory per line. */
  roots: string;
}

export interface BackendForm {
  name: string;
  kind: string;
  url: string;
  model: string;
  apiKeyEnv: string;
  endpoint: string;
  origin: number;
}

export interface MLForm {
  defaultBackend: string;
  judgeBackend: string;
  backends: BackendForm[];
  /** ml_status's InfluxDB 1.x server; a password in it is shown (and sent back) as xxxxx. */
  influxUrl: string;
  influxDb: string;
}

export interface SecurityForm {
  tcpRequireToken: boolean;
  /** One origin per line. */
  origins: string;
}

export interface WebForm {
  /** One allow-list entry per line. */
  allow: string;
  timeout: string;
}

/** How the RAG key form changes the key: leave it, refer to one, store a new one, remove it. */
export type RAGKeyMode = 'keep' | 'reference' | 'store' | 'remove';

export interface RAGKeyForm {
  mode: RAGKeyMode;
  /** ${secret:NAME} or ${VAR}. */
  ref: string;
  /** The keyring name a new key is stored under. */
  name: string;
  /** The new key itself: sent once to the hub, which puts it in the keyring. */
  value: string;
}

export interface TestForm {
  tool: string;
  /** The call's arguments as typed: a JSON object, or empty. */
  args: string;
  client: string;
}

export function transportsForm(s: Settings): TransportForm[] {
  return (s.transports ?? []).map((t) => ({ name: t.name, enabled: t.enabled, addr: t.addr }));
}

/** The toolsets that are checked: the saved list, or the default set when the file has none. */
export function toolsetsForm(s: Settings): string[] {
  const saved = s.toolsets?.saved ?? [];
  return [...(saved.length ? saved : (s.toolsets?.default ?? []))];
}

export function argsText(args: Record<string, string> | undefined): string {
  return Object.entries(args ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

export function policyForm(s: Settings): PolicyForm {
  const p = s.policy;
  return {
    default: p?.default || 'allow',
    askTimeout: p?.askTimeout ?? '',
    rules: (p?.rules ?? []).map((r) => ({ tool: r.tool, args: argsText(r.args), client: r.client ?? '', action: r.action, origin: r.origin ?? 0 })),
    roots: (p?.roots ?? []).join('\n'),
  };
}

export function mlForm(s: Settings): MLForm {
  const m = s.ml;
  return {
    defaultBackend: m?.defaultBackend ?? '',
    judgeBackend: m?.judgeBackend ?? '',
    influxUrl: m?.influxUrl ?? '',
    influxDb: m?.influxDb ?? '',
    backends: (m?.backends ?? []).map((b) => ({
      name: b.name,
      kind: b.kind,
      url: b.url,
      model: b.model ?? '',
      apiKeyEnv: b.apiKeyEnv ?? '',
      endpoint: b.endpoint ?? '',
      origin: b.origin ?? 0,
    })),
  };
}

export function ragForm(s: Settings): SettingsRAG {
  const r = s.rag;
  return {
    backend: r?.backend ?? '',
    url: r?.url ?? '',
    embedder: r?.embedder ?? '',
    model: r?.model ?? '',
    embedderUrl: r?.embedderUrl ?? '',
    collection: r?.collection ?? '',
    dir: r?.dir ?? '',
  };
}

export function securityForm(s: Settings): SecurityForm {
  return { tcpRequireToken: s.security?.tcpRequireToken ?? false, origins: (s.security?.httpAllowedOrigins ?? []).join('\n') };
}

export function webForm(s: Settings): WebForm {
  return { allow: (s.web?.allow ?? []).join('\n'), timeout: s.web?.timeout ?? '' };
}

/** The RAG key form starts by leaving the key as it is; a new key is stored as rag-api-key unless named. */
export function ragKeyForm(s: Settings): RAGKeyForm {
  const k = s.rag?.apiKey;
  const ref = k?.state === 'secret' ? `\${secret:${k.name}}` : k?.state === 'env' ? `\${${k.name}}` : '';
  return { mode: 'keep', ref, name: k?.state === 'secret' && k.name ? k.name : 'rag-api-key', value: '' };
}

export function newRule(): RuleForm {
  return { tool: '', args: '', client: '', action: 'deny', origin: 0 };
}

export function newBackend(): BackendForm {
  return { name: '', kind: 'ollama', url: '', model: '', apiKeyEnv: '', endpoint: '', origin: 0 };
}

/** move returns list with item i moved by delta places (unchanged when it would leave the list). */
export function move<T>(list: T[], i: number, delta: number): T[] {
  const j = i + delta;
  if (i < 0 || i >= list.length || j < 0 || j >= list.length) return list;
  const out = list.slice();
  const [item] = out.splice(i, 1);
  out.splice(j, 0, item);
  return out;
}

export function removeAt<T>(list: T[], i: number): T[] {
  return list.filter((_, k) => k !== i);
}

/** lines splits a textarea into its non-blank lines, trimmed. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

// ---- building the API's input -----------------------------------------------------------------

/** A problem with a field, named as the config file names it (policy.rules[2].args). */
export interface FieldError {
  field: string;
  text: string;
}

/** parseArgs reads a rule's `name=glob` lines; a line without a name is an error naming the rule. */
export function parseArgs(text: string, rule: number): { value: Record<string, string> } | { error: FieldError } {
  const out: Record<string, string> = {};
  const all = text.split('\n');
  for (let i = 0; i < all.length; i++) {
    const line = all[i].trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    const name = eq > 0 ? line.slice(0, eq).trim() : '';
    if (!name) {
      const field = `policy.rules[${rule}].args`;
      return { error: { field, text: `${field}: line ${i + 1} "${line}" is not name=glob, e.g. command=rm*` } };
    }
    out[name] = line.slice(eq + 1).trim();
  }
  return { value: out };
}

export function ruleInput(r: RuleForm, index: number): { value: SettingsPolicyRule } | { error: FieldError } {
  const args = parseArgs(r.args, index + 1);
  if ('error' in args) return args;
  const rule: SettingsPolicyRule = { tool: r.tool.trim(), action: r.action };
  if (Object.keys(args.value).length) rule.args = args.value;
  if (r.client.trim()) rule.client = r.client.trim();
  if (r.origin > 0) rule.origin = r.origin;
  return { value: rule };
}

/** policyInput is POST /api/settings/policy's body (and the policy a test runs against). */
export function policyInput(f: PolicyForm): { value: SettingsPolicyInput } | { error: FieldError } {
  const rules: SettingsPolicyRule[] = [];
  for (let i = 0; i < f.rules.length; i++) {
    const r = ruleInput(f.rules[i], i);
    if ('error' in r) return r;
    rules.push(r.value);
  }
  return { value: { default: f.default, askTimeout: f.askTimeout.trim(), rules, roots: lines(f.roots) } };
}

/** testArgs reads the test form's arguments: empty, or a JSON object. */
export function testArgs(text: string): { value: Record<string, unknown> | undefined } | { error: FieldError } {
  if (!text.trim()) return { value: undefined };
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return { value: v as Record<string, unknown> };
  } catch {
    // reported below
  }
  return { error: { field: 'args', text: 'args: not a JSON object; write it like {"command": "rm", "args": ["-rf", "build"]}' } };
}

export function transportsInput(f: TransportForm[]): SettingsTransportInput[] {
  return f.map((t) => ({ name: t.name, enabled: t.enabled, addr: t.addr.trim() }));
}

export function mlInput(f: MLForm): SettingsMLInput {
  return {
    defaultBackend: f.defaultBackend.trim(),
    judgeBackend: f.judgeBackend.trim(),
    influxUrl: f.influxUrl.trim(),
    influxDb: f.influxDb.trim(),
    backends: f.backends.map((b) => {
      const out: SettingsMLInput['backends'][number] = { name: b.name.trim(), kind: b.kind, url: b.url.trim() };
      if (b.model.trim()) out.model = b.model.trim();
      if (b.apiKeyEnv.trim()) out.apiKeyEnv = b.apiKeyEnv.trim();
      if (b.endpoint) out.endpoint = b.endpoint;
      if (b.origin > 0) out.origin = b.origin;
      return out;
    }),
  };
}

export function securityInput(f: SecurityForm): SettingsSecurityInput {
  return { tcpRequireToken: f.tcpRequireToken, httpAllowedOrigins: lines(f.origins) };
}

export function webInput(f: WebForm): SettingsWebInput {
  return { allow: lines(f.allow), timeout: f.timeout.trim() };
}

/**
 * ragKeyInput is POST /api/settings/rag/apikey's body, or null when the form leaves the key as it
 * is. A pasted key is checked here only for being there: the hub checks the rest.
 */
export function ragKeyInput(f: RAGKeyForm): { value: SettingsRAGAPIKeyInput | null } | { error: FieldError } {
  switch (f.mode) {
    case 'keep':
      return { value: null };
    case 'remove':
      return { value: { action: 'remove' } };
    case 'reference':
      return { value: { action: 'reference', ref: f.ref.trim() } };
    case 'store':
      if (!f.value.trim()) return { error: { field: 'rag.api_key', text: 'rag.api_key: paste the key to store in the keyring' } };
      return { value: { action: 'store', name: f.name.trim(), value: f.value } };
  }
}

/** The toolsets to save in the hub's order (checked in any order). */
export function toolsetsInput(checked: string[], order: string[]): string[] {
  return order.filter((n) => checked.includes(n));
}

// ---- errors -----------------------------------------------------------------------------------

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

// ---- display ----------------------------------------------------------------------------------

/** Badge tone of a policy decision. */
export function decisionTone(d: string): 'ok' | 'busy' | 'bad' | 'idle' {
  switch (d) {
    case 'allow':
      return 'ok';
    case 'ask':
      return 'busy';
    case 'deny':
      return 'bad';
  }
  return 'idle';
}

/**
 * What overrides keys of a section in this hub (tcp.addr for transports, …): environment
 * variables, and command-line flags that set a key to something other than the file's value.
 */
export function overridesFor(s: Settings, prefixes: string[]): string[] {
  const matches = (key: string) => prefixes.some((p) => key.split(', ').some((k) => k === p || k.startsWith(p + '.')));
  const env = (s.overrides ?? []).filter((o) => matches(o.key)).map((o) => (o.adds ? `${o.env} adds to ${o.key}` : `${o.env} overrides ${o.key}`));
  const flags = (s.flags ?? [])
    .filter((f) => matches(f.key))
    .map((f) => `${f.key} is set by ${f.flag}${f.value ? ` (${f.value})` : ''} for this run; the saved value applies when Switchboard is started without it`);
  return [...env, ...flags];
}

/** Where a token is kept, for people: never its value. */
export function tokenWhere(t: SettingsToken): string {
  switch (t.source) {
    case 'file':
      return t.exists ? `kept in ${t.where}` : `kept in ${t.where} (created on first use)`;
    case 'config':
      return `set in ${t.where}`;
    case 'env':
      return `set by the environment variable ${t.where}`;
    case 'flag':
      return `set by ${t.where} for this run`;
    case 'client':
      return 'uses the client token';
  }
  return t.where;
}

/** The label of a token's row. */
export function tokenTitle(t: SettingsToken): string {
  if (t.name === 'client') return `Client token (${t.usedBy.length ? t.usedBy.map((u) => u.toUpperCase()).join(', ') : 'no transport now'})`;
  return `${t.name.toUpperCase()} token`;
}

/** How the file holds the RAG key, for people: never the key. */
export function ragKeyText(s: Settings): string {
  const k = s.rag?.apiKey;
  switch (k?.state) {
    case 'secret':
      return `the keyring secret ${k.name} (\${secret:${k.name}})`;
    case 'env':
      return `the environment variable ${k.name} (\${${k.name}})`;
    case 'literal':
      return 'a key written in the file (not shown); store it in the keyring instead';
  }
  return 'none';
}

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

export function isPending(s: Settings, section: Section): boolean {
  return (s.pending ?? []).includes(section);
}

/** The confirmation line of a save. */
export function savedText(change: { path: string; diff: string; applies: string }): string {
  if (!change.diff) return `Nothing to change in ${change.path}: it already says this.`;
  return change.applies === 'now' ? `Saved to ${change.path} and in force now.` : `Saved to ${change.path}; applies at the next start.`;
}

/** The [rag] keys the RAG form edits as text (the API key has its own form). */
export type RAGField = Exclude<keyof SettingsRAG, 'apiKey'>;

/** What an empty field means, for placeholders. */
export const RAG_DEFAULTS: Record<RAGField, string> = {
  backend: 'embedded',
  url: 'localhost:6334',
  embedder: 'offline',
  model: 'nomic-embed-text / text-embedding-3-small',
  embedderUrl: '$OLLAMA_HOST / $OPENAI_BASE_URL',
  collection: 'hostuk-docs',
  dir: '<data_dir>/rag',
};
