// Code: an agent's code_diagnostics over the hub's Unix socket starts gopls on a Go module in the
// workspace; the Code view shows the server running (state, memory) from the `code` hub channel;
// a file_edit that introduces a type error lists it in the tool's result, and the view shows the
// diagnostic live on that file; a project_run's failures are listed under the runs. With
// UPDATE_SCREENSHOTS set, the view's screenshot goes to docs/code-view.png.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { artifactsDir, repoDir } from './settings';
import { McpClient } from './mcp-client';

const dash = useDashboard('code');

describe('code', () => {
  it('shows the language server an agent started and the diagnostic its edit introduced', async () => {
    const page = dash.page;
    const mod = path.join(dash.server.workspace, 'gocode');
    mkdirSync(path.join(mod, 'calc'), { recursive: true });
    writeFileSync(path.join(mod, 'go.mod'), 'module example.com/e2ecode\n\ngo 1.22\n');
    writeFileSync(path.join(mod, 'calc', 'calc.go'), 'package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n');
    writeFileSync(
      path.join(mod, 'main.go'),
      'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/e2ecode/calc"\n)\n\nfunc main() { fmt.Println(calc.Add(1, 2)) }\n',
    );
    await dash.open('code');
    await dash.see(tid('code'));

    const client = await McpClient.connect({ path: dash.server.socket }, { name: 'e2e-code', version: '1.0.0' });
    try {
      const first = (await client.callTool('code_diagnostics', { path: 'gocode/calc/calc.go' })).structuredContent as {
        diagnostics: unknown[];
      };
      expect(first.diagnostics).toEqual([]);
      const row = tid('code-server', { language: 'go' });
      await dash.see(row, 30_000);
      await expect.poll(() => page.locator(row).first().getAttribute('data-state'), { timeout: 30_000 }).toMatch(/ready|busy/);
      await page.locator(row).first().click();
      await dash.see(tid('code-detail-state'));
      await dash.see(tid('code-no-diagnostics'));

      const edit = (
        await client.callTool('file_edit', {
          path: 'gocode/calc/calc.go',
          old_string: 'return a + b',
          new_string: 'var s string = a + b\n\treturn len(s)',
        })
      ).structuredContent as { success: boolean; diagnostics?: { path: string; line: number; severity: string; message: string }[] };
      expect(edit.success).toBe(true);
      expect(edit.diagnostics?.length, JSON.stringify(edit)).toBeGreaterThan(0);
      expect(edit.diagnostics![0]).toMatchObject({ path: 'gocode/calc/calc.go', line: 4, severity: 'error' });

      // Live, without a reload: the file and its error appear under the server.
      await dash.see(tid('code-file', { path: 'gocode/calc/calc.go' }), 20_000);
      await dash.see(tid('code-diagnostic', { severity: 'error', line: '4' }));
      expect(await dash.text(tid('code-diagnostic', { severity: 'error' }))).toContain('cannot use');
      expect(await dash.text(tid('code-diagnostic-counts'))).toContain('1 error');
      expect(await dash.text(tid('code-server-memory'))).toMatch(/MiB|KiB/);

      // A project_run's result is listed with its failures.
      const run = (await client.callTool('project_run', { action: 'lint', command: 'cd gocode && go vet ./...' })).structuredContent as {
        success: boolean;
        failures: { path: string; line: number }[];
      };
      expect(run.success).toBe(false);
      await dash.see(tid('code-run', { action: 'lint', success: 'false' }));
      await page.locator(tid('code-run', { action: 'lint' })).first().locator('summary').click();
      await dash.see(tid('code-run-failure'));

      const shot = process.env.UPDATE_SCREENSHOTS ? path.join(repoDir, 'docs', 'code-view.png') : path.join(artifactsDir, 'code-view.png');
      mkdirSync(path.dirname(shot), { recursive: true });
      await page.screenshot({ path: shot, fullPage: true });
    } finally {
      await client.close();
    }
  });
});
