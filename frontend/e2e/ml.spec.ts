// Overview → Inference backends: the page lists every backend with whether it answers. The spec
// runs its own switchboard with OLLAMA_HOST pointing at a small Ollama stand-in served here (the
// two endpoints the live check and model lookup use: GET /api/version, GET /api/tags, as in
// Ollama's API docs) and OPENAI_BASE_URL at a port nobody listens on; then it stops the stand-in
// and the page turns the backend unreachable.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { tid, useDashboard } from './fixtures';
import { freePort, Switchboard } from './stack';

let sb: Switchboard;
let ollama: http.Server;
let ollamaUrl = '';
let deadUrl = '';
const dash = useDashboard('ml', () => sb.info!);

beforeAll(async () => {
  ollama = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.method === 'GET' && req.url === '/api/version') return res.end(JSON.stringify({ version: '0.5.7' }));
    if (req.method === 'GET' && req.url === '/api/tags') return res.end(JSON.stringify({ models: [{ name: 'llama3.2:latest', model: 'llama3.2:latest' }] }));
    res.statusCode = 404;
    res.end(JSON.stringify({ error: 'not found' }));
  });
  await new Promise<void>((resolve) => ollama.listen(0, '127.0.0.1', resolve));
  ollamaUrl = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`;
  deadUrl = `http://127.0.0.1:${await freePort()}/v1`;
  sb = new Switchboard(inject('bin'), 'ml-switchboard');
  // No IDE backend for this spec: the bridge just stays disconnected.
  await sb.start('ws://127.0.0.1:1/ws', { OLLAMA_HOST: ollamaUrl, OPENAI_BASE_URL: deadUrl, OPENAI_API_KEY: '' });
});

afterAll(async () => {
  await sb?.stop();
  ollama?.closeAllConnections();
  await new Promise((resolve) => ollama?.close(resolve));
});

describe('inference backends', () => {
  it('shows each backend and whether it is reachable', async () => {
    const page = dash.page;
    await dash.open('overview');
    await dash.see(tid('ml-backend-row', { name: 'ollama', available: 'true' }));
    await dash.see(tid('ml-backend-row', { name: 'openai', available: 'false' }));
    expect(await dash.text(tid('ml-backend-ollama-url'))).toBe(ollamaUrl);
    expect(await dash.text(tid('ml-backend-openai-url'))).toBe(deadUrl);
    await dash.see(tid('ml-backend-ollama-status', { status: 'reachable' }));
    await dash.see(tid('ml-backend-openai-status', { status: 'unreachable' }));
    // the first available backend is the default
    expect(await page.locator(`${tid('ml-backend-row', { name: 'ollama' })} ${tid('ml-backend-default')}`).count()).toBe(1);
    expect(await page.locator(tid('ml-backends-help')).count()).toBe(0);

    // The stand-in stops: the next re-check (every 10 s, answers cached 5 s) shows it unreachable.
    ollama.closeAllConnections();
    await new Promise((resolve) => ollama.close(resolve));
    await dash.see(tid('ml-backend-row', { name: 'ollama', available: 'false' }), 30_000);
    await dash.see(tid('ml-backends-help'));
  });
});
