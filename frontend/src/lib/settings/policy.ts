// Settings › Policy and roots: the allow/ask/deny rules in order, the default, the ask timeout, the
// roots that become a workspace without asking, and a test call decided against the rules as
// edited (not yet saved).

import { lines } from './common';
import type { FieldError } from './errors';
import type { ServerStatus, ServerTool, Settings, SettingsPolicyInput, SettingsPolicyRule, SettingsPolicyTest, ToolsetInfo } from '../types';

export const ACTIONS = ['allow', 'ask', 'deny'] as const;

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

export interface TestForm {
  tool: string;
  /** The call's arguments as typed: a JSON object, or empty. */
  args: string;
  client: string;
}

export function emptyPolicyForm(): PolicyForm {
  return { default: 'allow', askTimeout: '', rules: [], roots: '' };
}

export function emptyTestForm(): TestForm {
  return { tool: '', args: '', client: '' };
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

export function newRule(): RuleForm {
  return { tool: '', args: '', client: '', action: 'deny', origin: 0 };
}

/** The key of the i-th rule (0-based), as the hub names it in its errors. */
export function ruleField(i: number): string {
  return `policy.rules[${i + 1}]`;
}

/** The fields the section has an input for; an error about anything else shows at its top. */
export function policyFields(f: PolicyForm): string[] {
  return ['policy.default', 'policy.ask_timeout', 'roots.allow', ...f.rules.map((_, i) => ruleField(i))];
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

/** The test fields with an input; an error about anything else shows under them. */
export const TEST_FIELDS = ['tool', 'args'];

/**
 * testInput is POST /api/settings/policy/test's body: the call as typed, decided against the
 * rules as edited. A rule or the arguments that do not parse is an error naming its field.
 */
export function testInput(f: PolicyForm, t: TestForm): { value: SettingsPolicyTest } | { error: FieldError } {
  const policy = policyInput(f);
  if ('error' in policy) return policy;
  const args = testArgs(t.args);
  if ('error' in args) return args;
  return { value: { policy: policy.value, tool: t.tool.trim(), args: args.value, client: t.client.trim() } };
}

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
 * toolNameOptions are the names a rule's tool field offers: every tool of every toolset (served
 * or not), the upstream servers' tools as clients see them (`server__tool`, quarantined ones too)
 * and a `server__*` glob for each server; sorted, once each.
 */
export function toolNameOptions(
  toolsets: readonly Pick<ToolsetInfo, 'tools'>[],
  servers: readonly (Pick<ServerStatus, 'name'> & { tools?: Pick<ServerTool, 'exposed'>[] | null })[],
): string[] {
  const names = new Set<string>();
  for (const ts of toolsets) for (const t of ts.tools ?? []) names.add(t);
  for (const s of servers) {
    names.add(`${s.name}__*`);
    for (const t of s.tools ?? []) if (t.exposed) names.add(t.exposed);
  }
  return [...names].sort();
}
