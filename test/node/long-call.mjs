#!/usr/bin/env node
// The named case: a call that takes 90 s, from a real client whose request timeout is
// 60 s, against the hub with its default task_after (45 s). The client is the official
// TypeScript SDK 1.32 client with its DEFAULT request timeout (DEFAULT_REQUEST_TIMEOUT_MSEC,
// 60 000 ms; the timeout Claude Code and Gemini CLI inherit) on `switchboard connect` to a
// running hub. It calls exec with `sleep 90; echo done`: the hub must hand back a task handle
// before the client's 60 s are up (not a timeout); the client disconnects, reconnects as a new
// session under the same client name, waits, and collects the finished result with tasks_get.
// Then the hub is stopped and started again on the same data directories, and the same client
// collects the same result from the new hub process.
//
// This takes about 95 s of wall time by design: the call must outlive the 60 s timeout.
//
// Usage: node long-call.mjs <switchboard-binary>. Output: progress lines on stderr, one JSON
// line on stdout; exit status 1 on failure.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';

import { privateEnv } from '../../build/bench/lib.mjs';

const bin = process.argv[2];
if (!bin || !fs.existsSync(bin)) {
  console.error('usage: node long-call.mjs <switchboard-binary>');
  process.exit(2);
}
const CLIENT_NAME = 'sdk-long-call';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-node-long-'));
const workspace = path.join(tmp, 'workspace');
fs.mkdirSync(workspace);
const env = privateEnv(tmp);
const sock = path.join(tmp, 'hub', 'mcp.sock');
const log = (msg) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${msg}`);
const t0 = Date.now();
const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// startHub starts `switchboard serve` on the socket (no config file: task_after is the
// default) and resolves once it listens.
async function startHub() {
  const child = spawn(bin, ['serve', `--unix=${sock}`, '--workspace', workspace], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hub not listening after 30 s; stderr:\n${stderr}`)), 30_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (/unix listening on /.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`hub exited early (code ${code}, signal ${sig}); stderr:\n${stderr}`));
    });
  });
  child.stderr.resume();
  return child;
}

async function stopHub(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

// connect opens a new session of the same client (same name, through `switchboard connect`,
// as an agent CLI's server entry would).
async function connect() {
  const transport = new StdioClientTransport({ command: bin, args: ['connect', '--socket', sock], env, stderr: 'pipe', cwd: workspace });
  const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
  await client.connect(transport);
  await client.listTools(); // the SDK learns the output schemas and checks results against them
  return client;
}

// collect polls tasks_get (each call with the SDK's default timeout) until the task is done.
async function collect(client, taskId, deadlineMs) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const r = await client.callTool({ name: 'tasks_get', arguments: { task_id: taskId } });
    if (r.structuredContent?.done || Date.now() > end) return r;
    await sleep(1000);
  }
}

const out = { defaultTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MSEC };
let hub;
try {
  hub = await startHub();
  log('hub started');
  let client = await connect();
  const start = Date.now();
  // No RequestOptions: the SDK's default 60 s timeout applies, as in the agents built on it.
  const handle = await client.callTool({
    name: 'exec',
    arguments: { command: 'sh', args: ['-c', 'sleep 90; echo done'], timeout: 120 },
  });
  out.handleMs = Date.now() - start;
  out.taskId = handle._meta?.['switchboard/task_id'];
  out.handleText = text(handle);
  log(`handle after ${out.handleMs} ms: ${out.taskId}`);
  await client.close();

  // A new session of the same client: the work went on without it.
  client = await connect();
  const mid = await client.callTool({ name: 'tasks_get', arguments: { task_id: out.taskId } });
  out.reconnectStatus = mid.structuredContent?.status;
  log(`reconnected: ${out.reconnectStatus}`);
  const last = await collect(client, out.taskId, 90_000);
  out.doneMs = Date.now() - start;
  out.finalStatus = last.structuredContent?.status;
  out.finalText = text(last);
  out.finalStdout = last.structuredContent?.structured_content?.stdout;
  out.exitCode = last.structuredContent?.structured_content?.exit_code;
  log(`collected after ${out.doneMs} ms: ${out.finalStatus}`);
  await client.close();

  // The finished result outlives the hub process.
  await stopHub(hub);
  hub = await startHub();
  log('hub restarted');
  client = await connect();
  const again = await client.callTool({ name: 'tasks_get', arguments: { task_id: out.taskId } });
  out.restartStatus = again.structuredContent?.status;
  out.restartStdout = again.structuredContent?.structured_content?.stdout;
  await client.close();

  const checks = {
    'the default timeout is 60 s': out.defaultTimeoutMs === 60_000,
    'the handle came before the client timeout': out.handleMs < out.defaultTimeoutMs,
    'the handle came after task_after (45 s)': out.handleMs >= 45_000,
    'the handle names its task': Boolean(out.taskId) && out.handleText.includes(out.taskId),
    'still working at the reconnect': out.reconnectStatus === 'working',
    'the command ran its 90 s': out.doneMs >= 90_000,
    'completed': out.finalStatus === 'completed',
    'done in the output': out.finalText.includes('done') && out.finalStdout === 'done\n',
    'exit code 0': out.exitCode === 0,
    'completed after a restart': out.restartStatus === 'completed' && out.restartStdout === 'done\n',
  };
  out.failed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name);
  out.ok = out.failed.length === 0;
} catch (err) {
  out.ok = false;
  out.error = err?.stack ?? String(err);
} finally {
  if (hub) await stopHub(hub);
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
