// Knowledge: an agent ingests the workspace's docs with rag_ingest over the hub's Unix socket;
// the page shows the running ingest's progress live (hub channel `rag`), then the collection with
// its chunk count, backend and embedder, and the query box answers with ranked results.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { recording, startRecording, tid, useDashboard } from './fixtures';
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
    // enough to keep the ingest running for many frames (12k chunks, ~0.35 s on the CI machine)
    for (let i = 0; i < 1500; i++) {
      writeFileSync(path.join(docs, 'notes', `n${i}.md`), `# Note ${i}\n\n${`filler words about topic ${i}\n\n`.repeat(300)}`);
    }
    await dash.open('knowledge');
    await dash.see(tid('knowledge'));
    await expect.poll(() => dash.text(tid('rag-backend'))).toContain('embedded store · offline embedder');

    // The ingest runs at tens of thousands of chunks per second and the page renders at most once
    // a frame, so its running card may show for a few frames only: too briefly for polling from
    // here to be sure of seeing it, so the page records every state of its ingest card itself.
    await startRecording(page, 'ingest', `${tid('rag-ingest', { collection: 'e2e-kb' })}, ${tid('rag-ingest-done', { collection: 'e2e-kb' })}`);
    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-rag', version: '1.0.0' });
    try {
      const res = (await client.callTool('rag_ingest', { path: 'kb', collection: 'e2e-kb' })).structuredContent as {
        success: boolean;
        chunks: number;
      };
      expect(res.success).toBe(true);
      await dash.gone(tid('rag-ingest', { collection: 'e2e-kb' }), 60_000);
      await dash.see(tid('rag-ingest-done', { collection: 'e2e-kb' }));
      // Live: the page showed the ingest running (its progress card, from the hub's rag channel)
      // before it showed it done.
      const frames = await recording(page, 'ingest');
      const shown = frames.map((f) => f.map((el) => `${el.testid}: ${el.text?.trim()}`).join(' | '));
      const running = frames.findIndex((f) => f.some((el) => el.testid === 'rag-ingest' && /\d+ \/ 1501 files · \d+ chunks/.test(el.text ?? '')));
      const done = frames.findIndex((f) => f.some((el) => el.testid === 'rag-ingest-done') && !f.some((el) => el.testid === 'rag-ingest'));
      expect(running, `states shown: ${shown.join(' ⏵ ')}`).toBeGreaterThanOrEqual(0);
      expect(done, `states shown: ${shown.join(' ⏵ ')}`).toBeGreaterThan(running);
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
