// Hub channel "ml": the inference backends and whether each answered its live check. Every
// snapshot and event carries the whole list (mcp/tools/ml.go, MLBackendsOutput), so the reducer
// replaces the state; malformed entries are dropped rather than trusted.
import type * as tools from './generated/tools';
import type { HubMessage } from './types';

export type MLBackend = tools.MLBackendInfo;

export interface MLState {
  backends: MLBackend[];
  default: string;
}

export const initialML: MLState = { backends: [], default: '' };

export function reduceML(state: MLState, msg: HubMessage): MLState {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const d = msg.data as { backends?: unknown; default?: unknown } | null;
  if (!d || typeof d !== 'object' || !Array.isArray(d.backends)) return state;
  const backends: MLBackend[] = [];
  for (const b of d.backends as Record<string, unknown>[]) {
    if (!b || typeof b.name !== 'string' || typeof b.available !== 'boolean') continue;
    backends.push({
      name: b.name,
      available: b.available,
      kind: typeof b.kind === 'string' ? b.kind : '',
      url: typeof b.url === 'string' ? b.url : '',
      model: typeof b.model === 'string' ? b.model : undefined,
      error: typeof b.error === 'string' ? b.error : undefined,
      assumed: b.assumed === true ? true : undefined,
    });
  }
  return { backends, default: typeof d.default === 'string' ? d.default : '' };
}
