#!/usr/bin/env node
// An upstream MCP server built with the TypeScript SDK v2 (@modelcontextprotocol/server 2.x,
// the 2026-07-28 line), for the hub's era-bridge tests (mcp/bridge_v2_node_test.go). It serves
// its tools from one factory, as the SDK intends, either
//   - over Streamable HTTP with createMcpHandler: 2026-07-28 stateless (per-request `_meta`
//     envelope, no session) and, for claim-less requests, the SDK's stateless 2025 fallback; or
//   - over stdio with serveStdio (`--stdio`): the opening exchange picks the era.
// Its tools ask the way a 2026-era server does, by returning input_required results
// (inputRequired.elicit / createMessage / listRoots) and reading the retried request's
// inputResponses; the SDK's legacy shim turns those into real server→client requests on a
// 2025-era connection.
//
// Usage: node upstream-v2.mjs [--stdio]
// Env: PORT (HTTP; 0 or unset: a free port), MARK_DIR (required: where it records each call as a
// JSON line in calls.jsonl, and writes cancelled-<tag> when a slow call is cancelled).
// Prints `listening on http://127.0.0.1:PORT/mcp` on stdout once it serves HTTP.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { McpServer, createMcpHandler, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const markDir = process.env.MARK_DIR;
if (!markDir || !fs.statSync(markDir, { throwIfNoEntry: false })?.isDirectory()) {
  console.error('upstream-v2.mjs: MARK_DIR must name an existing directory');
  process.exit(2);
}
const stdio = process.argv.includes('--stdio');

// record appends what a call saw: the tool, the era of the instance serving it, and the
// protocol version the request claimed in its envelope (2026-07-28) or none (2025 era).
function record(tool, era, ctx, extra = {}) {
  const protocol = ctx.mcpReq.envelope?.['io.modelcontextprotocol/protocolVersion'] ?? '';
  fs.appendFileSync(path.join(markDir, 'calls.jsonl'), JSON.stringify({ tool, era, protocol, ...extra }) + '\n');
}

const text = (t) => ({ content: [{ type: 'text', text: t }] });

// added: whether `add-tool` ran; from then on every instance also offers `added`. announce
// tells clients the tool list changed: on HTTP through the handler's subscriptions/listen bus,
// over stdio through the connection's own instance.
let added = false;
let announce = () => {};
const answerSchema = z.object({ answer: z.string() });

function factory({ era }) {
  const server = new McpServer({ name: 'ts-v2-upstream', version: '2.4.0' }, { capabilities: { tools: { listChanged: true } } });
  const addTool = () => server.registerTool('added', { description: 'Added by add-tool.', inputSchema: z.object({}) }, async (_args, ctx) => {
    record('added', era, ctx);
    return text('added');
  });
  if (added) addTool();

  // add-tool: a new tool appears, and the server says so (tools/list_changed).
  server.registerTool('add-tool', { description: 'Adds the tool `added`.', inputSchema: z.object({}) }, async (_args, ctx) => {
    record('add-tool', era, ctx);
    if (!added) {
      added = true;
      addTool();
      if (stdio) server.sendToolListChanged();
      else announce();
    }
    return text('added a tool');
  });

  server.registerTool('echo', { description: 'Echoes its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text: t }, ctx) => {
    record('echo', era, ctx);
    return text(`echo: ${t}`);
  });

  // ask: a form elicitation through input_required; the retry carries the user's answer.
  server.registerTool('ask', { description: 'Asks the user a question.', inputSchema: z.object({ question: z.string() }) }, async ({ question }, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'question');
    record('ask', era, ctx, { round: r.kind === 'missing' ? 1 : 2 });
    if (r.kind === 'elicit') return text(`answered: ${[r.action, r.content?.answer].filter(Boolean).join(' ')}`);
    return inputRequired({ inputRequests: { question: inputRequired.elicit({ message: question, requestedSchema: answerSchema }) } });
  });

  // sample: a sampling request through input_required.
  server.registerTool('sample', { description: 'Asks the client\'s model.', inputSchema: z.object({ prompt: z.string() }) }, async ({ prompt }, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'sample');
    record('sample', era, ctx, { round: r.kind === 'missing' ? 1 : 2 });
    if (r.kind === 'sampling') {
      const c = r.result.content;
      return text(`sampled: ${Array.isArray(c) ? c.map((b) => b.text).join('') : c.text}`);
    }
    return inputRequired({
      inputRequests: { sample: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 }) },
    });
  });

  // roots: a roots listing through input_required.
  server.registerTool('roots', { description: 'Lists the client\'s roots.', inputSchema: z.object({}) }, async (_args, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'roots');
    record('roots', era, ctx);
    if (r.kind === 'roots') return text(`roots: ${r.roots.map((x) => x.uri).join(' ')}`);
    return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
  });

  // slow: progress every 50 ms until ms have passed; a cancelled call (the request's abort
  // signal) writes cancelled-<tag> so the test can see the cancellation arrived.
  server.registerTool('slow', { description: 'Works for ms milliseconds, reporting progress.', inputSchema: z.object({ ms: z.number().int(), tag: z.string().optional() }) },
    async ({ ms, tag }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      record('slow', era, ctx, { tag, progressToken: token ?? null });
      if (tag) fs.writeFileSync(path.join(markDir, `started-${tag}`), '');
      const signal = ctx.mcpReq.signal;
      const end = Date.now() + ms;
      for (let i = 1; Date.now() < end; i++) {
        const aborted = await new Promise((resolve) => {
          const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(false); }, Math.min(50, Math.max(1, end - Date.now())));
          const onAbort = () => { clearTimeout(timer); resolve(true); };
          if (signal.aborted) onAbort(); else signal.addEventListener('abort', onAbort, { once: true });
        });
        if (aborted) {
          fs.writeFileSync(path.join(markDir, `cancelled-${tag ?? 'untagged'}`), String(signal.reason ?? 'aborted'));
          throw new Error('cancelled');
        }
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, message: 'working' } }).catch(() => {});
        }
      }
      return text(`slept ${ms}`);
    });
  return server;
}

if (stdio) {
  serveStdio(factory, { onerror: (err) => console.error(`upstream-v2 stdio: ${err?.message ?? err}`) });
} else {
  const handler = createMcpHandler(factory, { onerror: (err) => console.error(`upstream-v2 http: ${err?.message ?? err}`) });
  announce = () => handler.notify.toolsChanged();
  // A plain node:http front for the web-standard handler (what @modelcontextprotocol/node's
  // toNodeHandler does): the request's AbortSignal fires when the client goes away, which is
  // how a stateless handler learns of a cancelled call.
  const srv = http.createServer(async (req, res) => {
    const abort = new AbortController();
    res.on('close', () => { if (!res.writableFinished) abort.abort(new Error('client disconnected')); });
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body, signal: abort.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        for await (const chunk of response.body) {
          if (abort.signal.aborted) break;
          res.write(chunk);
        }
      }
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err?.message ?? err));
    }
  });
  srv.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${srv.address().port}/mcp`);
  });
  const stop = () => { handler.close().finally(() => srv.close(() => process.exit(0))); setTimeout(() => process.exit(0), 2000).unref(); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
