// Knowledge: an agent ingests the workspace's docs with rag_ingest over the hub's Unix socket;
// the page shows the running ingest's progress live (hub channel `rag`), then the collection with
// its chunk count, backend and embedder, and the query box answers with ranked results.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';

const dash = useDashboard('knowledge');

describe('knowledge', () => {
  it('shows an ingest live, the collection, and ranked query results', async () => {
    const page = dash.page;
    const docs = path.join(dash.server.workspace, 'kb');
    mkdirSync(path.join(docs, 'notes'), { recursive: true });
    writeFileSync(
      path.join(docs, 'guide.md'),
      '# Guide\n\nIntro.\n\n## Configuration\n\nThe socket path is set with the unix.path key.\n\n## Tokens\n\nThe bearer token comes from SWITCHBOARD_TOKEN.\n',
    );
    // enough files that the ingest runs for a while and reports progress
    for (let i = 0; i < 1500; i++) {
      writeFileSync(path.join(docs, 'notes', `n${i}.md`), `# Note ${i}\n\n${`filler words about topic ${i}\n\n`.repeat(30)}`);
    }
    await dash.open('knowledge');
    await dash.see(tid('knowledge'));
    await expect.poll(() => dash.text(tid('rag-backend'))).toContain('embedded store · offline embedder');

    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-rag', version: '1.0.0' });
    try {
      const ingest = client.callTool('rag_ingest', { path: 'kb', collection: 'e2e-kb' });
      await dash.see(tid('rag-ingest', { collection: 'e2e-kb' }), 60_000);
      const res = (await ingest).structuredContent as { success: boolean; chunks: number };
      expect(res.success).toBe(true);
      await dash.gone(tid('rag-ingest', { collection: 'e2e-kb' }), 60_000);
      await dash.see(tid('rag-collection', { name: 'e2e-kb' }));
      await expect.poll(() => dash.text(`${tid('rag-collection', { name: 'e2e-kb' })} ${tid('rag-collection-count')}`)).toBe(String(res.chunks));
      expect(await dash.text(tid('rag-ingest-done', { collection: 'e2e-kb' }))).toContain('1501 files');
    } finally {
      await client.close();
    }

    await page.locator(tid('rag-query-collection')).selectOption('e2e-kb');
    await page.locator(tid('rag-query-input')).fill('where does the bearer token come from?');
    await page.locator(tid('rag-query-submit')).click();
    await dash.see(tid('rag-result'));
    const first = page.locator(tid('rag-result')).first();
    expect(await first.getAttribute('data-source')).toBe('kb/guide.md');
    expect(await first.locator(tid('rag-result-section')).textContent()).toBe('§ Guide > Tokens');
    expect(Number(await first.locator(tid('rag-result-score')).textContent())).toBeGreaterThan(0);

    // a blank question cannot be sent
    await page.locator(tid('rag-query-input')).fill('   ');
    expect(await page.locator(tid('rag-query-submit')).isDisabled()).toBe(true);
  });
});
