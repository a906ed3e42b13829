// Settings › Client tokens: each MCP client's own bearer token for the HTTP endpoint, which names
// the client to the hub (the identity of a stateless 2026-07-28 client). The hub keeps only
// digests: a token is shown once, when issued.
import type { ClientToken, ClientTokenList, IssuedClientToken } from '../generated/app';
import type { Controls } from '../generated/control';

export type ClientTokensControl = Pick<Controls, 'clientTokens' | 'issueClientToken' | 'revokeClientToken'>;

/** A row of the table: the client, when its token was made, and when it was last used. */
export interface TokenRow {
  client: string;
  created: string;
  lastUsed: string;
}

/** Rows in client order; "never" for a token not used yet. */
export function tokenRows(list: ClientTokenList | null, fmt: (iso: string) => string): TokenRow[] {
  return [...(list?.tokens ?? [])]
    .sort((a: ClientToken, b: ClientToken) => a.client.localeCompare(b.client))
    .map((t) => ({ client: t.client, created: fmt(t.created), lastUsed: t.lastUsed ? fmt(t.lastUsed) : 'never' }));
}

/** Why a client name cannot be issued a token, or '' (the hub checks the same). */
export function clientNameError(name: string): string {
  if (name === '') return 'name the client (e.g. cursor)';
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) return "use letters, digits, '.', '_' or '-' (at most 64)";
  return '';
}

/** The line a client's HTTP config needs, shown once after issuing. */
export function headerLine(issued: IssuedClientToken): string {
  return `Authorization: Bearer ${issued.token}`;
}
