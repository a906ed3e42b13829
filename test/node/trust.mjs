#!/usr/bin/env node
// Trust features through clients we did not write: the official TypeScript MCP SDK drives a real
// `switchboard` binary. One client declares elicitation and roots (over stdio and Streamable
// HTTP); another declares neither (over the Unix socket) and is answered through the headless
// dashboard's /api. Checks: deny, ask → accept / decline / timeout by elicitation, dashboard
// approval and denial, ask timeout with progress keeping the client's request alive, roots
// granted by [roots] allow, a root declined, roots/list_changed, and a policy reload.
//
// Usage: node trust.mjs <switchboard-binary>
// Output: TAP; exit status 1 when any check fails.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';

import { privateEnv, stopChild } from '../../build/bench/lib.mjs';

const REQUEST_TIMEOUT_MS = 20_000;

let testNo = 0;
let failures = 0;
class CheckError extends Error {}
function check(cond, msg) {
  if (!cond) throw new CheckError(msg);
}
async function step(name, fn) {
  testNo++;
  try {
    await fn();
    console.log(`ok ${testNo} - ${name}`);
  } catch (err) {
    failures++;
    console.log(`not ok ${testNo} - ${name}`);
    for (const line of String(err instanceof CheckError ? err.message : err?.stack ?? err).split('\n')) console.log(`  # ${line}`);
  }
}

const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function call(client, name, args, opts = {}) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS, ...opts });
}
async function callOK(client, name, args, opts) {
  const res = await call(client, name, args, opts);
  check(!res.isError, `${name}(${JSON.stringify(args)}) failed: ${textOf(res)}`);
  return res;
}
async function callErr(client, name, args, opts) {
  const res = await call(client, name, args, opts);
  check(res.isError === true, `${name}(${JSON.stringify(args)}): want a tool error, got ${JSON.stringify(res)}`);
  return textOf(res);
}

// A client over a raw Unix socket (newline-delimited JSON-RPC).
class UnixSocketTransport {
  constructor(p) {
    this.path = p;
    this.buf = '';
  }
  start() {
    return new Promise((resolve, reject) => {
      this.socket = net.connect(this.path);
      this.socket.setEncoding('utf8');
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
      this.socket.on('data', (chunk) => {
        this.buf += chunk;
        let nl;
        while ((nl = this.buf.indexOf('\n')) >= 0) {
          const line = this.buf.slice(0, nl);
          this.buf = this.buf.slice(nl + 1);
          if (line.trim()) this.onmessage?.(deserializeMessage(line));
        }
      });
      this.socket.on('close', () => this.onclose?.());
    });
  }
  send(m) {
    return new Promise((resolve, reject) => this.socket.write(serializeMessage(m), (e) => (e ? reject(e) : resolve())));
  }
  async close() {
    this.socket?.end();
  }
}

// The eliciting client: answers elicitation by a rule the test sets, and lists its roots.
function elicitingClient(state) {
  const client = new Client({ name: 'ts-trust-client', version: '1.0.0' }, { capabilities: { elicitation: {}, roots: { listChanged: true } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    state.asked.push(req.params.message);
    const answer = state.answer(req.params.message);
    if (answer === 'hang') {
      await sleep(6000);
      return { action: 'accept' };
    }
    return { action: answer }; // accept carries no content: the hub's form has no fields
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: state.roots.map((d) => ({ uri: `file://${d}`, name: path.basename(d) })) }));
  return client;
}

