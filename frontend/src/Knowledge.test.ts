// @vitest-environment jsdom
// The Knowledge view: collections from the control API, live ingest progress from the `rag` hub
// channel (subscribed only while the view is open), and the query box showing ranked results.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';
import type { Control } from './lib/control';
import { reduceRAG, initialRAG } from './lib/reducers';
import { SocketRecorder, hubMsg } from './test/fakeSocket';

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  window.location.hash = '';
});

const $ = (id: string) => document.querySelector(`[data-testid="${id}"]`) as HTMLElement | null;
const $$ = (id: string) => [...document.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

describe('reduceRAG', () => {
  it('takes the snapshot and upserts ingests by collection', () => {
    let s = reduceRAG(initialRAG, { type: 'snapshot', channel: 'rag', timestamp: '', data: { backend: 'embedded', embedder: 'offline', model: 'hash-v1', ingests: [] } });
    expect(s.backend).toBe('embedded');
    expect(s.location).toBe('');
    const ing = { collection: 'docs', path: 'docs', files: 1, total: 4, changed: 1, chunks: 3, running: true, updated: '2026-01-01T00:00:00Z' };
    s = reduceRAG(s, { type: 'event', channel: 'rag', timestamp: '', data: ing });
    s = reduceRAG(s, { type: 'event', channel: 'rag', timestamp: '', data: { ...ing, files: 4, running: false } });
    expect(s.ingests).toHaveLength(1);
    expect(s.ingests[0].files).toBe(4);
    expect(reduceRAG(s, { type: 'event', channel: 'rag', timestamp: '', data: { bogus: 1 } })).toBe(s);
  });
});

describe('Knowledge view', () => {
  it('lists collections, shows ingest progress and ranked query results', async () => {
    const rec = new SocketRecorder();
    const calls: unknown[][] = [];
    let collections = [{ name: 'hostuk-docs', points_count: 42, status: 'green', backend: 'embedded', embedder: 'offline', model: 'hash-v1', dimension: 256 }];
    const control = {
      kind: 'http',
      bootstrap: async () => ({ hubUrl: 'ws://127.0.0.1:7001/ws', hubToken: 't', version: 'v', workspace: '/w' }),
      transports: async () => ({ transports: [] }),
      toolsets: async () => ({ toolsets: [] }),
      approvals: async () => ({ approvals: [], policy: null }),
      ragCollections: async () => {
        calls.push(['ragCollections']);
        return { collections };
      },
      ragQuery: async (...args: unknown[]) => {
        calls.push(['ragQuery', ...args]);
        return {
          query: 'socket path', collection: 'hostuk-docs', context: '',
          results: [
            { content: 'The socket path is set with unix.path.', source: 'docs/config.md', section: 'Configuration', chunkIndex: 0, score: 0.98 },
            { content: 'ListenUnix opens it.', source: 'mcp/transport.go', section: 'func ListenUnix', chunkIndex: 3, score: 0.5 },
          ],
        };
      },
    } as unknown as Control;
    window.location.hash = '#knowledge';
    app = mount(App, { target: document.body, props: { control, dashboardOptions: { createSocket: rec.create, tickMs: 0, frame: (fn: () => void) => fn() } } });
    await vi.waitFor(() => expect(rec.sockets).toHaveLength(1));
    const sock = rec.last;
    sock.serverOpen();
    await vi.waitFor(() => expect(sock.frames().map((f) => f.channel)).toContain('rag'));
    await vi.waitFor(() => expect($$('rag-collection')).toHaveLength(1));
    expect($('rag-collection-count')?.textContent).toBe('42');

    sock.serverSend(hubMsg('snapshot', 'rag', { backend: 'embedded', embedder: 'offline', model: 'hash-v1', ingests: [] }));
    sock.serverSend(hubMsg('event', 'rag', { collection: 'hostuk-docs', path: 'docs', files: 2, total: 8, changed: 2, chunks: 11, running: true, updated: '2026-01-01T00:00:01Z' }));
    flushSync();
    await vi.waitFor(() => expect($('rag-ingest-count')?.textContent).toBe('2 / 8 files · 11 chunks'));
    expect($('rag-backend')?.textContent).toContain('embedded store · offline embedder (hash-v1)');

    // finishing the ingest reloads the counts
    collections = [{ ...collections[0], points_count: 50 }];
    sock.serverSend(hubMsg('event', 'rag', { collection: 'hostuk-docs', path: 'docs', files: 8, total: 8, changed: 8, chunks: 50, running: false, message: 'Ingested docs: 8 files, 50 chunks.', updated: '2026-01-01T00:00:02Z' }));
    await vi.waitFor(() => expect($('rag-collection-count')?.textContent).toBe('50'));
    expect($('rag-ingest')).toBeNull();
    expect($('rag-ingest-done')?.textContent).toContain('8 files, 50 chunks');

    const input = $('rag-query-input') as HTMLInputElement;
    input.value = 'socket path';
    input.dispatchEvent(new Event('input'));
    flushSync();
    ($('rag-query-submit') as HTMLButtonElement).click();
    await vi.waitFor(() => expect($$('rag-result')).toHaveLength(2));
    expect(calls).toContainEqual(['ragQuery', 'hostuk-docs', 'socket path', 5]);
    expect($$('rag-result').map((r) => r.dataset.source)).toEqual(['docs/config.md', 'mcp/transport.go']);
    expect($('rag-result-section')?.textContent).toBe('§ Configuration');
    expect($('rag-result-score')?.textContent).toBe('0.980');

    // The hub switches [rag] to Qdrant (a Settings save or a hand edit): a new snapshot comes,
    // the header names the new store and the list is read again from it.
    collections = [];
    const before = calls.filter((c) => c[0] === 'ragCollections').length;
    sock.serverSend(hubMsg('snapshot', 'rag', { backend: 'qdrant', location: 'qdrant.lan:6334', embedder: 'offline', model: 'hash-v1', ingests: [] }));
    await vi.waitFor(() => expect($('rag-backend')?.textContent).toContain('qdrant store · offline embedder'));
    expect($('rag-backend')?.title).toBe('qdrant.lan:6334');
    await vi.waitFor(() => expect($('rag-empty')).not.toBeNull());
    expect(calls.filter((c) => c[0] === 'ragCollections').length).toBe(before + 1);
  });
});
