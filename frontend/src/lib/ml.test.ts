import { describe, expect, it } from 'vitest';
import { initialML, reduceML } from './ml';

const msg = (type: string, data: unknown) => ({ type, channel: 'ml', data, timestamp: '2026-01-01T00:00:00Z' });

describe('reduceML', () => {
  it('replaces the list on snapshot and event', () => {
    const s1 = reduceML(initialML, msg('snapshot', {
      backends: [
        { name: 'ollama', available: true, kind: 'ollama', url: 'http://localhost:11434' },
        { name: 'gpu', available: false, kind: 'openai', url: 'http://gpu/v1', model: 'qwen', error: 'refused' },
      ],
      default: 'ollama',
    }));
    expect(s1.default).toBe('ollama');
    expect(s1.backends.map((b) => [b.name, b.available])).toEqual([['ollama', true], ['gpu', false]]);
    expect(s1.backends[1]).toMatchObject({ model: 'qwen', error: 'refused' });
    const s2 = reduceML(s1, msg('event', { backends: [{ name: 'ollama', available: false, kind: 'ollama', url: 'u' }], default: 'ollama' }));
    expect(s2.backends).toHaveLength(1);
    expect(s2.backends[0].available).toBe(false);
  });

  it('ignores other message types and malformed data', () => {
    expect(reduceML(initialML, msg('subscribed', { backends: [] }))).toBe(initialML);
    expect(reduceML(initialML, msg('event', null))).toBe(initialML);
    expect(reduceML(initialML, msg('event', { backends: 'x' }))).toBe(initialML);
    const s = reduceML(initialML, msg('event', { backends: [{ name: 1 }, { name: 'ok', available: true }, null] }));
    expect(s.backends.map((b) => b.name)).toEqual(['ok']);
    expect(s.default).toBe('');
  });
});