async function elicitingSuite(label, transport, dirs, ws) {
  const state = { asked: [], roots: [dirs.project, dirs.other], answer: () => 'accept' };
  const client = elicitingClient(state);
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  const t = (name, fn) => step(`${label}: ${name}`, fn);
  try {
    await t('deny: a tool error naming the rule; nothing deleted', async () => {
      fs.writeFileSync(path.join(dirs.project, `${label}-keep.txt`), 'x');
      const text = await callErr(client, 'file_delete', { path: `${label}-keep.txt` });
      check(text.includes('denied by rule 1 (tool="file_delete" → deny)'), `message: ${text}`);
      check(fs.existsSync(path.join(dirs.project, `${label}-keep.txt`)), 'the file was deleted');
    });

    await t('roots granted: relative paths resolve in the first root (inside [roots] allow), nobody asked', async () => {
      await callOK(client, 'file_write', { path: `${label}.txt`, content: 'in root' });
      check(fs.readFileSync(path.join(dirs.project, `${label}.txt`), 'utf8') === 'in root', 'not written in the first root');
      check(!fs.existsSync(path.join(ws, `${label}.txt`)), 'written in the hub workspace');
      check(state.asked.length === 0, `asked: ${state.asked}`);
    });

    await t('ask → accept (empty content) runs the call once; the question shows tool, arguments and workspace', async () => {
      state.answer = () => 'accept';
      await callOK(client, 'file_write', { path: `ask/${label}-a.txt`, content: 'yes' });
      check(fs.readFileSync(path.join(dirs.project, 'ask', `${label}-a.txt`), 'utf8') === 'yes', 'accepted write missing');
      const q = state.asked.at(-1) ?? '';
      check(q.includes('ts-trust-client wants to run the tool file_write'), `question: ${q}`);
      check(q.includes(`path: ask/${label}-a.txt`) && q.includes('content: <3 bytes>'), `arguments not summarised: ${q}`);
      check(q.includes(`Workspace: ${dirs.project}`), `workspace not shown: ${q}`);
    });

    await t('ask → decline refuses the call', async () => {
      state.answer = () => 'decline';
      const text = await callErr(client, 'file_write', { path: `ask/${label}-d.txt`, content: 'no' });
      check(text.includes('was declined') && text.includes('the client answered decline'), `message: ${text}`);
      check(!fs.existsSync(path.join(dirs.project, 'ask', `${label}-d.txt`)), 'declined write happened');
    });

    await t('ask → cancel refuses the call', async () => {
      state.answer = () => 'cancel';
      const text = await callErr(client, 'file_write', { path: `ask/${label}-c.txt`, content: 'no' });
      check(text.includes('the client answered cancel'), `message: ${text}`);
    });

    await t('ask → no answer within ask_timeout is denied with that reason', async () => {
      state.answer = () => 'hang';
      const text = await callErr(client, 'file_write', { path: `ask/${label}-t.txt`, content: 'late' });
      check(text.includes('timed out') && text.includes('no answer within 3s (policy.ask_timeout)'), `message: ${text}`);
      check(!fs.existsSync(path.join(dirs.project, 'ask', `${label}-t.txt`)), 'timed-out write happened');
    });

    await t('roots declined: a call in that root fails naming it and how to allow it; asked once per session', async () => {
      state.answer = (m) => (m.includes(dirs.other) ? 'decline' : 'accept');
      const before = state.asked.length;
      for (let i = 0; i < 2; i++) {
        const text = await callErr(client, 'file_write', { path: path.join(dirs.other, 'x.txt'), content: 'no' });
        check(text.includes(`root ${dirs.other} was declined`) && text.includes('[roots] allow'), `message: ${text}`);
      }
      check(state.asked.length === before + 1, `asked ${state.asked.length - before} times`);
      check(state.asked.at(-1).includes(`wants to use ${dirs.other}`), `question: ${state.asked.at(-1)}`);
      check(!fs.existsSync(path.join(dirs.other, 'x.txt')), 'written in a declined root');
    });

    await t('notifications/roots/list_changed: the new roots are read; an accepted root becomes the workspace', async () => {
      state.roots = [dirs.third];
      state.answer = () => 'accept';
      await client.sendRootsListChanged();
      let last = '';
      for (let i = 0; i < 50; i++) {
        const res = await call(client, 'file_write', { path: `${label}-third.txt`, content: 'third' });
        if (!res.isError) break;
        last = textOf(res);
        await sleep(100);
      }
      check(fs.existsSync(path.join(dirs.third, `${label}-third.txt`)), `not written in the new root: ${last}`);
    });
  } finally {
    await client.close().catch(() => {});
  }
}

async function startHeadless(bin, args, env) {
  const child = spawn(bin, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const want = [/unix on unix:\/\/(\S+)/, /http on (http:\/\/\S+)/, /dashboard at (http:\/\/\S+)/];
  const m = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hub not ready; stderr:\n${stderr}`)), 20_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => {
      stderr += c;
      const found = want.map((re) => stderr.match(re));
      if (found.every(Boolean)) {
        clearTimeout(timer);
        resolve(found.map((f) => f[1]));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hub exited (${code}); stderr:\n${stderr}`));
    });
  });
  child.stderr.resume();
  return { child, sock: m[0], http: m[1], dashboard: new URL(m[2]), stderr: () => stderr };
}

