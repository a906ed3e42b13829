#!/usr/bin/env node
// A small MCP server (official TypeScript SDK, stdio) for the upstream-server tests: it behaves
// badly on purpose, as the environment asks.
//
//   FIXTURE_DESC_FILE  the "greet" tool's description is read from this file at start, so a test
//                      can change a tool's definition between two starts (tool poisoning).
//   FIXTURE_MODE       "crash-at-start": exit 3 before answering initialize;
//                      "hang": answer initialize, then never answer a tools/call;
//                      "grandchild": start a child that ignores SIGTERM and keeps stdout open
//                      (an orphan unless the hub ends the whole process group);
//                      "daemon": the same, but the child leaves the process group (setsid), as
//                      daemons do (the hub, a child subreaper, must still end it);
//                      "ignore-stdin-eof": keep running after stdin closes (the hub must signal);
//                      "noisy-stdout": print a log line to stdout before speaking MCP there;
//                      "ask": also offer the tool ask, which asks its client (elicitation).
//   FIXTURE_PID_FILE   the fixture (and its grandchild) append their pids here.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const mode = process.env.FIXTURE_MODE || '';
const pidFile = process.env.FIXTURE_PID_FILE;
if (pidFile) fs.appendFileSync(pidFile, `${process.pid}\n`);
process.stderr.write(`fixture starting (mode=${mode || 'normal'}, pid ${process.pid})\n`);

if (mode === 'noisy-stdout') {
  process.stdout.write('fixture says hello on stdout\n');
}
if (mode === 'crash-at-start') {
  process.stderr.write('fixture: crashing on purpose\n');
  process.exit(3);
}
if (mode === 'grandchild' || mode === 'daemon') {
  const child = spawn(process.execPath, ['-e', `
    process.on('SIGTERM', () => {});
    ${pidFile ? `require('fs').appendFileSync(${JSON.stringify(pidFile)}, process.pid + '\\n');` : ''}
    setInterval(() => {}, 1000);
  `], { stdio: ['ignore', 'inherit', 'inherit'], detached: mode === 'daemon' });
  child.unref();
}
if (mode === 'ignore-stdin-eof') {
  // Outlives everything short of SIGKILL: the end of its input, SIGTERM, SIGHUP, and a parent
  // whose pipes are gone (EPIPE on a write would otherwise end node).
  process.on('SIGTERM', () => process.stderr.write('fixture: ignoring SIGTERM\n'));
  process.on('SIGHUP', () => {});
  process.on('uncaughtException', () => {});
  for (const s of [process.stdin, process.stdout, process.stderr]) s.on('error', () => {});
  setInterval(() => {}, 1000);
}

let description = 'Greets someone by name.';
if (process.env.FIXTURE_DESC_FILE) {
  description = fs.readFileSync(process.env.FIXTURE_DESC_FILE, 'utf8').trim();
}

const server = new McpServer({ name: 'upstream-fixture', version: '1.0.0' }, { instructions: 'Fixture server for Switchboard tests.' });
server.registerTool('greet', {
  description,
  inputSchema: { name: z.string().describe('Who to greet') },
  annotations: { readOnlyHint: true },
}, async ({ name }) => {
  if (mode === 'hang') await new Promise(() => {});
  return { content: [{ type: 'text', text: `Hello, ${name}!` }] };
});
server.registerTool('sleep', {
  description: 'Sleeps for ms milliseconds.',
  inputSchema: { ms: z.number().describe('How long') },
  annotations: { readOnlyHint: true },
}, async ({ ms }, extra) => {
  // Says on stderr when its client cancels it (notifications/cancelled), for the hub's tests.
  extra.signal.addEventListener('abort', () => process.stderr.write(`fixture: sleep ${ms} cancelled\n`));
  process.stderr.write(`fixture: sleep ${ms} started\n`);
  await new Promise((r) => setTimeout(r, ms));
  return { content: [{ type: 'text', text: `slept ${ms}` }] };
});
server.registerTool('write-note', {
  description: 'Pretends to write a note (not read-only).',
  inputSchema: { text: z.string().describe('The note') },
  annotations: { readOnlyHint: false, destructiveHint: true },
}, async ({ text }) => ({ content: [{ type: 'text', text: `noted: ${text}` }] }));

if (mode === 'ask') {
  server.registerTool('ask', {
    description: 'Waits delay_ms, then asks the client a question (elicitation) and returns the answer.',
    inputSchema: { question: z.string().describe('What to ask'), delay_ms: z.number().describe('Wait before asking') },
  }, async ({ question, delay_ms }) => {
    await new Promise((r) => setTimeout(r, delay_ms));
    try {
      const res = await server.server.elicitInput({ message: question, requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } });
      return { content: [{ type: 'text', text: `answered: ${res.action} ${res.content?.answer ?? ''}` }] };
    } catch (e) {
      return { content: [{ type: 'text', text: `ask failed: ${e.message}` }], isError: true };
    }
  });
}

await server.connect(new StdioServerTransport());
