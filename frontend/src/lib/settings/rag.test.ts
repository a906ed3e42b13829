import { describe, expect, it } from 'vitest';
import { RAG_FIELDS, ragForm, ragKeyForm, ragKeyInput, ragKeyText } from './rag';
import { sampleSettings } from '../../test/settings';

describe('RAG', () => {
  it('fills the form from GET /api/settings; the fields are named as the file names them', () => {
    expect(ragForm(sampleSettings()).collection).toBe('hostuk-docs');
    expect(RAG_FIELDS).toEqual(['rag.backend', 'rag.url', 'rag.embedder', 'rag.model', 'rag.embedder_url', 'rag.collection', 'rag.dir']);
  });

  it('changes the key only when asked, and a new key only with a value', () => {
    const s = sampleSettings();
    expect(ragKeyText(s)).toBe('the keyring secret lab-qdrant (${secret:lab-qdrant})');
    expect(ragKeyText(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'env', name: 'QDRANT_API_KEY' } } }))).toBe('the environment variable QDRANT_API_KEY (${QDRANT_API_KEY})');
    expect(ragKeyText(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'literal' } } }))).toContain('not shown');
    expect(ragKeyText(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'none' } } }))).toBe('none');
    const f = ragKeyForm(s);
    expect(f).toEqual({ mode: 'keep', ref: '${secret:lab-qdrant}', name: 'lab-qdrant', value: '' });
    expect(ragKeyForm(sampleSettings({ rag: { ...s.rag, apiKey: { state: 'none' } } })).name).toBe('rag-api-key');
    expect(ragKeyInput(f)).toEqual({ value: null });
    expect(ragKeyInput({ ...f, mode: 'store' })).toEqual({ error: { field: 'rag.api_key', text: 'rag.api_key: paste the key to store in the keyring' } });
    expect(ragKeyInput({ ...f, mode: 'store', name: ' lab ', value: 'k-123' })).toEqual({ value: { action: 'store', name: 'lab', value: 'k-123' } });
    expect(ragKeyInput({ ...f, mode: 'reference', ref: ' ${KEY} ' })).toEqual({ value: { action: 'reference', ref: '${KEY}' } });
    expect(ragKeyInput({ ...f, mode: 'remove' })).toEqual({ value: { action: 'remove' } });
  });
});
