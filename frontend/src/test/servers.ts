// Server statuses for the tests of the Servers view's logic.

import type { ServerStatus, ServerTool } from '../lib/types';

export function tool(name: string, state: string, extra: Partial<ServerTool> = {}): ServerTool {
  return { name, exposed: `fixture__${name}`, state, description: `${name} tool`, read_only: true, flags: [], ...extra };
}

export function server(name: string, extra: Partial<ServerStatus> = {}): ServerStatus {
  return {
    name,
    transport: 'stdio',
    command: `node ${name}.mjs`,
    enabled: true,
    start: 'eager',
    state: 'running',
    command_approved: true,
    command_hash: `hash-${name}`,
    env: [],
    oauth: false,
    signed_in: false,
    sandbox: { mode: 'confined', detail: 'confined with Landlock when it starts', read: [], write: [] },
    approved: true,
    restarts: 0,
    tools: [],
    resources: 0,
    resource_templates: 0,
    prompts: 0,
    held: 0,
    flagged: 0,
    in_flight: 0,
    calls: 0,
    ...extra,
  };
}
