// Settings › Transport security: who may connect over TCP and Streamable HTTP, and the tokens,
// described by where they are kept (never by value) and regenerated in place.

import { lines } from './common';
import type { Settings, SettingsSecurityInput, SettingsToken } from '../types';

export interface SecurityForm {
  tcpRequireToken: boolean;
  /** One origin per line. */
  origins: string;
}

/** The keys whose overrides the section shows. */
export const SECURITY_KEYS = ['tcp.token', 'http.token', 'tcp.require_token', 'http.allowed_origins'];

/** The fields the section has an input for. */
export const SECURITY_FIELDS = ['tcp.require_token', 'http.allowed_origins'];

export function emptySecurityForm(): SecurityForm {
  return { tcpRequireToken: false, origins: '' };
}

export function securityForm(s: Settings): SecurityForm {
  return { tcpRequireToken: s.security?.tcpRequireToken ?? false, origins: (s.security?.httpAllowedOrigins ?? []).join('\n') };
}

export function securityInput(f: SecurityForm): SettingsSecurityInput {
  return { tcpRequireToken: f.tcpRequireToken, httpAllowedOrigins: lines(f.origins) };
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
