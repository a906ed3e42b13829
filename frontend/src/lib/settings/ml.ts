// Settings › Inference backends: the ml_* tools' backends besides the built-in ones, the default
// and judge backends, and ml_status's InfluxDB.

import type { Settings, SettingsMLInput } from '../types';

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

export function emptyMLForm(): MLForm {
  return { defaultBackend: '', judgeBackend: '', backends: [], influxUrl: '', influxDb: '' };
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

export function newBackend(): BackendForm {
  return { name: '', kind: 'ollama', url: '', model: '', apiKeyEnv: '', endpoint: '', origin: 0 };
}

/** The key of the i-th backend (0-based), as the hub names it in its errors. */
export function backendField(i: number): string {
  return `ml.backends[${i + 1}]`;
}

/** The fields the section has an input for; an error about anything else shows at its top. */
export function mlFields(f: MLForm): string[] {
  return ['ml.default_backend', 'ml.judge_backend', 'ml.influx_url', 'ml.influx_db', ...f.backends.map((_, i) => backendField(i))];
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
