import { describe, expect, it } from 'vitest';
import { mlFields, mlForm, mlInput, newBackend } from './ml';
import { sampleSettings } from '../../test/settings';

describe('inference backends', () => {
  it('fills the form from GET /api/settings', () => {
    expect(mlForm(sampleSettings()).backends[0]).toEqual({ name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', model: '', apiKeyEnv: '', endpoint: '', origin: 1 });
  });

  it('builds the backends: trimmed, empty parts left out, origins kept', () => {
    const f = mlForm(sampleSettings());
    f.backends.push({ name: ' local ', kind: 'ollama', url: 'http://127.0.0.1:11434 ', model: '', apiKeyEnv: '', endpoint: 'generate', origin: 0 });
    expect(mlInput(f)).toEqual({
      defaultBackend: 'gpu',
      judgeBackend: '',
      // The URL as shown (password hidden) goes back as is: the hub keeps the file's.
      influxUrl: 'http://admin:xxxxx@influx.lab:8086',
      influxDb: '',
      backends: [
        { name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', origin: 1 },
        { name: 'local', kind: 'ollama', url: 'http://127.0.0.1:11434', endpoint: 'generate' },
      ],
    });
  });

  it('has an input for the defaults, InfluxDB and each backend', () => {
    const f = mlForm(sampleSettings());
    f.backends.push(newBackend());
    expect(mlFields(f)).toEqual(['ml.default_backend', 'ml.judge_backend', 'ml.influx_url', 'ml.influx_db', 'ml.backends[1]', 'ml.backends[2]']);
  });
});
