#!/usr/bin/env node
// Task handles through the official TypeScript SDK client (the client under Claude Code and
// Gemini CLI): a `switchboard serve --stdio` with task_after = "1s" answers an exec that runs 4 s
// with a task handle the SDK passes to its caller (its output-schema check included: exec
// declares one), before the command ends; tasks_get, whose structured result the SDK checks
// against tasks_get's own schema, then says working and finally returns exec's output.
//
// Usage: node tasks.mjs <switchboard-binary>. Output: one JSON line; exit status 1 on failure.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { privateEnv } from '../../build/bench/lib.mjs';

const bin = process.argv[2];
if (!bin || !fs.existsSync(bin)) {
  console.error('usage: node tasks.mjs <switchboard-binary>');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-node-tasks-'));
const workspace = path.join(tmp, 'workspace');
fs.mkdirSync(workspace);
const env = privateEnv(tmp);
fs.mkdirSync(path.join(env.XDG_CONFIG_HOME, 'switchboard'), { recursive: true });
fs.writeFileSync(path.join(env.XDG_CONFIG_HOME, 'switchboard', 'config.toml'), 'task_after = "1s"\n');

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const transport = new StdioClientTransport({ command: bin, args: ['serve', '--stdio', '--workspace', workspace], env, stderr: 'pipe' });
const client = new Client({ name: 'sdk-tasks', version: '1.0.0' });
const out = {};
try {
  await client.connect(transport);
  await client.listTools(); // the SDK learns exec's output schema here and checks results against it
  const start = Date.now();
  const handle = await client.callTool({ name: 'exec', arguments: { command: 'sh', args: ['-c', 'sleep 4; echo collected-through-tasks_get'] } });
  out.handleMs = Date.now() - start;
  out.handleText = text(handle);
  out.taskId = handle._meta?.['switchboard/task_id'];
  out.handleIsError = handle.isError === true;
  const first = await client.callTool({ name: 'tasks_get', arguments: { task_id: out.taskId } });
  out.firstStatus = first.structuredContent?.status;
  let last;
  for (let i = 0; i < 40; i++) {
    last = await client.callTool({ name: 'tasks_get', arguments: { task_id: out.taskId } });
    if (last.structuredContent?.done) break;
    await sleep(250);
  }
  out.finalStatus = last.structuredContent?.status;
  out.finalText = text(last);
  out.finalStdout = last.structuredContent?.structured_content?.stdout;
  const ok = out.handleMs < 4000 && out.taskId && out.handleText.includes(`tasks_get {"task_id": "${out.taskId}"}`) &&
    out.firstStatus === 'working' && out.finalStatus === 'completed' && out.finalText.includes('collected-through-tasks_get') &&
    out.finalStdout === 'collected-through-tasks_get\n';
  out.ok = Boolean(ok);
} catch (err) {
  out.ok = false;
  out.error = err?.stack ?? String(err);
} finally {
  await client.close().catch(() => {});
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
