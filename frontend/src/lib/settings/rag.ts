// Settings › RAG: the store and embedder of rag_query and rag_ingest, and the Qdrant API key, which
// is a keyring or environment reference in the file and never shown.

import type { FieldError } from './errors';
import type { Settings, SettingsRAG, SettingsRAGAPIKeyInput } from '../types';

/** The [rag] keys the RAG form edits as text (the API key has its own form). */
export type RAGField = Exclude<keyof SettingsRAG, 'apiKey'>;

/** What an empty field means, for placeholders. */
export const RAG_DEFAULTS: Record<RAGField, string> = {
  backend: 'embedded',
  url: 'localhost:6334',
  embedder: 'offline',
  model: 'nomic-embed-text / text-embedding-3-small',
  embedderUrl: '$OLLAMA_HOST / $OPENAI_BASE_URL',
  collection: 'hostuk-docs',
  dir: '<data_dir>/rag',
};

/** The form's fields in order: the form's key, the file's key (under [rag]) and the input's test id suffix. */
export const RAG_KEYS: [RAGField, string, string][] = [
  ['backend', 'backend', 'rag-backend'],
  ['url', 'url', 'rag-url'],
  ['embedder', 'embedder', 'rag-embedder'],
  ['model', 'model', 'rag-model'],
  ['embedderUrl', 'embedder_url', 'rag-embedder-url'],
  ['collection', 'collection', 'rag-collection'],
  ['dir', 'dir', 'rag-dir'],
];

/** The fields the section has an input for. */
export const RAG_FIELDS = RAG_KEYS.map(([, key]) => `rag.${key}`);

/** The field of the key's form. */
export const RAG_KEY_FIELD = 'rag.api_key';

export function emptyRAGForm(): SettingsRAG {
  return { backend: '', url: '', embedder: '', model: '', embedderUrl: '', collection: '', dir: '' };
}

export function ragForm(s: Settings): SettingsRAG {
  const r = s.rag;
  return {
    backend: r?.backend ?? '',
    url: r?.url ?? '',
    embedder: r?.embedder ?? '',
    model: r?.model ?? '',
    embedderUrl: r?.embedderUrl ?? '',
    collection: r?.collection ?? '',
    dir: r?.dir ?? '',
  };
}

/** How the RAG key form changes the key: leave it, refer to one, store a new one, remove it. */
export type RAGKeyMode = 'keep' | 'reference' | 'store' | 'remove';

export interface RAGKeyForm {
  mode: RAGKeyMode;
  /** ${secret:NAME} or ${VAR}. */
  ref: string;
  /** The keyring name a new key is stored under. */
  name: string;
  /** The new key itself: sent once to the hub, which puts it in the keyring. */
  value: string;
}

export function emptyRAGKeyForm(): RAGKeyForm {
  return { mode: 'keep', ref: '', name: 'rag-api-key', value: '' };
}

/** The RAG key form starts by leaving the key as it is; a new key is stored as rag-api-key unless named. */
export function ragKeyForm(s: Settings): RAGKeyForm {
  const k = s.rag?.apiKey;
  const ref = k?.state === 'secret' ? `\${secret:${k.name}}` : k?.state === 'env' ? `\${${k.name}}` : '';
  return { mode: 'keep', ref, name: k?.state === 'secret' && k.name ? k.name : 'rag-api-key', value: '' };
}

/**
 * ragKeyInput is POST /api/settings/rag/apikey's body, or null when the form leaves the key as it
 * is. A pasted key is checked here only for being there: the hub checks the rest.
 */
export function ragKeyInput(f: RAGKeyForm): { value: SettingsRAGAPIKeyInput | null } | { error: FieldError } {
  switch (f.mode) {
    case 'keep':
      return { value: null };
    case 'remove':
      return { value: { action: 'remove' } };
    case 'reference':
      return { value: { action: 'reference', ref: f.ref.trim() } };
    case 'store':
      if (!f.value.trim()) return { error: { field: RAG_KEY_FIELD, text: 'rag.api_key: paste the key to store in the keyring' } };
      return { value: { action: 'store', name: f.name.trim(), value: f.value } };
  }
}

/** How the file holds the RAG key, for people: never the key. */
export function ragKeyText(s: Settings): string {
  const k = s.rag?.apiKey;
  switch (k?.state) {
    case 'secret':
      return `the keyring secret ${k.name} (\${secret:${k.name}})`;
    case 'env':
      return `the environment variable ${k.name} (\${${k.name}})`;
    case 'literal':
      return 'a key written in the file (not shown); store it in the keyring instead';
  }
  return 'none';
}