async function main() {
  const bin = process.argv[2];
  if (!bin || !fs.existsSync(bin)) {
    console.error('usage: node trust.mjs <switchboard-binary>');
    process.exit(2);
  }
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sb-trust-')));
  const ws = path.join(tmp, 'workspace');
  const dirs = {
    project: path.join(tmp, 'allowed', 'project'),
    other: path.join(tmp, 'other'),
    third: path.join(tmp, 'third'),
  };
  for (const d of [ws, ...Object.values(dirs)]) fs.mkdirSync(d, { recursive: true });
  const env = privateEnv(tmp);
  delete env.DISPLAY;
  const cfgPath = path.join(tmp, 'config.toml');
  const token = `trust-${process.pid}`;
  const policyText = (extra = '') => `data_dir = "${path.join(tmp, 'data')}"
[unix]
enabled = true
path = "${path.join(tmp, 'hub', 'mcp.sock')}"
[http]
enabled = true
addr = "127.0.0.1:0"
token = "${token}"
[ide]
url = "ws://127.0.0.1:1/ws"
[policy]
default = "allow"
ask_timeout = "3s"
[[policy.rules]]
tool = "file_delete"
action = "deny"
[[policy.rules]]
tool = "file_write"
args = { path = "ask/*" }
action = "ask"
${extra}
[roots]
allow = ["${path.join(tmp, 'allowed')}"]
`;
  fs.writeFileSync(cfgPath, policyText());

  console.log('TAP version 14');
  let hub;
  try {
    // stdio: a hub of its own, with the same config.
    const stdio = new StdioClientTransport({ command: bin, args: ['serve', '--stdio', '--no-hub', '--config', cfgPath, '--workspace', ws], env, stderr: 'pipe' });
    await elicitingSuite('stdio', stdio, dirs, ws);

    hub = await startHeadless(bin, ['--config', cfgPath, '--workspace', ws], env);
    const http = new StreamableHTTPClientTransport(new URL(hub.http), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await elicitingSuite('http', http, dirs, ws);

    // A client with neither elicitation nor roots, over the Unix socket: the hub's workspace,
    // questions answered on the dashboard (its /api, with the dashboard token).
    const dashToken = hub.dashboard.searchParams.get('token');
    const api = async (method, p, body) => {
      const res = await fetch(new URL(p, hub.dashboard.origin), {
        method,
        headers: { Authorization: `Bearer ${dashToken}`, 'Content-Type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: await res.json() };
    };
    const waitPending = async () => {
      for (let i = 0; i < 100; i++) {
        const { body } = await api('GET', '/api/approvals');
        if (body.approvals?.length) return body.approvals[0];
        await sleep(50);
      }
      throw new CheckError('no pending approval on /api/approvals');
    };
    const plain = new Client({ name: 'ts-plain-client', version: '1.0.0' }, { capabilities: {} });
    await plain.connect(new UnixSocketTransport(hub.sock), { timeout: REQUEST_TIMEOUT_MS });
    try {
      await step('unix, no elicitation: dashboard approval via /api lets the call run', async () => {
        const pending = callOK(plain, 'file_write', { path: 'ask/dash.txt', content: 'approved' });
        const a = await waitPending();
        check(a.tool === 'file_write' && a.client === 'ts-plain-client' && a.arguments.includes('path: ask/dash.txt') && a.requestedAt, `approval: ${JSON.stringify(a)}`);
        const res = await api('POST', `/api/approvals/${a.id}`, { decision: 'allow' });
        check(res.status === 200, `POST: ${JSON.stringify(res)}`);
        await pending;
        check(fs.readFileSync(path.join(ws, 'ask', 'dash.txt'), 'utf8') === 'approved', 'not written in the hub workspace');
      });

      await step('unix, no elicitation: dashboard denial refuses the call', async () => {
        const pending = callErr(plain, 'file_write', { path: 'ask/no.txt', content: 'x' });
        const a = await waitPending();
        check((await api('POST', `/api/approvals/${a.id}`, { decision: 'deny' })).status === 200, 'POST deny failed');
        const text = await pending;
        check(text.includes('declined on the dashboard'), `message: ${text}`);
      });

      await step('unix, no elicitation: unanswered until ask_timeout → denied; progress kept a 1.5 s request timeout from firing', async () => {
        let progress = 0;
        const text = await callErr(plain, 'file_write', { path: 'ask/late.txt', content: 'x' }, {
          timeout: 1500, resetTimeoutOnProgress: true, onprogress: () => { progress++; },
        });
        check(text.includes('no answer within 3s (policy.ask_timeout)'), `message: ${text}`);
        check(progress >= 2, `only ${progress} progress notifications`);
        const { body } = await api('GET', '/api/approvals');
        check(body.approvals.length === 0, `left pending: ${JSON.stringify(body.approvals)}`);
      });

      await step('policy reload: a rule added to the config file applies to connected clients', async () => {
        await callOK(plain, 'lang_list', {});
        fs.writeFileSync(cfgPath, policyText('[[policy.rules]]\ntool = "lang_*"\naction = "deny"\n'));
        let text = '';
        for (let i = 0; i < 100 && !text; i++) {
          const res = await call(plain, 'lang_list', {});
          if (res.isError) text = textOf(res);
          else await sleep(100);
        }
        check(text.includes('denied by rule 3 (tool="lang_*" → deny)'), `after reload: ${text}`);
        fs.writeFileSync(cfgPath, policyText('[[policy.rules]]\ntool = "lang_*"\naction = "maybe"\n'));
        let status;
        for (let i = 0; i < 100; i++) {
          status = (await api('GET', '/api/approvals')).body.policy;
          if (status?.error) break;
          await sleep(100);
        }
        check(status?.error?.includes('policy.rules[3].action'), `policy status: ${JSON.stringify(status)}`);
        check((await call(plain, 'lang_list', {})).isError, 'an invalid file must keep the last good policy');
      });
    } finally {
      await plain.close().catch(() => {});
    }
  } catch (err) {
    failures++;
    testNo++;
    console.log(`not ok ${testNo} - harness`);
    for (const line of String(err?.stack ?? err).split('\n')) console.log(`  # ${line}`);
    if (hub) console.log(`  # hub stderr:\n${hub.stderr().replace(/^/gm, '  #   ')}`);
  } finally {
    if (hub) await stopChild(hub.child);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`1..${testNo}`);
  console.log(`# pass ${testNo - failures}`);
  console.log(`# fail ${failures}`);
  process.exitCode = failures ? 1 : 0;
}

await main();
