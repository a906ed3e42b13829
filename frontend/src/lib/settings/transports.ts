// Settings › Transports: which listeners start with the hub and where.

import type { Settings, SettingsTransportInput } from '../types';

export interface TransportForm {
  name: string;
  enabled: boolean;
  addr: string;
}

/** The keys whose overrides the section shows. */
export const TRANSPORT_KEYS = ['tcp', 'unix', 'http'];

export function transportsForm(s: Settings): TransportForm[] {
  return (s.transports ?? []).map((t) => ({ name: t.name, enabled: t.enabled, addr: t.addr }));
}

export function transportsInput(f: TransportForm[]): SettingsTransportInput[] {
  return f.map((t) => ({ name: t.name, enabled: t.enabled, addr: t.addr.trim() }));
}

/** The key of a transport's address field: the Unix socket has a path, the others an address. */
export function addrField(name: string): string {
  return `${name}.${name === 'unix' ? 'path' : 'addr'}`;
}

export function enabledField(name: string): string {
  return `${name}.enabled`;
}

/** The fields the section has an input for; an error about anything else shows at its top. */
export function transportFields(f: TransportForm[]): string[] {
  return f.map((t) => addrField(t.name)).concat(f.map((t) => enabledField(t.name)));
}
