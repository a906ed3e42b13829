// Sessions view: MCP client sessions come and go live; each shows its workspace and roots, and a
// root that needs consent is granted and revoked from the page; IDE agent sessions created
// through the API appear; a chat message shows at once and the simulator's reply streams in word
// by word.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, recording, startRecording, tid, useDashboard } from './fixtures';
import { McpClient } from './mcp-client';

const dash = useDashboard('sessions');

describe('sessions', () => {
  it('shows an MCP client session live: connect, calls, disconnect', async () => {
    await dash.open('sessions');
    const clientName = `e2e-client-${Date.now()}`;
    const client = await McpClient.connect({ path: dash.server.socket }, { name: clientName, version: '9.8.7' });
    try {
      const row = dash.page.locator(tid('session-row', { transport: 'unix' }), { hasText: clientName });
      await row.waitFor();
      expect(await row.textContent()).toContain('9.8.7');
      // The revision the client asked for in its initialize, shown beside the transport.
      expect(await row.locator(tid('session-protocol')).textContent()).toBe('MCP 2025-06-18');
      const calls = row.locator(tid('session-calls'));
      const before = Number(await calls.textContent());

      await client.callTool('process_list', {});
      await expect.poll(async () => Number(await calls.textContent())).toBe(before + 1);
      await expect.poll(async () => row.textContent()).toContain('process_list'); // last tool
    } finally {
      await client.close();
    }
    await dash.page.locator(tid('session-row'), { hasText: clientName }).waitFor({ state: 'detached' });
  });

  it("shows each client's todo list live: written, updated, gone on disconnect", async () => {
    await dash.open('sessions');
    const clientName = `e2e-todo-${Date.now()}`;
    const client = await McpClient.connect({ path: dash.server.socket }, { name: clientName, version: '1.0.0' });
    try {
      const row = dash.page.locator(tid('session-row', { transport: 'unix' }), { hasText: clientName });
      await row.waitFor();
      const id = await row.getAttribute('data-session-id');
      await client.callTool('todo_write', {
        items: [
          { content: 'read the failing test', status: 'completed' },
          { content: 'fix the parser', status: 'in_progress' },
          { content: 'run the suite', status: 'pending' },
        ],
      });
      const todos = dash.page.locator(tid('session-todos', { 'session-id': id! }));
      await todos.waitFor();
      await expect.poll(async () => todos.locator(tid('todo-item')).count()).toBe(3);
      expect(await todos.locator(tid('todo-item', { status: 'in_progress' })).textContent()).toContain('fix the parser');
      expect(await todos.textContent()).toContain('todo 1/3');

      await client.callTool('todo_write', {
        items: [
          { content: 'read the failing test', status: 'completed' },
          { content: 'fix the parser', status: 'completed' },
          { content: 'run the suite', status: 'in_progress' },
        ],
      });
      await expect.poll(async () => todos.textContent()).toContain('todo 2/3');
      expect(await todos.locator(tid('todo-item', { status: 'in_progress' })).textContent()).toContain('run the suite');
    } finally {
      await client.close();
    }
    await dash.page.locator(tid('session-row'), { hasText: clientName }).waitFor({ state: 'detached' });
    expect(await dash.page.locator(tid('session-todos')).count()).toBe(0);
  });

  it("shows a client's workspace and a root that needs consent; Grant and Revoke change it live", async () => {
    await dash.open('sessions');
    // Outside the hub's (temporary) home directory: a root there needs the user's consent.
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-root-')));
    const clientName = `e2e-roots-${Date.now()}`;
    const client = await McpClient.connect({ path: dash.server.socket }, { name: clientName, version: '1.0.0' }, {
      roots: [{ uri: `file://${root}`, name: 'e2e project' }],
    });
    try {
      const row = dash.page.locator(tid('session-row', { transport: 'unix' }), { hasText: clientName });
      await row.waitFor();
      const id = (await row.getAttribute('data-session-id'))!;

      // Its workspace is its first root, labelled as coming from there; the root waits for consent
      // and says why.
      const ws = dash.page.locator(tid('session-workspace', { 'session-id': id, from: 'root' }));
      await ws.waitFor();
      expect(await ws.locator(tid('session-workspace-dir')).textContent()).toBe(root);
      expect(await ws.locator(tid('session-workspace-from')).textContent()).toBe('MCP root');
      const entry = ws.locator(tid('session-root', { dir: root }));
      await ws.locator(tid('session-root', { dir: root, status: 'pending' })).waitFor();
      expect(await entry.locator(tid('workspace-detail')).textContent()).toContain('outside your home directory');
      expect(await entry.locator(tid('workspace-revoke')).count()).toBe(0);

      // Grant: the hub's sessions channel brings the new status; the client may now work there.
      await entry.locator(tid('workspace-grant')).click();
      await ws.locator(tid('session-root', { dir: root, status: 'approved' })).waitFor();
      expect(await entry.locator(tid('workspace-detail')).textContent()).toBe('granted on the dashboard');
      await client.callTool('file_write', { path: 'granted.txt', content: 'written in the root' });
      expect(readFileSync(path.join(root, 'granted.txt'), 'utf8')).toBe('written in the root');

      // Revoke: declined for this session, offered again as Grant; the next call is refused.
      await entry.locator(tid('workspace-revoke')).click();
      await ws.locator(tid('session-root', { dir: root, status: 'declined' })).waitFor();
      await entry.locator(tid('workspace-grant')).waitFor();
      await expect(client.callTool('file_read', { path: 'granted.txt' })).rejects.toThrow(/declined/);
      expect(await dash.page.locator(tid('control-error')).count()).toBe(0);
    } finally {
      await client.close();
      rmSync(root, { recursive: true, force: true });
    }
    await dash.page.locator(tid('session-row'), { hasText: clientName }).waitFor({ state: 'detached' });
  });

  it('shows an IDE session created through the API, and streams the agent reply to a chat message', async () => {
    await dash.open('sessions');
    // The demo simulator's own session arrives with the bridge's sync on connect: the bridge is up.
    await dash.page.locator(tid('ide-session-row'), { hasText: 'demo session' }).waitFor();
    const name = `e2e session ${Date.now()}`;
    const created = await api<{ id?: string; session?: { id: string } }>(dash.server, 'POST', '/api/ide/sessions', { name });
    const id = created.id || created.session?.id;
    expect(id, `POST /api/ide/sessions returned no id: ${JSON.stringify(created)}`).toBeTruthy();

    const row = dash.page.locator(tid('ide-session-row', { 'session-id': id! }));
    await row.waitFor();
    expect(await row.textContent()).toContain(name);
    await row.click();
    await dash.see(tid('chat-panel', { 'session-id': id! }));
    await dash.see(tid('chat-empty'));

    await startRecording(dash.page, 'chat', tid('chat-message'));
    const message = `please check the flaky test ${Date.now()}`;
    await dash.page.locator(tid('chat-input')).fill(message);
    await dash.page.locator(tid('chat-send')).click();

    // The simulator's canned reply (agenticsim.Options.Reply default), complete and no longer streaming.
    const reply = `Simulated agent here. I read "${message}" and have planned the next steps; nothing was changed.`;
    const assistant = dash.page.locator(tid('chat-message', { role: 'assistant', streaming: 'false' }), { hasText: reply });
    await assistant.waitFor();
    const user = dash.page.locator(tid('chat-message', { role: 'user' }));
    expect(await user.count()).toBe(1);
    expect(await user.textContent()).toContain(message);
    expect(await assistant.count()).toBe(1);

    // While the reply streamed, the page showed it growing: the user's message first, then a
    // partial assistant message marked as streaming, then the complete one.
    const frames = await recording(dash.page, 'chat');
    const firstUser = frames.findIndex((f) => f.some((m) => m.role === 'user' && m.text?.includes(message)));
    const partial = frames.findIndex(
      (f) => f.some((m) => m.role === 'assistant' && m.streaming === 'true' && !m.text?.includes(reply)),
    );
    expect(firstUser, 'the user message was never shown').toBeGreaterThanOrEqual(0);
    // The first delta can arrive in the same recorded frame as the user's message; the order is
    // then the order on the page (user message above the streaming reply).
    expect(partial, `no partial streaming reply was shown; states: ${JSON.stringify(frames)}`).toBeGreaterThanOrEqual(firstUser);
    const shown = frames[partial];
    expect(
      shown.findIndex((m) => m.role === 'user' && m.text?.includes(message)),
      `the streaming reply was shown before the user's message: ${JSON.stringify(shown)}`,
    ).toBeLessThan(shown.findIndex((m) => m.role === 'assistant' && m.streaming === 'true'));
    const partialText = frames[partial].find((m) => m.role === 'assistant')!.text!;
    expect(partialText.length).toBeGreaterThan(0);

    // The plan the simulator runs alongside the reply ends completed.
    await dash.see(tid('plan-status', { status: 'completed' }));
    expect(await dash.page.locator(tid('plan-step', { status: 'done' })).count()).toBe(3);
  });
});
